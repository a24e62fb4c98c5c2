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
	walk(newRoot())
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
