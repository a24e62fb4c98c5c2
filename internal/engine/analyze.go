package engine

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/shell"
)

// Unit is one part of a call judged on its own: one simple command of a
// shell line, or the whole call for other tools.
type Unit struct {
	Label   string       `json:"label"`
	Command *CommandFact `json:"command,omitempty"`
	Reads   []PathFact   `json:"reads,omitempty"`
	Writes  []PathFact   `json:"writes,omitempty"`
	Hosts   []HostFact   `json:"hosts,omitempty"`
	Risk    risk.Level   `json:"risk"`
	RiskWhy []string     `json:"risk_why,omitempty"`
	Steps   []Step       `json:"steps"`

	Decision policy.Decision `json:"decision"`
	Reason   Reason          `json:"reason"`
	Source   Source          `json:"source"`
	Message  string          `json:"message"`
	Rule     *policy.Rule    `json:"-"`

	view        policy.CommandView
	known       bool   // the program's effects are known
	unknown     string // why the effects cannot be judged statically, "" if they can
	destructive string
	secret      string
	network     bool
	navigation  bool
	hard        bool // an ask that no mode, allow rule or approval=never lifts
	outside     bool // touches a path outside the workspace and writable roots
	escape      bool // a link inside the workspace leads out of it
}

// CommandFact describes a simple command for explain output.
type CommandFact struct {
	Name     string   `json:"name"`
	Args     []string `json:"args,omitempty"`
	Wrappers []string `json:"wrappers,omitempty"`
	Via      string   `json:"via,omitempty"`
	Dir      string   `json:"dir,omitempty"`
}

// PathFact is a path a unit reads or writes, resolved.
type PathFact struct {
	Requested string `json:"requested"`
	Real      string `json:"real,omitempty"`
	Class     string `json:"class"`
	Inside    bool   `json:"inside"`
	Symlink   bool   `json:"symlink,omitempty"`
	Unknown   bool   `json:"unknown,omitempty"`
	abs       string
}

// HostFact is a host a unit reaches.
type HostFact struct {
	Host    string `json:"host"`
	Private string `json:"private,omitempty"`
}

// env is what analysis needs to know about where the call runs.
type env struct {
	cwd, root, home string
	roots           []string // writable roots, resolved
	match           policy.MatchContext
}

// inside reports whether a real path is in the workspace or a writable root.
func (e *env) inside(p string) bool {
	if pathres.Within(e.root, p) {
		return true
	}
	for _, r := range e.roots {
		if pathres.Within(r, p) {
			return true
		}
	}
	return false
}

// pathFact resolves raw against dir.
func (e *env) pathFact(dir, raw string) PathFact {
	f := PathFact{Requested: raw}
	p, err := pathres.Resolve(dir, e.home, raw)
	if err != nil || p.Unknown {
		f.Unknown = true
		f.Class = "unknown"
		return f
	}
	f.abs, f.Real, f.Symlink = p.Abs, p.Real, p.Symlink
	f.Inside = e.inside(p.Real)
	c := risk.ClassifyPath(p.Real, e.home)
	if lc := risk.ClassifyPath(p.Abs, e.home); lc > c {
		c = lc
	}
	f.Class = c.String()
	return f
}

// devFiles are written to without effect on any file.
var devFiles = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/zero": true}

// shellUnits analyzes a command line into units.
func (e *env) shellUnits(c *call) ([]*Unit, error) {
	dir := e.cwd
	if c.dir != "" {
		abs, ok := pathres.Absolute(e.cwd, e.home, c.dir)
		if !ok {
			dir = ""
		} else {
			dir = pathres.Real(abs)
		}
	}
	res, err := shell.Analyze(c.command, &shell.Options{Dir: dir, Home: e.home})
	if err != nil {
		return nil, err
	}
	var units []*Unit
	sawNetwork := false
	for i := range res.Commands {
		cmd := &res.Commands[i]
		u := e.commandUnit(cmd)
		// A download piped or fed into an interpreter runs code nobody saw.
		if sawNetwork && readsScriptFromStdin(cmd) {
			u.destructive = "a download fed into " + cmd.Name + " runs code nobody has read"
			u.Risk = risk.Destructive
			u.RiskWhy = append(u.RiskWhy, u.destructive)
		}
		sawNetwork = sawNetwork || u.network
		units = append(units, u)
	}
	for _, p := range res.Problems {
		units = append(units, &Unit{
			Label:   "(unjudgeable)",
			Risk:    risk.Execute,
			RiskWhy: []string{fmt.Sprintf("%d:%d: %s", p.Line, p.Col, p.Msg)},
			unknown: p.Msg,
		})
	}
	return units, nil
}

// interpreters read a script from standard input when given no script.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "python": true,
	"python3": true, "perl": true, "ruby": true, "node": true, "php": true, "pwsh": true, "iex": true,
	"source": true, ".": true, "eval": true,
}

func readsScriptFromStdin(c *shell.Command) bool {
	if !interpreters[c.Name] {
		return false
	}
	for i, a := range c.Args {
		if c.ArgDynamic[i] {
			return true // e.g. bash <(curl ...)
		}
		if a == "-" || a == "-s" {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

func (e *env) commandUnit(cmd *shell.Command) *Unit {
	u := &Unit{
		Label: cmd.Source,
		Command: &CommandFact{
			Name: cmd.Name, Args: cmd.Args, Wrappers: cmd.Wrappers, Via: cmd.Via, Dir: cmd.Dir,
		},
		view: policy.CommandView{Name: cmd.Name, Dir: cmd.Dir, Args: cmd.Args, Dynamic: cmd.ArgDynamic, NameDynamic: cmd.NameDynamic},
	}
	if u.Label == "" {
		u.Label = strings.Join(append([]string{cmd.Name}, cmd.Args...), " ")
	}
	if cmd.NameDynamic {
		u.unknown = "the program is not known until the line runs"
		u.Risk = risk.Execute
		u.RiskWhy = append(u.RiskWhy, "program name is not static: "+cmd.Name)
		return u
	}
	name := cmd.Name
	if name == "" {
		// An assignment alone (X=1): no program runs; substitutions in the
		// value are commands of their own.
		u.known, u.navigation = true, true
		u.RiskWhy = append(u.RiskWhy, "only sets shell variables")
		if u.Label == "" || u.Label == " " {
			u.Label = "(assignment)"
		}
	} else if strings.Contains(name, "/") {
		// A program named by path is not the trusted program of the same
		// name: ./sed or /tmp/cat may be anything.
		u.RiskWhy = append(u.RiskWhy, "runs a program by path: "+name)
		u.Risk = risk.Execute
		if dir := cmd.Dir; dir != "" || filepath.IsAbs(name) {
			u.Reads = append(u.Reads, e.pathFact(dir, name))
		}
	} else {
		eff := risk.Command(name, cmd.Args, cmd.ArgDynamic)
		u.known = eff.Known
		u.Risk = eff.Level
		u.navigation = eff.Navigation
		u.network = eff.Network
		u.destructive = eff.Destructive
		u.secret = eff.Secret
		switch {
		case !eff.Known:
			u.RiskWhy = append(u.RiskWhy, name+" is not a known program: it may do anything")
		case eff.Destructive != "":
			u.RiskWhy = append(u.RiskWhy, eff.Destructive)
		case eff.Secret != "":
			u.RiskWhy = append(u.RiskWhy, name+" "+eff.Secret)
		default:
			u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s is classed %s", name, eff.Level))
		}
		if eff.Unknown {
			u.unknown = "an argument is not known until the line runs"
		}
		for _, r := range eff.Reads {
			u.Reads = append(u.Reads, e.pathFact(cmd.Dir, r))
		}
		for _, w := range eff.Writes {
			u.Writes = append(u.Writes, e.pathFact(cmd.Dir, w))
		}
		for _, h := range eff.Hosts {
			u.Hosts = append(u.Hosts, hostFact(h))
		}
		if slices.Contains(cmd.Wrappers, "sudo") || slices.Contains(cmd.Wrappers, "doas") {
			u.Risk = risk.Max(u.Risk, risk.Execute)
			u.RiskWhy = append(u.RiskWhy, "runs with raised privileges")
		}
	}
	for _, r := range cmd.Redirects {
		if r.Heredoc != "" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			continue
		}
		if (r.Op == ">&" || r.Op == "<&") && (isFD(r.Target) || r.Target == "-") {
			continue
		}
		if r.Dynamic {
			u.unknown = "a redirection target is not known until the line runs"
			continue
		}
		f := e.pathFact(cmd.Dir, r.Target)
		if devFiles[f.Real] || devFiles[f.abs] {
			continue
		}
		if r.Op == "<" {
			u.Reads = append(u.Reads, f)
		} else {
			u.Writes = append(u.Writes, f)
			u.Risk = risk.Max(u.Risk, risk.Write)
		}
	}
	return u
}

func isFD(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// hostFact classifies a host: loopback, private, link-local, CGNAT and
// cloud metadata targets are reported as private.
func hostFact(host string) HostFact {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	f := HostFact{Host: h}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		f.Private = "loopback"
	case h == "metadata.google.internal" || h == "metadata" || h == "instance-data":
		f.Private = "cloud metadata"
	case strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local"):
		f.Private = "internal name"
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		switch {
		case a.String() == "169.254.169.254" || a.String() == "fd00:ec2::254" || a.String() == "100.100.100.200":
			f.Private = "cloud metadata"
		case a.IsLoopback():
			f.Private = "loopback"
		case a.IsPrivate():
			f.Private = "private"
		case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
			f.Private = "link-local"
		case a.IsUnspecified():
			f.Private = "unspecified"
		case a.Is4() && netip.MustParsePrefix("100.64.0.0/10").Contains(a):
			f.Private = "carrier-grade NAT"
		}
	}
	return f
}

// toolUnit builds the single unit of a non-shell call.
func (e *env) toolUnit(c *call) *Unit {
	u := &Unit{Label: c.req.Tool, Risk: c.meta.base, known: true}
	u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("the %s tool is classed %s", c.tool, c.meta.base))
	for _, p := range c.paths {
		f := e.pathFact(e.cwd, p.raw)
		if p.family == "write" {
			u.Writes = append(u.Writes, f)
		} else {
			u.Reads = append(u.Reads, f)
		}
		u.Label += " " + p.raw
	}
	if c.url != nil {
		u.Hosts = append(u.Hosts, hostFact(c.url.Hostname()))
		u.network = true
		u.Label += " " + c.url.Redacted()
	}
	if c.tool == policy.ToolWebSearch {
		u.network = true
	}
	if c.tool == policy.ToolMCP {
		u.Label = c.mcpName
		u.known = false
	}
	return u
}

// escalate raises a unit's risk from what its paths reveal.
func (e *env) escalate(u *Unit) {
	all := append(append([]PathFact{}, u.Reads...), u.Writes...)
	outside, escape := false, false
	for _, p := range all {
		switch {
		case p.Unknown:
			if u.unknown == "" {
				u.unknown = "path " + p.Requested + " cannot be resolved statically"
			}
		case p.Class == "credential":
			u.Risk = risk.Credential
			u.RiskWhy = append(u.RiskWhy, p.Requested+" holds credentials")
		case !p.Inside:
			outside = true
			if p.abs != "" && e.inside(p.abs) && p.Symlink {
				escape = true
				u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s is a link out of the workspace to %s", p.Requested, p.Real))
			} else {
				u.RiskWhy = append(u.RiskWhy, p.Requested+" is outside the workspace")
			}
		}
	}
	if u.secret != "" {
		u.Risk = risk.Max(u.Risk, risk.Credential)
	}
	if outside && u.Risk < risk.Credential {
		u.Risk = u.Risk.Raise()
	}
	if u.destructive != "" {
		u.Risk = risk.Destructive
	}
	u.outside, u.escape = outside, escape
}
