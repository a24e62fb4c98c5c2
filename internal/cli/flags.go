package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/policy"
)

// policyFlags are the flags that make the CLI layer.
type policyFlags struct {
	allow, ask, deny []string
	mode             string
	approval         string
	sandbox          string
	network          bool
	project          string
	managed, user    string
}

func (f *policyFlags) register(c *cobra.Command) {
	fl := c.Flags()
	stringsVar(fl, &f.allow, "allow", "add an allow rule for this run (repeatable)")
	stringsVar(fl, &f.ask, "ask", "add an ask rule for this run (repeatable)")
	stringsVar(fl, &f.deny, "deny", "add a deny rule for this run (repeatable)")
	fl.StringVar(&f.mode, "mode", "", "mode: default, acceptEdits, plan, dontAsk, bypassPermissions, strict")
	fl.StringVar(&f.approval, "approval", "", "approval axis: on-request, always, never")
	fl.StringVar(&f.sandbox, "sandbox", "", "sandbox axis: read-only, workspace-write, danger-full-access")
	fl.BoolVar(&f.network, "network", false, "allow network access in the workspace-write sandbox (--network=true|false)")
	f.registerFiles(c)
}

// stringsVar defines a repeatable flag name whose every use appends its
// value to *p, as is, commas included, and that has no default: pflag's
// StringArrayVar, without the CSV writer that one runs to print its
// empty default for every flag of every command at start-up.
func stringsVar(fl *pflag.FlagSet, p *[]string, name, usage string) {
	fl.Var((*stringsValue)(p), name, usage)
}

type stringsValue []string

func (v *stringsValue) Set(s string) error { *v = append(*v, s); return nil }
func (v *stringsValue) Type() string       { return "stringArray" }

// String is the values quoted as Go quotes them, and "" when there are
// none, which help takes for no default.
func (v *stringsValue) String() string {
	if len(*v) == 0 {
		return ""
	}
	return fmt.Sprintf("%q", []string(*v))
}

// registerFiles registers only the flags that locate the policy files,
// for the commands that read the files and decide nothing.
func (f *policyFlags) registerFiles(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.project, "project", "", "project root (default: nearest directory with .toolgate/ or .git above the request's cwd)")
	fl.StringVar(&f.managed, "managed-policy", "", "managed policy file (default $TOOLGATE_MANAGED_POLICY or /etc/toolgate/managed.toml)")
	fl.StringVar(&f.user, "user-policy", "", "user policy file (default $XDG_CONFIG_HOME/toolgate/policy.toml)")
}

// cliLayer builds the CLI policy layer from the flags.
func (f *policyFlags) cliLayer(c *cobra.Command) (*policy.File, error) {
	file, err := policy.ParseRules(policy.LayerCLI, f.allow, f.ask, f.deny)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if f.mode != "" {
		m, err := policy.ParseMode(f.mode)
		if err != nil {
			return nil, usageError("--mode: %v", err)
		}
		file.Mode = &m
	}
	if f.approval != "" {
		a, err := policy.ParseApproval(f.approval)
		if err != nil {
			return nil, usageError("--approval: %v", err)
		}
		file.Approval = &a
	}
	if f.sandbox != "" {
		s, err := policy.ParseSandbox(f.sandbox)
		if err != nil {
			return nil, usageError("--sandbox: %v", err)
		}
		file.Sandbox = &s
	}
	if c.Flags().Changed("network") {
		n := f.network
		file.Network = &n
	}
	// The state directory (tokens, notification hooks, the event log,
	// grant files) is a credential path in every entry point, not only in
	// the server that uses it.
	if dir := server.DefaultStateDir(); dir != "" {
		if err := protectStateDir(file, dir); err != nil {
			return nil, err
		}
	}
	return file, nil
}

// engine builds an engine that loads the file layers per project root and
// adds the CLI layer.
func (f *policyFlags) engine(c *cobra.Command) (*engine.Engine, error) {
	layer, err := f.cliLayer(c)
	if err != nil {
		return nil, err
	}
	return engine.New(engine.Options{
		Policy:  engine.FromFiles(f.managed, f.user, layer),
		Project: f.project,
	})
}
