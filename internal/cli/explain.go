package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/risk"
)

func explainCmd() *cobra.Command {
	var pf policyFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "explain",
		Short: "Show every pipeline step for one tool call read as JSON on stdin",
		Args:  cobra.NoArgs,
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
				return enc.Encode(d)
			}
			WriteExplain(c.OutOrStdout(), req, d)
			return nil
		},
	}
	pf.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the decision and its trace as JSON")
	return c
}

// WriteExplain prints a decision's trace for a person.
func WriteExplain(w io.Writer, req *engine.Request, d *engine.Decision) {
	t := d.Trace
	var input strings.Builder
	enc := json.NewEncoder(&input)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(req.Input)
	fmt.Fprintf(w, "request   %s %s\n", req.Tool, strings.TrimSpace(input.String()))
	if t != nil && t.Canonical != "" {
		fmt.Fprintf(w, "tool      %s\n", t.Canonical)
	}
	if t != nil && t.Root != "" {
		fmt.Fprintf(w, "cwd       %s\n", t.Cwd)
		fmt.Fprintf(w, "project   %s (found by %s)\n", t.Root, t.RootFrom)
		fmt.Fprintf(w, "policy    %s\n", t.Policy)
		for _, f := range t.From {
			fmt.Fprintf(w, "          %s\n", f)
		}
		for _, n := range t.Notes {
			fmt.Fprintf(w, "note      %s\n", n)
		}
	}
	if t != nil {
		for i, u := range t.Units {
			fmt.Fprintf(w, "\n[%d/%d] %s\n", i+1, len(t.Units), u.Label)
			if c := u.Command; c != nil {
				fmt.Fprintf(w, "  program   %s\n", c.Name)
				if len(c.Args) > 0 {
					fmt.Fprintf(w, "  args      %s\n", quoteWords(c.Args))
				}
				if sp := risk.Lookup(c.Spec); sp != nil {
					fmt.Fprintf(w, "  spec      %s\n", strings.TrimPrefix(sp.Describe(), "spec "))
				}
				if c.UnknownOption != "" {
					fmt.Fprintf(w, "  unknown   option %s is not in the spec of %s\n", c.UnknownOption, c.Spec)
				}
				if len(c.Wrappers) > 0 {
					fmt.Fprintf(w, "  wrappers  %s\n", strings.Join(c.Wrappers, ", "))
				}
				if c.Via != "" {
					fmt.Fprintf(w, "  via       %s\n", c.Via)
				}
				dir := c.Dir
				if dir == "" {
					dir = "(unknown)"
				}
				fmt.Fprintf(w, "  dir       %s\n", dir)
			}
			for _, p := range u.Reads {
				fmt.Fprintf(w, "  reads     %s\n", pathLine(p))
			}
			for _, p := range u.Writes {
				verb := "writes   "
				if p.Delete {
					verb = "deletes  "
				}
				fmt.Fprintf(w, "  %s %s\n", verb, pathLine(p))
			}
			for _, h := range u.Hosts {
				line := h.Host
				if h.Private != "" {
					line += " (" + h.Private + ")"
				}
				fmt.Fprintf(w, "  host      %s\n", line)
			}
			for _, p := range u.Code {
				fmt.Fprintf(w, "  code      %s\n", pathLine(p))
			}
			if u.CodeUnseen != "" {
				fmt.Fprintf(w, "  code      not all seen: %s (no earlier approval covers the call)\n", u.CodeUnseen)
			}
			if len(u.Secrets) > 0 {
				fmt.Fprintf(w, "  secrets   %s (in data sent out)\n", strings.Join(u.Secrets, ", "))
			}
			fmt.Fprintf(w, "  risk      %s", u.Risk)
			if len(u.RiskWhy) > 0 {
				fmt.Fprintf(w, " — %s", strings.Join(u.RiskWhy, "; "))
			}
			fmt.Fprintln(w)
			for _, s := range u.Steps {
				fmt.Fprintf(w, "  %-12s %-5s %s\n", s.Stage, s.Result, s.Detail)
			}
			fmt.Fprintf(w, "  => %s (%s)\n", u.Decision, u.Reason)
		}
		for _, s := range t.Steps {
			fmt.Fprintf(w, "\n%-14s %-5s %s\n", s.Stage, s.Result, s.Detail)
		}
	}
	fmt.Fprintf(w, "\ndecision  %s\nreason    %s\nrisk      %s\nsource    %s\n", d.Decision, d.Reason, d.Risk, d.Source)
	if d.Rule != "" {
		fmt.Fprintf(w, "rule      %s (%s)\n", d.Rule, d.RuleOrigin)
	}
	fmt.Fprintf(w, "message   %s\n", d.Message)
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
