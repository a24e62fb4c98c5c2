package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/risk"
)

func explainCmd() *cobra.Command {
	var pf policyFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "explain",
		Short: "Show every pipeline step for one tool call read as JSON on stdin",
		Long: `explain reads one request on stdin, as check does, decides it, and shows
how: each step of the pipeline (deny rules, sandbox, ask rules, the tool's
own check, safety checks, mode, allow rules, prior approvals, the default
table) with what it said, each part of a shell line with its risk and
effects (paths read, written and deleted, hosts reached), the rule that
decided with its file and line, and the version of the policy files. With
--json it prints the decision and its trace as JSON. It decides nothing
for real and records nothing. A request that is not valid (no tool, no
absolute cwd) is explained too, and explain exits 2.`,
		Example: `  # why is this command asked about?
  echo '{"tool":"Bash","input":{"command":"npm test && git push"},"cwd":"'"$PWD"'"}' | toolgate explain

  # the same under a rule you are about to add
  echo '{"tool":"Read","input":{"file_path":".env"},"cwd":"'"$PWD"'"}' | toolgate explain --allow 'Read(./.env)'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			eng, err := pf.engine(c)
			if err != nil {
				return err
			}
			req, err := readRequest(c)
			if err != nil {
				return err
			}
			d := eng.Explain(c.Context(), req)
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(d); err != nil {
					return err
				}
			} else {
				WriteExplain(c.OutOrStdout(), req, d)
			}
			if d.Reason == engine.ReasonInvalidRequest {
				return usageError("%s", d.Message) // the request itself is wrong
			}
			return nil
		},
	}
	pf.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the decision and its trace as JSON")
	return c
}

// WriteExplain prints a decision's trace for a person, with control
// characters in what it shows escaped (see termtext.Escape).
func WriteExplain(w io.Writer, req *engine.Request, d *engine.Decision) {
	// Everything shown may come from the agent (commands, paths, hosts)
	// or from policy files: it is escaped for the terminal.
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, termtext.Args(args...)...) }
	t := d.Trace
	var input strings.Builder
	enc := json.NewEncoder(&input)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(req.Input)
	printf("request   %s %s\n", req.Tool, strings.TrimSpace(input.String()))
	if t != nil && t.Canonical != "" {
		printf("tool      %s\n", t.Canonical)
	}
	if t != nil && t.Root != "" {
		printf("cwd       %s\n", t.Cwd)
		printf("project   %s (found by %s)\n", t.Root, t.RootFrom)
		printf("policy    %s\n", t.Policy)
		for _, f := range t.From {
			printf("          %s\n", f)
		}
		if t.Version != "" {
			fmt.Fprintf(w, "version   %s\n", t.Version)
		}
		for _, f := range t.Files {
			fmt.Fprintf(w, "file      %s\n", f)
		}
		for _, n := range t.Notes {
			printf("note      %s\n", n)
		}
	}
	if t != nil {
		for i, u := range t.Units {
			printf("\n[%d/%d] %s\n", i+1, len(t.Units), u.Label)
			if c := u.Command; c != nil {
				printf("  program   %s\n", c.Name)
				if len(c.Args) > 0 {
					printf("  args      %s\n", quoteWords(c.Args))
				}
				if sp := risk.Lookup(c.Spec); sp != nil {
					printf("  spec      %s\n", strings.TrimPrefix(sp.Describe(), "spec "))
				}
				if c.UnknownOption != "" {
					printf("  unknown   option %s is not in the spec of %s\n", c.UnknownOption, c.Spec)
				}
				if len(c.Wrappers) > 0 {
					printf("  wrappers  %s\n", strings.Join(c.Wrappers, ", "))
				}
				if c.Via != "" {
					printf("  via       %s\n", c.Via)
				}
				dir := c.Dir
				if dir == "" {
					dir = "(unknown)"
				}
				printf("  dir       %s\n", dir)
			}
			for _, p := range u.Reads {
				printf("  reads     %s\n", pathLine(p))
			}
			for _, p := range u.Writes {
				verb := "writes   "
				if p.Delete {
					verb = "deletes  "
				}
				printf("  %s %s\n", verb, pathLine(p))
			}
			for _, h := range u.Hosts {
				line := h.Host
				if h.Private != "" {
					line += " (" + h.Private + ")"
				}
				printf("  host      %s\n", line)
			}
			for _, p := range u.Code {
				fmt.Fprintf(w, "  code      %s\n", pathLine(p))
			}
			if u.CodeUnseen != "" {
				fmt.Fprintf(w, "  code      not all seen: %s (no earlier approval covers the call)\n", u.CodeUnseen)
			}
			if len(u.Secrets) > 0 {
				printf("  secrets   %s (in data sent out)\n", strings.Join(u.Secrets, ", "))
			}
			printf("  risk      %s", u.Risk)
			if len(u.RiskWhy) > 0 {
				printf(" — %s", strings.Join(u.RiskWhy, "; "))
			}
			fmt.Fprintln(w)
			for _, s := range u.Steps {
				printf("  %-12s %-5s %s\n", s.Stage, s.Result, s.Detail)
			}
			printf("  => %s (%s)\n", u.Decision, u.Reason)
		}
		for _, s := range t.Steps {
			printf("\n%-14s %-5s %s\n", s.Stage, s.Result, s.Detail)
		}
	}
	if t != nil && len(t.Hooks) > 0 {
		// explain runs no hook: it says which would run for the call.
		fmt.Fprintf(w, "\nhooks     for this tool, run by the gate (explain runs none; PermissionRequest only when the call would ask):\n")
		for _, h := range t.Hooks {
			printf("hook      %s\n", h)
		}
	}
	printf("\ndecision  %s\nreason    %s\nrisk      %s\nsource    %s\n", d.Decision, d.Reason, d.Risk, d.Source)
	if d.Rule != "" {
		printf("rule      %s (%s)\n", d.Rule, d.RuleOrigin)
	}
	printf("message   %s\n", d.Message)
}

func pathLine(p engine.PathFact) string {
	if p.Unknown {
		return p.Requested + " (not known until it runs)"
	}
	s := p.Requested
	if p.Real != p.Requested {
		s += " -> " + p.Real
	}
	s += " [" + p.Reason
	if p.Class != "ordinary" {
		s += ", " + p.Class
	}
	if p.Symlink {
		s += ", symlink"
	}
	return s + "]"
}

func quoteWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, " ")
}
