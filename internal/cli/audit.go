package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
)

// DefaultLogPath is where toolgate keeps its event log: events.db in the
// state directory ($XDG_STATE_HOME/toolgate, or ~/.local/state/toolgate).
func DefaultLogPath() string {
	dir := server.DefaultStateDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "events.db")
}

func auditCmd() *cobra.Command {
	var (
		db, session, since, until string
		types, decisions, tools   []string
		limit                     int
		asJSON, follow, verify    bool
		events                    bool
		stateDir                  string
	)
	c := &cobra.Command{
		Use:   "audit",
		Short: "Show the event log: who allowed what, when, by which rule",
		Long: `audit prints the decisions of the log: one row per tool call decided,
with when, the session, the agent (by the name of its token file in
--state-dir: agent for agent.token, ci for agent-ci.token), what was run (the command, path, URL
or MCP tool, cut to one line), the decision, who decided (a policy rule,
a stage of the policy such as the sandbox, a user via the terminal, the
web page, an answer link or the API, or the system) and the reason. A
question still waiting for a person is shown last, as ask. Rows are
oldest first. With --json each row is a JSON object on a line of its own.

--events prints the events themselves instead, one row each (--type
selects events and implies --events). What an agent posted
(session.started, turn.started, user.message, turn.completed) is never
shown or selected as a decision.

--since and --until take an RFC 3339 time or a duration back from now
(90m, 24h). With --follow audit keeps printing new decisions (or events)
until interrupted. Text from the log is printed with control characters
escaped (\x1b, \n).

With --verify, audit checks the log instead of printing it: every
session's events (or --session's) are chained by hashes keyed with the
approver token (read from --state-dir), and it reports each event that was
edited, deleted or reordered since it was written, with its session, seq
and event id, and exits 1 if any was. Events stored before the log was
chained are counted, not checked.`,
		Example: `  # what was decided in the last hour
  toolgate audit --since 1h

  # every deny of one session, as JSON Lines
  toolgate audit --session s1 --decision deny --json

  # the raw events, as they were written
  toolgate audit --events --session s1

  # check that nobody edited the log
  toolgate audit --verify`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if len(types) > 0 {
				events = true
			}
			f := eventlog.Filter{Session: session, Decisions: decisions, Tools: tools, Limit: limit}
			for _, t := range types {
				f.Types = append(f.Types, eventlog.Type(t))
			}
			for _, d := range decisions {
				if d != "allow" && d != "ask" && d != "deny" {
					return usageError("--decision %q: use allow, ask or deny", d)
				}
			}
			if limit < 0 {
				return usageError("--limit %d: use a count of 0 (all) or more", limit)
			}
			var err error
			if f.Since, err = parseWhen(since); err != nil {
				return usageError("--since: %v", err)
			}
			if f.Until, err = parseWhen(until); err != nil {
				return usageError("--until: %v", err)
			}
			var key []byte
			if verify {
				if follow {
					return usageError("--verify checks the log once; it does not go with --follow")
				}
				if key, err = chainKey(stateDir); err != nil {
					return err
				}
			}
			store, err := openStore(c.Context(), db, true, nil)
			if err != nil {
				return err
			}
			defer store.Close()
			if verify {
				rep, err := verifyLog(c.Context(), c.OutOrStdout(), store, key, session)
				if err != nil {
					return err
				}
				if !rep.OK() {
					return silentExit(1) // the report says what was changed, once
				}
				return nil
			}
			if !events {
				return auditDecisions(c.Context(), c.OutOrStdout(), store, f, asJSON, follow, server.AgentNames(stateDir))
			}
			out := newAuditWriter(c.OutOrStdout(), asJSON)
			ctx := c.Context()
			last := map[string]int64{}
			for e, err := range store.Query(ctx, f) {
				if err != nil {
					return err
				}
				out.write(e)
				last[e.Session] = max(last[e.Session], e.Seq)
			}
			out.flush()
			if !follow {
				return nil
			}
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			f.Limit = 0
			for e, err := range store.Subscribe(ctx, f) {
				if err != nil {
					if errors.Is(err, ctx.Err()) {
						return nil
					}
					return err
				}
				if e.Seq <= last[e.Session] {
					continue // already printed by the query
				}
				out.write(e)
				out.flush()
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&db, "db", DefaultLogPath(), "event log: a SQLite file or a postgres:// connection string")
	fl.StringVar(&session, "session", "", "only this session")
	fl.BoolVar(&events, "events", false, "print the raw events, one row each, instead of one row per decision")
	fl.StringSliceVar(&types, "type", nil, "only these event types (repeatable, or comma-separated); implies --events")
	fl.StringSliceVar(&decisions, "decision", nil, "only decisions that are one of these: allow, ask, deny")
	fl.StringSliceVar(&tools, "tool", nil, "only calls of these tools, as the agent named them (Bash, Read, ...)")
	fl.StringVar(&since, "since", "", "only what happened at or after this time (RFC 3339, or a duration back from now)")
	fl.StringVar(&until, "until", "", "only what happened before this time (RFC 3339, or a duration back from now)")
	fl.IntVar(&limit, "limit", 0, "at most this many rows (0: all)")
	fl.BoolVar(&asJSON, "json", false, "print JSON Lines")
	fl.BoolVar(&follow, "follow", false, "keep printing new decisions (or events) until interrupted")
	fl.BoolVar(&verify, "verify", false, "check that no event was edited, deleted or reordered, instead of printing them")
	fl.StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "the server's state directory: its approver token is what --verify checks with, and its agent token files name the agents")
	return c
}

// parseWhen reads an RFC 3339 time or a duration back from now.
func parseWhen(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration such as 24h", s)
	}
	return time.Now().Add(-d), nil
}

// auditWriter prints events as a table or as JSON Lines.
type auditWriter struct {
	json *json.Encoder
	tab  *tabwriter.Writer
	head bool
}

func newAuditWriter(w io.Writer, asJSON bool) *auditWriter {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return &auditWriter{json: enc}
	}
	return &auditWriter{tab: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (a *auditWriter) write(e eventlog.Event) {
	if a.json != nil {
		_ = a.json.Encode(e)
		return
	}
	if !a.head {
		fmt.Fprintln(a.tab, "TIME\tSESSION\tSEQ\tTYPE\tTOOL\tDECISION\tREASON\tACTOR\tRULE")
		a.head = true
	}
	// What an agent posted is its own account, never a decision: its
	// payload (under "content") fills no column of the gate's.
	var p struct{ Tool, Decision, Reason, Actor, Rule string }
	if !eventlog.PostedByAgent(e.Type) {
		_ = json.Unmarshal(e.Payload, &p)
	}
	fmt.Fprintf(a.tab, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Args(e.Time.UTC().Format(time.RFC3339), e.Session, e.Seq,
		string(e.Type), dash(p.Tool), dash(p.Decision), dash(p.Reason), dash(p.Actor), dash(p.Rule))...)
}

func (a *auditWriter) flush() {
	if a.tab != nil {
		_ = a.tab.Flush()
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// auditDecisions prints one row per decision of the events f selects
// (its types, decisions, tools and limit apply to the rows), and with
// follow keeps printing new ones until ctx ends or a signal comes.
func auditDecisions(ctx context.Context, w io.Writer, store eventlog.Store, f eventlog.Filter, asJSON, follow bool, agents map[string]string) error {
	rf := &rowFilter{decisions: f.Decisions, tools: f.Tools, limit: f.Limit}
	f.Types, f.Decisions, f.Tools, f.Limit = decisionTypes, nil, nil, 0
	rows := newDecisionRows(agents)
	out := newRowWriter(w, asJSON)
	last := map[string]int64{}
	for e, err := range store.Query(ctx, f) {
		if err != nil {
			return err
		}
		last[e.Session] = max(last[e.Session], e.Seq)
		if r, ok := rows.add(e); ok && rf.keep(r) {
			out.write(r)
		}
	}
	if !follow {
		for _, r := range rows.pending() {
			if rf.keep(r) {
				out.write(r)
			}
		}
		out.flush(true)
		return nil
	}
	out.flush(false)
	rows.asked = nil
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for e, err := range store.Subscribe(ctx, f) {
		if err != nil {
			if errors.Is(err, ctx.Err()) {
				return nil
			}
			return err
		}
		if e.Seq <= last[e.Session] {
			continue // already read by the query
		}
		if r, ok := rows.add(e); ok && rf.keep(r) {
			out.write(r)
			out.flush(false)
		}
	}
	return nil
}
