package risk

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ValueKind says what the value of an option is to its program.
type ValueKind uint8

const (
	// ValNone: the option takes no value.
	ValNone ValueKind = iota
	// ValInert: a number, a name, a format or other text that reaches
	// nothing outside the program.
	ValInert
	// ValPattern: a pattern or expression matched against data or names.
	ValPattern
	// ValRead: a file the program reads.
	ValRead
	// ValWrite: a file the program writes.
	ValWrite
	// ValDir: a directory the program reads below or works in.
	ValDir
	// ValExec: a program or shell command the program runs.
	ValExec
	// ValCode: code in the program's own language (a script, a program
	// text) that the program runs.
	ValCode
	// ValCommand: a command line the program runs, given as the words up
	// to a lone ";" (or a "+" right after "{}"), as find -exec takes it.
	// The shell analysis sees through such a command and judges it as a
	// command of its own, so its words add nothing to the effect of the
	// program that runs it; they are not read as the program's options.
	ValCommand
)

var valueKindNames = [...]string{"", "inert", "pat", "read", "write", "dir", "exec", "code", "cmd"}

func (k ValueKind) String() string {
	if int(k) < len(valueKindNames) {
		if k == ValNone {
			return "none"
		}
		return valueKindNames[k]
	}
	return fmt.Sprintf("ValueKind(%d)", k)
}

// Option is one option a program knows, under all its spellings.
type Option struct {
	// Names are the spellings, short ("-n") and long ("--lines").
	Names []string
	// Value is what the option's value is; ValNone for a flag.
	Value ValueKind
	// Optional reports that the value is optional and given only attached
	// (-xVALUE, --opt=VALUE), as getopt's "::" options.
	Optional bool
	// Second, for an option that takes two values (jq --rawfile NAME
	// FILE, find -fprintf FILE FORMAT), holds the kind of the second,
	// which is always the next word. It shares the option's Names; the
	// parse reports the second value as an option of its own with it.
	Second *Option
}

// Spec is what toolgate knows of one program's command line: the options
// it accepts. Knowledge is an allow-list: an option a Spec does not list
// makes the command unknown, since it may do anything (run a program, read
// a file list from elsewhere, write).
type Spec struct {
	// Program is the name the spec is filed under; Aliases share it.
	Program string
	Aliases []string
	// Options are the options the program knows.
	Options []*Option
	// Numeric reports that -N (a number) is a value, as in head -5.
	Numeric bool
	// Free reports that the program parses no options at all: every word
	// is an operand (echo's words, test's expression).
	Free bool
	// Posix reports that options end at the first operand, as with
	// POSIXLY_CORRECT; otherwise options may follow operands, as GNU
	// getopt permutes them.
	Posix bool
	// NoAbbrev reports that long options must be spelled in full (the
	// program does not use getopt_long's prefix matching).
	NoAbbrev bool
	// SingleDashLong reports that long options are spelled with one dash
	// (find -name, java -version); a word that names none is read as
	// short options.
	SingleDashLong bool
	// Plus reports that a word starting with "+" is an initial command
	// (less +G, more +/pattern): a +X the spec lists, a line number
	// (+100) or a search (+/pattern) is known, any other is unknown, since
	// the program's commands run shell commands (less +!cmd).
	Plus bool
	// subcommands maps each known subcommand to its spec (git log);
	// subSources, when set, are the tables it is parsed from at the first
	// call of Subcommands.
	subcommands map[string]*Spec
	subSources  []subcommandSource
	subOnce     sync.Once
	subIndex    map[string]*specEntry

	short *[256]*Option
	long  map[string]*Option
	longs []string // sorted long names, without the dashes
	// refused are the long options the program has that the spec does
	// not allow, sorted, without the dashes: an abbreviation is resolved
	// against them too, so that one of a refused option is unknown.
	refused []string
}

// HasSubcommands reports whether the program has subcommands: a first
// operand that is none of them makes the command unknown.
func (sp *Spec) HasSubcommands() bool {
	return sp.subcommands != nil || len(sp.subSources) > 0
}

// Subcommand returns the spec of the program's subcommand name (git log),
// or nil when the program has none by that name. The subcommands of a
// built-in spec are parsed one by one at their first use; a table that
// does not load is a programming error (TestSpecsParse loads them all),
// and the call panics with its error.
func (sp *Spec) Subcommand(name string) *Spec {
	if sp.subSources == nil {
		return sp.subcommands[name]
	}
	if e := sp.subEntries()[name]; e != nil {
		return e.load()
	}
	return nil
}

// subEntries returns the entries of the subcommand tables, indexed at the
// first call by their first lines.
func (sp *Spec) subEntries() map[string]*specEntry {
	sp.subOnce.Do(func() {
		var tables []specSource
		for _, sub := range sp.subSources {
			if sub.build == nil {
				tables = append(tables, specSource{sub.name, sub.source()})
			}
		}
		sp.subIndex = indexEntries(tables)
		for _, sub := range sp.subSources {
			if sub.build != nil {
				e := &specEntry{table: sub.name, build: sub.build}
				for _, n := range sub.names {
					sp.subIndex[n] = e
				}
			}
		}
	})
	return sp.subIndex
}

// numSubcommands is the number of names the program's subcommands have.
func (sp *Spec) numSubcommands() int {
	if sp.subSources == nil {
		return len(sp.subcommands)
	}
	return len(sp.subEntries())
}

// addSubcommands parses the subcommand table sub into sp's subcommands.
func (sp *Spec) addSubcommands(sub subcommandSource) error {
	list, err := ParseSpecs(sub.name, sub.source())
	if err != nil {
		return err
	}
	if sp.subcommands == nil {
		sp.subcommands = map[string]*Spec{}
	}
	for _, c := range list {
		for _, n := range append([]string{c.Program}, c.Aliases...) {
			sp.subcommands[n] = c
		}
	}
	return nil
}

// ParsedOption is one option found on a command line.
type ParsedOption struct {
	// Name is the option as the spec names it first (the canonical
	// spelling); Spelled is how it was written.
	Name, Spelled string
	// Option is the spec's entry.
	Option *Option
	// Value is the option's value, when it has one; ValueIndex is the
	// index in args of the word that holds it, -1 if none.
	Value      string
	HasValue   bool
	ValueIndex int
}

// Parsed is a command line read against a Spec.
type Parsed struct {
	Spec *Spec
	// Sub is the subcommand's parse, for a program with subcommands.
	Sub *Parsed
	// SubName is the subcommand word.
	SubName string
	// Options are the options in the order given.
	Options []ParsedOption
	// Operands are the indexes in args of the operands.
	Operands []int
	// Unknown is the first option the spec does not know ("--to-command",
	// "-I"), or "" if every option is known.
	Unknown string
	// Problem says why the words cannot be read statically (a dynamic
	// word where an option may stand), or "".
	Problem string

	// Room for the options and operands of a short line, so that reading
	// one takes a single allocation.
	optBuf [4]ParsedOption
	opBuf  [6]int
}

// Has reports whether an option with any of the given spellings (as the
// spec spells them) was given.
func (p *Parsed) Has(names ...string) bool {
	for _, o := range p.Options {
		for _, n := range names {
			if slices.Contains(o.Option.Names, n) {
				return true
			}
		}
	}
	return false
}

// Values returns the values of the options with any of the given
// spellings, in order.
func (p *Parsed) Values(names ...string) []string {
	var out []string
	for _, o := range p.Options {
		if !o.HasValue {
			continue
		}
		for _, n := range names {
			if slices.Contains(o.Option.Names, n) {
				out = append(out, o.Value)
				break
			}
		}
	}
	return out
}

// OperandWords returns the operand words of args.
func (p *Parsed) OperandWords(args []string) []string {
	out := make([]string, 0, len(p.Operands))
	for _, i := range p.Operands {
		out = append(out, args[i])
	}
	return out
}

// Flags returns every spelling of every option given, the subcommand's
// included, so that a check for
// one spelling ("-r") finds the option however it was written
// ("--recursive", "--rec", "-rf").
func (p *Parsed) Flags() map[string]bool {
	n := len(p.Options)
	if p.Sub != nil {
		n += len(p.Sub.Options)
	}
	m := make(map[string]bool, n*2)
	for q := p; q != nil; q = q.Sub {
		for _, o := range q.Options {
			for _, n := range o.Option.Names {
				m[n] = true
			}
		}
	}
	return m
}

// Lookup returns the spec of program name, or nil when toolgate has none.
// A program's entry is parsed at its first lookup, each subcommand's at its first use,
// so that a command that judges one program does not pay for every table.
// A table that does not load is a programming error (TestSpecsParse loads
// them all, and TestLazySpecs compares each entry with the whole load):
// a lookup of it panics with its error.
func Lookup(name string) *Spec {
	e := specIndex()[name]
	if e == nil {
		return nil
	}
	return e.load()
}

// SpecNames returns the names of every program with a spec, sorted.
func SpecNames() []string {
	idx := specIndex()
	out := make([]string, 0, len(idx))
	for n := range idx {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// specEntry is one program's entry in a built-in table: its lines, and
// the subcommand tables of the program, parsed at the first lookup.
type specEntry struct {
	table      string   // the table's name, for errors
	lines      []string // the table's lines
	start, end int      // the entry's lines, [start, end)
	subs       []subcommandSource
	// build, for a generated entry, writes its lines at the first load.
	build func() string
	once  sync.Once
	spec  *Spec
}

// load parses the entry once. Its lines keep their numbers in the table,
// so that an error names the line as a whole load would.
func (e *specEntry) load() *Spec {
	e.once.Do(func() {
		if e.build != nil {
			e.lines = strings.Split(e.build(), "\n")
			e.start, e.end = 0, len(e.lines)
		}
		text := strings.Repeat("\n", e.start) + strings.Join(e.lines[e.start:e.end], "\n")
		specs, err := loadSpecs([]specSource{{e.table, text}}, nil)
		if err != nil {
			panic(err)
		}
		for _, sp := range specs {
			e.spec = sp
		}
		// The subcommands are parsed at their first use.
		e.spec.subSources = e.subs
	})
	return e.spec
}

// specIndex maps every program name and alias of the built-in tables to
// its entry, found by the entries' first lines only.
var specIndex = sync.OnceValue(func() map[string]*specEntry {
	tables, subs := indexedTables()
	idx := indexEntries(tables)
	for _, b := range builtEntries() {
		e := &specEntry{table: b.table, build: b.build}
		for _, n := range b.names {
			idx[n] = e
		}
	}
	for _, sub := range subs {
		if e := idx[sub.program]; e != nil {
			e.subs = append(e.subs, sub)
		}
	}
	return idx
})

// indexEntries maps every program name and alias of tables to its entry,
// found by the entries' first lines only.
func indexEntries(tables []specSource) map[string]*specEntry {
	idx := map[string]*specEntry{}
	for _, src := range tables {
		lines := strings.Split(src.text, "\n")
		var cur *specEntry
		for i, line := range lines {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") || line[0] == ' ' || line[0] == '\t' {
				continue
			}
			if cur != nil {
				cur.end = i
			}
			cur = &specEntry{table: src.name, lines: lines, start: i, end: len(lines)}
			head, _, _ := strings.Cut(trimmed, ":")
			for _, n := range strings.Fields(head) {
				idx[n] = cur
			}
		}
	}
	return idx
}

// builtinTables returns every built-in table: the fixed ones the
// specs_*.go files register, and those built from shared parts (the
// tools' table with its type options, curl's and wget's with the --no-
// forms of their boolean options, git's and go's subcommands).
func builtinTables() ([]specSource, []subcommandSource) {
	tables, subs := indexedTables()
	for _, b := range builtEntries() {
		tables = append(tables, specSource{b.table, b.build()})
	}
	return tables, subs
}

// indexedTables are the tables whose text the index reads: the built-in
// ones but for the entries of builtEntries.
func indexedTables() ([]specSource, []subcommandSource) {
	return append(slices.Clip(specSources), specSource{"tools", toolSpecs()}),
		slices.Concat(gitSubcommandSources(), goSubcommandSources(), runnerSubcommandSources(), netSubcommandSources())
}

// builtEntry is an entry of a built table that the index knows by its
// names alone, its text written at the program's first lookup: a long one
// built from parts, which a process that never looks the program up does
// not pay for.
type builtEntry struct {
	table string
	names []string
	build func() string
}

func builtEntries() []builtEntry {
	return []builtEntry{{"net", []string{"curl"}, curlSpec}, {"net", []string{"wget"}, wgetSpec}}
}

// loadSpecs parses tables and indexes their specs by program name and
// alias; subs adds subcommands to the program each names.
func loadSpecs(tables []specSource, subs []subcommandSource) (map[string]*Spec, error) {
	specs := map[string]*Spec{}
	for _, src := range tables {
		list, err := ParseSpecs(src.name, src.text)
		if err != nil {
			return nil, err
		}
		for _, sp := range list {
			for _, n := range append([]string{sp.Program}, sp.Aliases...) {
				if specs[n] != nil {
					return nil, fmt.Errorf("%s: program %q has two specs", src.name, n)
				}
				specs[n] = sp
			}
		}
	}
	for _, sub := range subs {
		parent := specs[sub.program]
		if parent == nil {
			return nil, fmt.Errorf("%s: no spec for %q", sub.name, sub.program)
		}
		if err := parent.addSubcommands(sub); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// specSource is one table of specs in the spec language.
type specSource struct{ name, text string }

// specSources are the fixed tables, which the specs_*.go files register
// at init; builtinTables adds the built ones.
var specSources []specSource

// subcommandSource holds the subcommands of one program: a table of
// them in text, or one generated entry.
type subcommandSource struct {
	name, program, text string
	// lazy, when set, writes the table's text at its first use, for a
	// table built from shared parts.
	lazy func() string
	// names and build, for a generated entry, are the names on its first
	// line and the function that writes the entry, called at the entry's
	// first use rather than when the tables are indexed.
	names []string
	build func() string
}

// source returns the table's text, writing it when it is generated.
func (s subcommandSource) source() string {
	if s.build != nil {
		return s.build()
	}
	if s.lazy != nil {
		return s.lazy()
	}
	return s.text
}

// ParseSpecs reads specs in toolgate's spec language. Each entry starts at
// the beginning of a line with the program's names and a colon, and goes
// on over the indented lines that follow:
//
//	head: @numeric -c|--bytes=inert -n|--lines=inert -q|--quiet|--silent
//	  -v|--verbose -z|--zero-terminated
//
// A token is one option under all its spellings joined by "|"; "=KIND"
// says that it takes a value of that kind (inert, pat, read, write, dir,
// exec, code, cmd) and "?=KIND" that the value is optional and given
// attached. "=KIND+KIND2" says that it takes two values, the second of
// kind KIND2 in the word after the first (jq --rawfile=inert+read).
// Directives: @numeric (-N is a value), @free (no options at all),
// @posix (options end at the first operand), @noabbrev (long options in
// full only), @single (long options with one dash), @plus (+WORD is an
// initial command). A token "!--name" is a long option the program has
// that the spec does not allow: it stays unknown, and an abbreviation is
// matched against it too, so that a prefix it shares with an allowed
// option is ambiguous, as the program finds it. Lines starting with
// "#" are comments. name is used in errors ("name:line: message").
func ParseSpecs(name, src string) ([]*Spec, error) {
	var out []*Spec
	var cur *Spec
	for ln, line := range strings.Split(src, "\n") {
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", name, ln+1, fmt.Sprintf(format, a...))
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		body := trimmed
		if line[0] != ' ' && line[0] != '\t' {
			head, rest, ok := strings.Cut(trimmed, ":")
			if !ok {
				return nil, errf("want \"program: options\", got %q", trimmed)
			}
			names := strings.Fields(head)
			if len(names) == 0 {
				return nil, errf("no program name before the colon")
			}
			cur = &Spec{Program: names[0], Aliases: names[1:], short: new([256]*Option), long: map[string]*Option{}}
			out = append(out, cur)
			body = rest
		} else if cur == nil {
			return nil, errf("an indented line before any program")
		}
		for _, tok := range strings.Fields(body) {
			if err := cur.addToken(tok); err != nil {
				return nil, errf("%s: %v", cur.Program, err)
			}
		}
	}
	for _, sp := range out {
		for l := range sp.long {
			sp.longs = append(sp.longs, l)
		}
		sort.Strings(sp.longs)
		sort.Strings(sp.refused)
		for _, r := range sp.refused {
			if sp.long[r] != nil {
				return nil, fmt.Errorf("%s: %s: option --%s is both allowed and refused", name, sp.Program, r)
			}
		}
	}
	return out, nil
}

func (sp *Spec) addToken(tok string) error {
	switch tok {
	case "@numeric":
		sp.Numeric = true
		return nil
	case "@free":
		sp.Free = true
		return nil
	case "@posix":
		sp.Posix = true
		return nil
	case "@noabbrev":
		sp.NoAbbrev = true
		return nil
	case "@single":
		sp.SingleDashLong = true
		return nil
	case "@plus":
		sp.Plus = true
		return nil
	}
	if strings.HasPrefix(tok, "@") {
		return fmt.Errorf("unknown directive %q", tok)
	}
	if r, ok := strings.CutPrefix(tok, "!"); ok {
		l, ok := strings.CutPrefix(r, "--")
		if !ok || l == "" || strings.ContainsAny(l, "=|!") {
			return fmt.Errorf("bad refused option %q (want !--name)", tok)
		}
		if slices.Contains(sp.refused, l) {
			return fmt.Errorf("option %s refused twice", r)
		}
		sp.refused = append(sp.refused, l)
		return nil
	}
	o := &Option{}
	names, kind, hasKind := strings.Cut(tok, "=")
	if hasKind {
		if n, ok := strings.CutSuffix(names, "?"); ok {
			names, o.Optional = n, true
		}
		kind, second, two := strings.Cut(kind, "+")
		k, err := valueKind(names, kind)
		if err != nil {
			return err
		}
		o.Value = k
		if two {
			k2, err := valueKind(names, second)
			if err != nil {
				return err
			}
			if o.Optional || k == ValCommand || k2 == ValCommand {
				return fmt.Errorf("option %s: two values are neither optional nor a command", names)
			}
			o.Second = &Option{Value: k2}
		}
	}
	for _, n := range strings.Split(names, "|") {
		switch {
		case strings.HasPrefix(n, "--") && len(n) > 2 || sp.SingleDashLong && strings.HasPrefix(n, "-") && len(n) > 2:
			l := strings.TrimLeft(n, "-")
			if sp.long[l] != nil {
				return fmt.Errorf("option %s listed twice", n)
			}
			sp.long[l] = o
		case len(n) == 2 && n[0] == '-' && n[1] != '-' || len(n) == 2 && n[0] == '+':
			if sp.short[n[1]] != nil && n[0] == '-' {
				return fmt.Errorf("option %s listed twice", n)
			}
			if n[0] == '+' {
				// +x: the option's opposite spelling (set +e); it shares
				// the entry of -x.
				if sp.long["+"+n[1:]] != nil {
					return fmt.Errorf("option %s listed twice", n)
				}
				sp.long["+"+n[1:]] = o
				break
			}
			sp.short[n[1]] = o
		default:
			return fmt.Errorf("bad option spelling %q", n)
		}
		o.Names = append(o.Names, n)
	}
	if o.Second != nil {
		o.Second.Names = o.Names
	}
	sp.Options = append(sp.Options, o)
	return nil
}

func valueKind(names, kind string) (ValueKind, error) {
	i := slices.Index(valueKindNames[:], kind)
	if i <= 0 {
		return ValNone, fmt.Errorf("option %s: unknown value kind %q (want inert, pat, read, write, dir, exec, code or cmd)", names, kind)
	}
	return ValueKind(i), nil
}

// Parse reads args (the words after the program) against the spec. dyn,
// parallel to args, marks words whose value is not known statically. The
// parse follows getopt_long: combined short options (-rf), attached values
// (-n5, -Ivalue), --opt=value and --opt value, unambiguous prefixes of long
// options, "--" ending the options and "-" as an operand.
func (sp *Spec) Parse(args []string, dyn []bool) *Parsed {
	p := &Parsed{Spec: sp}
	p.Operands, p.Options = p.opBuf[:0], p.optBuf[:0]
	if sp.Free {
		for i := range args {
			p.Operands = append(p.Operands, i)
		}
		return p
	}
	end := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		isDyn := i < len(dyn) && dyn[i]
		if end {
			p.Operands = append(p.Operands, i)
			continue
		}
		if isDyn {
			if (mayBeOption(a) || sp.Plus && strings.HasPrefix(strings.TrimLeft(a, `"'`), "+")) && p.Problem == "" {
				// It may be an option; if it is not, it is an operand.
				p.Problem = fmt.Sprintf("the word %s may be an option of %s, and is not known until the line runs", a, sp.Program)
			}
			if sp.HasSubcommands() && len(p.Operands) == 0 && p.Problem == "" {
				p.Problem = fmt.Sprintf("the subcommand %s of %s is not known until the line runs", a, sp.Program)
			}
			p.Operands = append(p.Operands, i)
			if sp.Posix || sp.HasSubcommands() {
				end = true
			}
			continue
		}
		if sp.Plus && len(a) > 1 && a[0] == '+' && sp.long[a] == nil {
			if !isDigits(a[1:]) && a[1] != '/' {
				p.Unknown = a
				return p.rest(args, dyn, i)
			}
			continue // +N: a line to start at; +/pattern: a search
		}
		switch {
		case a == "--":
			end = true
			continue
		case a == "-" || len(a) < 2 || a[0] != '-' && !(a[0] == '+' && sp.long[a[:2]] != nil):
			if sp.HasSubcommands() && len(p.Operands) == 0 && p.Sub == nil {
				p.SubName = a
				sub := sp.Subcommand(a)
				if sub == nil {
					p.Unknown = a
					p.Problem = ""
					return p.rest(args, dyn, i)
				}
				p.Operands = append(p.Operands, i)
				rest := args[i+1:]
				var restDyn []bool
				if i+1 < len(dyn) {
					restDyn = dyn[i+1:]
				}
				p.Sub = sub.Parse(rest, restDyn)
				// The subcommand's indexes are relative to its own words.
				for k := range p.Sub.Operands {
					p.Sub.Operands[k] += i + 1
				}
				for k := range p.Sub.Options {
					if p.Sub.Options[k].ValueIndex >= 0 {
						p.Sub.Options[k].ValueIndex += i + 1
					}
				}
				if p.Unknown == "" {
					p.Unknown = p.Sub.Unknown
				}
				if p.Problem == "" {
					p.Problem = p.Sub.Problem
				}
				return p
			}
			p.Operands = append(p.Operands, i)
			if sp.Posix {
				end = true
			}
			continue
		case a[0] == '+':
			o := sp.long[a[:2]]
			po := ParsedOption{Name: o.Names[0], Spelled: a[:2], Option: o, ValueIndex: -1}
			if o.Value != ValNone && len(a) == 2 {
				// set +o pipefail; alone, set +o lists the options.
				if i+1 < len(args) {
					i++
					po.Value, po.HasValue, po.ValueIndex = args[i], true, i
				}
				p.Options = append(p.Options, po)
				continue
			}
			p.Options = append(p.Options, po)
			if len(a) > 2 {
				// +abc: set +e +u ... in one word.
				for _, c := range a[2:] {
					o := sp.long["+"+string(c)]
					if o == nil {
						p.Unknown = "+" + string(c)
						return p.rest(args, dyn, i)
					}
					p.Options = append(p.Options, ParsedOption{Name: o.Names[0], Spelled: "+" + string(c), Option: o, ValueIndex: -1})
				}
			}
			continue
		}
		if sp.Numeric && isDigits(a[1:]) {
			continue // -5: a count
		}
		if strings.HasPrefix(a, "--") || sp.SingleDashLong {
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if sp.SingleDashLong && strings.HasPrefix(a, "--") && sp.long[strings.TrimPrefix(a[2:], "-")] == nil {
				// A program with single-dash long options may also take
				// the two-dash spelling (find --help); only if listed so.
				if o := sp.long["-"+name]; o == nil {
					p.Unknown = a
					return p.rest(args, dyn, i)
				}
			}
			full, o := sp.matchLong(name)
			if o == nil {
				if !sp.SingleDashLong || strings.HasPrefix(a, "--") {
					p.Unknown = strings.SplitN(a, "=", 2)[0]
					return p.rest(args, dyn, i)
				}
				// -x or -xyz with single-dash long options and no match:
				// read it as short options below (find -L, xxd -s16).
			} else {
				po := ParsedOption{Name: o.Names[0], Spelled: o.spelling(full, 2), Option: o, ValueIndex: -1}
				if sp.SingleDashLong {
					po.Spelled = o.spelling(full, 1)
				}
				if o.Value == ValNone && hasVal {
					p.Unknown = a // getopt refuses a value for a flag
					return p.rest(args, dyn, i)
				}
				var ok bool
				if i, ok = p.addOption(po, val, hasVal, args, dyn, i); !ok {
					return p
				}
				continue
			}
		}
		// A cluster of short options: -rf, -n5, -Ivalue.
		for j := 1; j < len(a); j++ {
			o := sp.short[a[j]]
			if o == nil {
				if sp.Numeric && a[j] >= '0' && a[j] <= '9' {
					continue
				}
				p.Unknown = "-" + string(a[j])
				if sp.SingleDashLong {
					// find -fprint: the word is the unknown option.
					p.Unknown = strings.SplitN(a, "=", 2)[0]
				}
				return p.rest(args, dyn, i)
			}
			po := ParsedOption{Name: o.Names[0], Spelled: o.spelling(a[j:j+1], 1), Option: o, ValueIndex: -1}
			if o.Value != ValNone {
				var ok bool
				if i, ok = p.addOption(po, a[j+1:], j+1 < len(a), args, dyn, i); !ok {
					return p
				}
				break
			}
			p.Options = append(p.Options, po)
		}
	}
	return p
}

// addOption records po, an option that takes a value, given in word i:
// with its attached value if it has one, else with the next word when the
// value is required, and any further values (moreValues). It returns the
// index of the last word taken, and false when a required value is
// missing: the program then fails before it does anything, and the parse
// ends.
func (p *Parsed) addOption(po ParsedOption, attached string, hasAttached bool, args []string, dyn []bool, i int) (int, bool) {
	switch o := po.Option; {
	case o.Value == ValNone:
	case hasAttached:
		po.Value, po.HasValue, po.ValueIndex = attached, true, i
	case !o.Optional:
		if i+1 >= len(args) {
			p.Options = append(p.Options, po)
			return i, false
		}
		i = p.nextValue(&po, args, dyn, i+1)
	}
	p.Options = append(p.Options, po)
	return p.moreValues(po.Option, po, args, dyn, i), true
}

// nextValue takes the word at i as the value of po and returns i. A
// dynamic word makes a problem unless the value is inert, a pattern or a
// command the shell analysis judges on its own.
func (p *Parsed) nextValue(po *ParsedOption, args []string, dyn []bool, i int) int {
	po.Value, po.HasValue, po.ValueIndex = args[i], true, i
	k := po.Option.Value
	if i < len(dyn) && dyn[i] && k != ValInert && k != ValPattern && k != ValCommand && p.Problem == "" {
		p.Problem = fmt.Sprintf("the value of %s is not known until the line runs", po.Spelled)
	}
	return i
}

// moreValues reads what follows an option's first value, which ended at
// index i: the second value of a two-value option, or the rest of a
// command line up to its ";". It returns the index of the last word taken.
func (p *Parsed) moreValues(o *Option, po ParsedOption, args []string, dyn []bool, i int) int {
	switch {
	case !po.HasValue:
	case o.Second != nil:
		if i+1 < len(args) {
			second := ParsedOption{Name: po.Name, Spelled: po.Spelled, Option: o.Second}
			i = p.nextValue(&second, args, dyn, i+1)
			p.Options = append(p.Options, second)
		}
	case o.Value == ValCommand:
		// The command ends at a static ";", or at a static "+" right
		// after a static "{}" (find -exec CMD {} +), or with the words.
		if static(dyn, i) && args[i] == ";" {
			return i
		}
		for j := i + 1; j < len(args); j++ {
			if static(dyn, j) && (args[j] == ";" || args[j] == "+" && static(dyn, j-1) && args[j-1] == "{}") {
				return j
			}
		}
		return len(args) - 1
	}
	return i
}

func static(dyn []bool, i int) bool { return i >= len(dyn) || !dyn[i] }

// matchLong finds a long option by its full name or, unless the program
// takes only full names, an unambiguous prefix. It returns the full name.
func (sp *Spec) matchLong(name string) (string, *Option) {
	if name == "" {
		return "", nil
	}
	if o := sp.long[name]; o != nil {
		return name, o
	}
	if sp.NoAbbrev {
		return "", nil
	}
	if j := sort.SearchStrings(sp.refused, name); j < len(sp.refused) && strings.HasPrefix(sp.refused[j], name) {
		// The word is, or abbreviates, an option the spec refuses: that
		// option, or ambiguous between it and an allowed one.
		return "", nil
	}
	i := sort.SearchStrings(sp.longs, name)
	var found string
	var opt *Option
	for ; i < len(sp.longs) && strings.HasPrefix(sp.longs[i], name); i++ {
		o := sp.long[sp.longs[i]]
		if opt != nil && o != opt {
			return "", nil // ambiguous: getopt refuses it
		}
		found, opt = sp.longs[i], o
	}
	return found, opt
}

// mayBeOption reports whether a dynamic word, kept as its source text,
// may expand to something starting with "-": one that starts with an
// expansion rather than literal text.
func mayBeOption(src string) bool {
	s := strings.TrimLeft(src, `"'`)
	if s == "" {
		return true
	}
	switch s[0] {
	case '$', '`', '-', '*', '?', '[', '{', '\\', '~':
		return true
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Describe returns a one-line summary of the spec for explain output:
// the program, how many options it knows, and its directives.
func (sp *Spec) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec %s: %d options", sp.Program, len(sp.Options))
	if sp.Free {
		b.WriteString(", no options parsed")
	}
	if sp.Numeric {
		b.WriteString(", -N counts")
	}
	if sp.Posix {
		b.WriteString(", options end at the first operand")
	}
	if sp.Plus {
		b.WriteString(", +WORD is an initial command")
	}
	if n := sp.numSubcommands(); n > 0 {
		fmt.Fprintf(&b, ", %d subcommands", n)
	}
	return b.String()
}

// Canonical returns the option that spelling names ("--rec", "-R",
// "--recursive=x" without its value) under its first spelling in the spec
// ("-r"), with its entry; ok is false when the spec does not know it. An
// unambiguous prefix of a long option names that option.
func (sp *Spec) Canonical(spelling string) (name string, o *Option, ok bool) {
	s, _, _ := strings.Cut(spelling, "=")
	switch {
	case len(s) == 2 && s[0] == '+':
		o = sp.long[s]
	case len(s) == 2 && s[0] == '-' && s[1] != '-':
		o = sp.short[s[1]]
	case strings.HasPrefix(s, "--") || sp.SingleDashLong && strings.HasPrefix(s, "-"):
		_, o = sp.matchLong(strings.TrimLeft(s, "-"))
	}
	if o == nil {
		return "", nil, false
	}
	return o.Names[0], o, true
}

// Short returns the entry of the short option -c, or nil.
func (sp *Spec) Short(c byte) *Option { return sp.short[c] }

// MatchLong returns the long option that name (without its dashes) names,
// in full or by an unambiguous prefix unless the program takes only full
// names, with its full name; nil if none.
func (sp *Spec) MatchLong(name string) (string, *Option) { return sp.matchLong(name) }

// rest ends a parse stopped at the unknown option in word i: the words
// after it that do not look like options are taken as operands, so that
// what they name is still checked.
func (p *Parsed) rest(args []string, dyn []bool, i int) *Parsed {
	for k := i + 1; k < len(args); k++ {
		if a := args[k]; a != "" && a[0] != '-' || k < len(dyn) && dyn[k] {
			p.Operands = append(p.Operands, k)
		}
	}
	return p
}

// spelling returns the option's name that is name after dashes dashes
// ("-" + "n", "--" + "lines"), from its Names, without building a string.
func (o *Option) spelling(name string, dashes int) string {
	for _, n := range o.Names {
		if len(n) == len(name)+dashes && n[dashes:] == name && (dashes == 1 || n[1] == '-') {
			return n
		}
	}
	return strings.Repeat("-", dashes) + name
}
