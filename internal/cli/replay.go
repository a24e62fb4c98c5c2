package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
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
would change (with --all, every call). A person's answer is compared
with what the policy alone decides today. It exits 1 when a decision
changes.

First it checks the session's chain of hashes under the approver token
(from --state-dir), as audit --verify does: a session whose events were
edited, deleted or reordered since they were written is reported and not
replayed (exit 1). --no-verify skips the check.`,
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
			if !noVerify {
				rep, err := verifyLog(c.Context(), c.ErrOrStderr(), store, key, args[0])
				if err != nil {
					return err
				}
				if !rep.OK() {
					return &exitError{1, fmt.Errorf("session %s was changed after it was written (%d problem(s)): not replayed", termtext.Escape(args[0]), len(rep.Problems))}
				}
			}
			type call struct {
				ID    string         `json:"toolCallId"`
				Tool  string         `json:"tool"`
				Input map[string]any `json:"input"`
				Cwd   string         `json:"cwd"`
			}
			type resolved struct {
				ID       string `json:"toolCallId"`
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
				Actor    string `json:"actor"`
			}
			var calls []call
			was := map[string]resolved{}
			f := eventlog.Filter{Session: args[0], Types: []eventlog.Type{eventlog.TypeToolCallRequested, eventlog.TypePermissionResolved}}
			for e, err := range store.Query(c.Context(), f) {
				if err != nil {
					return err
				}
				if e.Type == eventlog.TypeToolCallRequested {
					var k call
					if err := json.Unmarshal(e.Payload, &k); err != nil {
						return fmt.Errorf("session %s seq %d: %v", e.Session, e.Seq, err)
					}
					calls = append(calls, k)
					continue
				}
				var r resolved
				if json.Unmarshal(e.Payload, &r) == nil && r.ID != "" {
					was[r.ID] = r
				}
			}
			if len(calls) == 0 {
				return usageError("session %s has no tool calls in %s", termtext.Escape(args[0]), db)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CALL\tTOOL\tTHEN\tNOW\tREASON NOW\tINPUT")
			changed := 0
			for _, k := range calls {
				d := eng.Check(c.Context(), &engine.Request{Tool: k.Tool, Input: k.Input, Cwd: k.Cwd, Session: args[0]})
				then := was[k.ID]
				thenText := then.Decision
				if then.Actor != "" && then.Actor != "policy" {
					thenText += " (" + then.Actor + ")"
				}
				same := then.Decision == d.Decision.String() && (then.Actor == "policy" || then.Actor == "")
				if !same {
					changed++
				}
				if !same || all {
					in, _ := json.Marshal(k.Input)
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Args(k.ID, k.Tool, dash(thenText), d.Decision.String(), string(d.Reason), string(in))...)
				}
			}
			_ = tw.Flush()
			fmt.Fprintf(c.OutOrStdout(), "%d of %d calls decide differently under today's policy\n", changed, len(calls))
			if changed > 0 {
				return &exitError{1, fmt.Errorf("%d decision(s) would change", changed)}
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
