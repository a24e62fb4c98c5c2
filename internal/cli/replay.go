package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
)

func replayCmd() *cobra.Command {
	var pf policyFlags
	var db, stateDir string
	var all, noVerify bool
	c := &cobra.Command{
		Use:   "replay SESSION",
		Short: "Re-decide a recorded session under today's policy",
		Long: `replay reads every tool call of SESSION from the event log, decides it
again under the policy as it is now, and prints each call whose decision
would change (with --all, every call), then one line that counts them.

What is compared is what the policy decided then with what it decides
now. A call the policy asked about is compared as ask, whatever the
person (or a hook, the classifier, a timeout) answered, and so is a call
allowed by an earlier answer of the session (a session approval or a
lease): a person's answer is no policy, and replay does not repeat it.
It exits 1 when a decision changes.

First it checks the session's chain of hashes under the approver token
(from --state-dir), as audit --verify does: a session whose events were
edited, deleted or reordered since they were written is reported on
standard error and not replayed (exit 1). --no-verify skips the check.`,
		Example: `  # would today's policy decide session s1 as it was decided?
  toolgate replay s1

  # the same under a rule you are about to add
  toolgate replay s1 --deny 'Bash(git push:*)' --all`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			eng, err := pf.engine(c)
			if err != nil {
				return err
			}
			var key []byte
			if !noVerify {
				if key, err = chainKey(stateDir); err != nil {
					return err
				}
			}
			store, err := openStore(c.Context(), db, true, nil)
			if err != nil {
				return err
			}
			defer store.Close()
			verified := ""
			if !noVerify {
				var report strings.Builder
				rep, err := verifyLog(c.Context(), &report, store, key, args[0])
				if err != nil {
					return err
				}
				if !rep.OK() {
					fmt.Fprint(c.ErrOrStderr(), report.String())
					return &exitError{1, fmt.Errorf("session %s was changed after it was written (%d problem(s)): not replayed", termtext.Escape(args[0]), len(rep.Problems))}
				}
				verified = fmt.Sprintf(" (its %d events verified)", rep.Events)
			}
			type call struct {
				ID        string          `json:"toolCallId"`
				Tool      string          `json:"tool"`
				Input     json.RawMessage `json:"input"`
				in        map[string]any
				Cwd       string `json:"cwd"`
				Workspace string `json:"workspace"`
				Agent     string `json:"agent"`
				Parent    string `json:"parentAgent"`
			}
			var calls []call
			was := map[string]replayResolved{}
			asked := map[string]bool{}
			requested := map[string]bool{}
			f := eventlog.Filter{Session: args[0], Types: []eventlog.Type{eventlog.TypeToolCallRequested, eventlog.TypePermissionRequested, eventlog.TypePermissionResolved}}
			for e, err := range store.Query(c.Context(), f) {
				if err != nil {
					return err
				}
				var k call
				err := json.Unmarshal(e.Payload, &k)
				if err == nil && len(k.Input) > 0 {
					err = json.Unmarshal(k.Input, &k.in)
				}
				if err != nil && e.Type == eventlog.TypeToolCallRequested {
					return fmt.Errorf("session %s seq %d: the tool call cannot be read: %v", termtext.Escape(e.Session), e.Seq, err)
				}
				if err == nil && !requested[k.ID] && gate.CarriesCall(e.Type, k.Input) {
					calls = append(calls, k)
					requested[k.ID] = k.ID != ""
				}
				switch e.Type {
				case eventlog.TypePermissionRequested:
					var r replayResolved
					if json.Unmarshal(e.Payload, &r) == nil && r.ID != "" {
						asked[r.ID] = true
					}
				case eventlog.TypePermissionResolved:
					var r replayResolved
					if json.Unmarshal(e.Payload, &r) == nil && r.ID != "" {
						was[r.ID] = r
					}
				}
			}
			if len(calls) == 0 {
				return usageError("session %s has no tool calls in %s", termtext.Escape(args[0]), db)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			head := false
			changed := 0
			for _, k := range calls {
				d := eng.Check(c.Context(), &engine.Request{Tool: k.Tool, Input: k.in, Cwd: k.Cwd, Workspace: k.Workspace,
					Agent: k.Agent, Parent: k.Parent, Session: args[0]})
				then, thenText := policyThen(was[k.ID], asked[k.ID])
				same := then == d.Decision.String()
				if !same {
					changed++
				}
				if !same || all {
					if !head {
						fmt.Fprintln(tw, "CALL\tTOOL\tTHEN\tNOW\tREASON NOW\tINPUT")
						head = true
					}
					in, _ := json.Marshal(k.in)
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Args(k.ID, k.Tool, thenText, d.Decision.String(), string(d.Reason), termtext.OneLine(string(in), 200))...)
				}
			}
			_ = tw.Flush()
			fmt.Fprintf(c.OutOrStdout(), "%d of %d calls of session %s decide differently under today's policy%s\n", changed, len(calls), termtext.Escape(args[0]), verified)
			if changed > 0 {
				return silentExit(1)
			}
			return nil
		},
	}
	pf.register(c)
	c.Flags().StringVar(&db, "db", DefaultLogPath(), "event log (SQLite file)")
	c.Flags().BoolVar(&all, "all", false, "print every call, not only those that change")
	c.Flags().StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "the server's state directory, whose approver token the session's events are checked with")
	c.Flags().BoolVar(&noVerify, "no-verify", false, "replay without checking that the session's events are as they were written")
	return c
}

// replayResolved is what replay reads of a permission.resolved event.
type replayResolved struct {
	ID       string `json:"toolCallId"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Actor    string `json:"actor"`
	Via      string `json:"via"`
}

// answeredReasons are the reasons of a decision that followed an ask of
// the policy: an answer, the lack of one, or an earlier answer reused.
var answeredReasons = map[string]bool{
	string(engine.ReasonUserApproved): true, string(engine.ReasonUserDenied): true,
	string(engine.ReasonApprovalTimeout): true, string(engine.ReasonApprovalCancelled): true,
	string(engine.ReasonApproverError): true, string(engine.ReasonNoApprover): true,
	string(engine.ReasonHeadless): true, string(engine.ReasonHook): true,
	string(engine.ReasonClassifier): true, string(engine.ReasonPriorApproval): true,
	string(engine.ReasonLease): true,
}

// policyThen returns what the policy decided about a call then, for
// comparing with today's policy, and how to show it: a call that was
// asked is ask, whoever answered and however.
func policyThen(r replayResolved, asked bool) (string, string) {
	if r.Decision == "" {
		if asked {
			return "ask", "ask (unanswered)"
		}
		return "", "-"
	}
	if !asked && !answeredReasons[r.Reason] && (r.Actor == "policy" || r.Actor == "") {
		return r.Decision, r.Decision
	}
	by := r.Actor
	switch {
	case r.Reason == string(engine.ReasonPriorApproval):
		by = "session approval"
	case r.Reason == string(engine.ReasonLease):
		by = "lease"
	case by == "":
		by = "policy"
	case r.Via != "":
		by += " via " + r.Via
	}
	return "ask", fmt.Sprintf("ask (%s: %s)", by, r.Decision)
}
