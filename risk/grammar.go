package risk

import (
	"slices"
	"strings"
)

// ProgramEffect is what the program text given to awk, jq, yq or sed
// does, as far as its grammar tells: the files it opens by name, the
// hosts it connects to, and why it runs commands, reads secrets or cannot
// be judged. The zero value is a program that only reads its input.
type ProgramEffect struct {
	// Reads and Writes are the files the program opens by a name written
	// in it (awk's getline < "f" and print > "f", sed's r and w).
	Reads, Writes []string
	// Hosts are the hosts it connects to (gawk's /inet special files).
	Hosts []string
	// Exec says why the program runs commands, "" if it does not.
	Exec string
	// Secret says why the program reads secrets (the environment), "" if
	// it does not.
	Secret string
	// Unknown says why the program's effect cannot be judged (a construct
	// the analysis does not know, a file named at run time), "" if it can.
	Unknown string
}

// ReadOnly reports whether the program only reads its input and the files
// in Reads.
func (p ProgramEffect) ReadOnly() bool {
	return len(p.Writes) == 0 && len(p.Hosts) == 0 && p.Exec == "" && p.Secret == "" && p.Unknown == ""
}

// merge adds what q does to p, keeping the first reason of each kind.
func (p *ProgramEffect) merge(q ProgramEffect) {
	p.Reads = append(p.Reads, q.Reads...)
	p.Writes = append(p.Writes, q.Writes...)
	p.Hosts = append(p.Hosts, q.Hosts...)
	p.exec(q.Exec)
	p.secret(q.Secret)
	p.unknown(q.Unknown)
}

func (p *ProgramEffect) exec(why string) {
	if p.Exec == "" {
		p.Exec = why
	}
}

func (p *ProgramEffect) secret(why string) {
	if p.Secret == "" {
		p.Secret = why
	}
}

func (p *ProgramEffect) unknown(why string) {
	if p.Unknown == "" {
		p.Unknown = why
	}
}

// apply records the program's effect on the command's effect e: its files,
// its hosts, and a level raised to what it does. Code that runs commands or
// cannot be judged makes the command unknown, so no allow rule covers it.
func (p ProgramEffect) apply(prog string, e *Effect) {
	e.Reads = append(e.Reads, p.Reads...)
	if len(p.Writes) > 0 {
		e.Writes = append(e.Writes, p.Writes...)
		e.Level = max(e.Level, Write)
	}
	if len(p.Hosts) > 0 {
		e.Network = true
		e.Hosts = append(e.Hosts, p.Hosts...)
		e.Level = max(e.Level, Network)
	}
	switch {
	case p.Exec != "":
		e.Level, e.Known, e.Exec = max(e.Level, Execute), false, prog+": "+p.Exec
	case p.Unknown != "":
		e.Level, e.Known, e.Exec = max(e.Level, Execute), false, prog+": "+p.Unknown
	}
	if p.Secret != "" {
		e.Level, e.Secret = Credential, p.Secret
	}
}

// opt is one option found on a command line, under the spelling its spec
// gives it in full: "-x" for a short option, "--name" for a long one
// (an abbreviation spelled out).
type opt struct {
	name   string
	val    string
	hasVal bool
	// dyn reports that the option's value is not known statically.
	dyn bool
	// at is the position in args of the word that holds the value.
	at int
}

// scanOpts reads args against prog's spec in the table of program
// knowledge. It returns the options in order, the positions of the
// operands, and why the line cannot be read ("" when it can): an option
// the spec does not know, an option without its value, or a word not known
// statically where an option could stand.
func scanOpts(prog string, args []string, dyn []bool) (opts []opt, ops []int, bad string) {
	sp := Lookup(prog)
	if sp == nil {
		return nil, nil, prog + " has no spec of its options"
	}
	p := sp.Parse(args, dyn)
	for _, o := range p.Options {
		x := opt{name: o.Spelled, val: o.Value, hasVal: o.HasValue, at: o.ValueIndex}
		x.dyn = o.ValueIndex >= 0 && o.ValueIndex < len(dyn) && dyn[o.ValueIndex]
		if o.Option.Value != ValNone && !o.Option.Optional && !o.HasValue && bad == "" {
			bad = "option " + o.Spelled + " lacks its value"
		}
		opts = append(opts, x)
	}
	switch {
	case p.Unknown != "":
		bad = "option " + p.Unknown + " is not known"
	case p.Problem != "" && bad == "":
		bad = p.Problem
	}
	return opts, p.Operands, bad
}

// specialStream reports whether a file name written in a program names the
// standard streams or the null device, which are no files of the tree.
func specialStream(name string) bool {
	switch name {
	case "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/null":
		return true
	}
	return false
}

// ProgramArgs marks the arguments of awk, gawk, sed and jq that are
// program text (the program operand, -e and --source values), not files:
// the files such a program opens are in the effect [Command] returns. The
// result is parallel to args; it is nil for other programs, yq among them:
// its first operand is a file when one of that name exists.
func ProgramArgs(prog string, args []string) []bool {
	var textOpts []string
	switch prog {
	case "awk", "gawk":
		textOpts = []string{"-e", "--source"}
	case "sed":
		textOpts = []string{"-e", "--expression"}
	case "jq":
		out := make([]bool, len(args))
		if k := jqArgs(prog, args, nil).program; k >= 0 {
			out[k] = true
		}
		return out
	default:
		return nil
	}
	out := make([]bool, len(args))
	opts, ops, bad := scanOpts(prog, args, nil)
	if bad != "" {
		return out
	}
	text, fromFile := false, false
	for _, o := range opts {
		if slices.Contains(textOpts, o.name) {
			out[o.at], text = true, true
		}
		switch o.name {
		case "-f", "--file", "-E", "--exec":
			fromFile = true
		}
	}
	if !text && !fromFile && len(ops) > 0 {
		out[ops[0]] = true
	}
	return out
}

// firstPrefix returns the first of ops that s starts with, "" if none: the
// operator a tokenizer reads when ops lists longer operators first.
func firstPrefix(s string, ops []string) string {
	for _, o := range ops {
		if strings.HasPrefix(s, o) {
			return o
		}
	}
	return ""
}
