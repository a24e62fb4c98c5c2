package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelp: every command's help says what it does at length and shows
// an example, and no flag's default is said twice (once in its text and
// once by the flag package) or shows its text's quotes as a value name.
func TestHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		t.Run(c.CommandPath(), func(t *testing.T) {
			if c.Long == "" {
				t.Errorf("%s has no long help", c.CommandPath())
			}
			if c.Example == "" {
				t.Errorf("%s has no Example", c.CommandPath())
			}
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if strings.Contains(f.Usage, "(default ") && f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
					t.Errorf("--%s says its default twice: %q and %q", f.Name, f.Usage, f.DefValue)
				}
				if strings.Contains(f.Usage, "`") {
					t.Errorf("--%s: its help has backquotes, which the flag package shows as the value's name: %q", f.Name, f.Usage)
				}
			})
		})
		names := map[string]bool{}
		for _, s := range c.Commands() {
			if names[s.Name()] {
				t.Errorf("%s has two subcommands %s", c.CommandPath(), s.Name())
			}
			names[s.Name()] = true
			walk(s)
		}
	}
	walk(newRoot(nil))
	// The help printed shows them.
	for _, args := range [][]string{{"audit", "--help"}, {"login-link", "--help"}, {"explain", "--help"}, {"approve", "--help"}} {
		out, stderr, code := run(t, t.TempDir(), "", args...)
		if code != 0 || !strings.Contains(out, "Examples:") || strings.Contains(out, ") (default") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	out, _, _ := run(t, t.TempDir(), "", "approve", "--help")
	for _, key := range []string{"a  Allow once", "s  Allow for session", "p  Always allow in project", "u  Always allow for me", "d  Deny"} {
		if !strings.Contains(out, key) {
			t.Errorf("approve --help does not show the key %q:\n%s", key, out)
		}
	}
}

// TestSubcommandNames: each entry of subcommands is named as its command
// is, so that a line starting with a command's name gets a root holding
// that command; a line naming one gets that one alone, and any other line
// gets every command.
func TestSubcommandNames(t *testing.T) {
	for _, sub := range subcommands {
		c := sub.make()
		if c.Name() != sub.name || len(c.Aliases) > 0 {
			t.Errorf("subcommands names %q for the command %q (aliases %q)", sub.name, c.Name(), c.Aliases)
		}
		got := newRoot([]string{sub.name, "--help"}).Commands()
		if sub.name == "completion" {
			continue // checked below
		}
		if len(got) != 1 || got[0].Name() != sub.name {
			t.Errorf("newRoot(%s) has %d commands", sub.name, len(got))
		}
	}
	for _, args := range [][]string{nil, {"help", "hook"}, {"--version"}, {"hok"}, {"__complete", "ho"}, {"-h"}, {"completion", "bash"}} {
		if got := len(newRoot(args).Commands()); got != len(subcommands) {
			t.Errorf("newRoot(%q) has %d commands, want all %d", args, got, len(subcommands))
		}
	}
	// A mistyped name is still answered with the names it may have meant.
	_, stderr, code := run(t, t.TempDir(), "", "hok")
	if code == 0 || !strings.Contains(stderr, "hook") {
		t.Errorf("toolgate hok: exit %d, stderr %q; want a suggestion of hook", code, stderr)
	}
}
