package shell

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Options say what is known about the environment in which the line would
// run. A nil *Options means defaults: nothing is known.
type Options struct {
	// Dir is the initial working directory. It must be absolute to be used;
	// "" means unknown.
	Dir string
	// Home is the home directory used for ~ and $HOME; "" means unknown, in
	// which case ~ is dynamic.
	Home string
	// Env holds variables whose values are known. HOME and PWD are derived
	// from Home and Dir and are ignored here.
	Env map[string]string
	// KeepsDir, when set, is asked about each `source FILE` (or `. FILE`)
	// with a static FILE run in a known directory dir: it reports that
	// sourcing the file leaves the working directory as it is, so that the
	// commands after it keep a known Dir. It must answer false unless it
	// knows. Nil means a sourced file may change the directory.
	KeepsDir func(dir, file string) bool
}

// Command is one simple command that the line would run.
type Command struct {
	// Name is the program as it will be looked up: a bare name for a PATH
	// lookup or a builtin (system bin directories such as /usr/bin are
	// reduced to the base name), or a cleaned path that contains a slash.
	// Name is empty for a statement that runs no program: one that only
	// assigns variables or only redirects, or that carries the redirections
	// of a compound command or of a nested shell.
	Name string
	// NameDynamic reports that the program word could not be resolved
	// statically; Name then holds its source text.
	NameDynamic bool
	// Args are the words after the program, after quote removal and brace
	// expansion. A dynamic word is kept as its source text.
	Args []string
	// ArgDynamic is parallel to Args and is true where the word contains an
	// expansion that cannot be resolved statically.
	ArgDynamic []bool
	// Assigns are the VAR=value prefixes, the assignments given to an env
	// or sudo wrapper, and, for a command that names a program, those
	// inherited from the command that started its nested shell. A += or
	// array assignment is Dynamic.
	Assigns []Assign
	// Redirects are the command's redirections in source order.
	Redirects []Redirect
	// Wrappers lists the wrappers seen through, outermost first: programs
	// such as "sudo", "env", "timeout", "xargs" or "busybox", the builtins
	// "command", "builtin" and "exec", the time keyword as "time", and
	// "sh -c", "sh stdin", "su", "eval", "source", ".", "watch",
	// "find -exec", "trap", "alias" or "mapfile -C" for a command that came
	// from inside one of those.
	Wrappers []string
	// Via is "" for a command written directly, and otherwise the innermost
	// way it was reached: "subst" for $(…) or backticks, "procsubst" for
	// <(…) and >(…), "sh -c" (also for su -c), "stdin" for a static script
	// fed to a shell, source or . on standard input, "eval" (also for a
	// mapfile -C callback), "xargs", "find -exec", "watch", "trap" for a
	// trap action, or "alias" for an alias definition.
	Via string
	// Dir is the working directory in effect when the command runs: an
	// absolute path, or "" when unknown.
	Dir string
	// Stdin is the text the program reads on its standard input when the
	// line gives it statically: a heredoc or here-string without
	// expansions left to run time (as the shell expands it), or the output
	// of echo, printf or cat of static words piped into it; "" otherwise.
	Stdin string
	// Source is the text of this simple command as written. For a command
	// inside a nested shell string it is the text inside that string.
	Source string
	// Line and Col give the position in the top-level source. For a command
	// inside a nested shell string they give the position of that string
	// argument (of the heredoc or here-string for a script read on standard
	// input, and of the reading command for piped text).
	Line, Col int
}

// Assign is one variable assignment that applies to a command.
type Assign struct {
	Name    string
	Value   string
	Dynamic bool
}

// Redirect is one redirection of a command.
type Redirect struct {
	// Op is the operator: ">", ">>", "<", ">|", "&>", "&>>", "<>", "<<",
	// "<<-", "<<<", ">&" or "<&".
	Op string
	// Fd is the file descriptor as written ("2" in 2>), or "" if none.
	Fd string
	// Target is the file path after expansion; for ">&" and "<&" it is the
	// descriptor or file word. It is "" for heredocs and here-strings.
	Target string
	// Dynamic reports that the target, or the body of a heredoc or
	// here-string, contains an expansion that cannot be resolved statically.
	Dynamic bool
	// Heredoc is the heredoc or here-string body as written.
	Heredoc string
}

// Problem is something in the line that cannot be judged statically: the
// caller must not allow the line on its own say-so.
type Problem struct {
	Line, Col int
	Msg       string
}

// Result is what Analyze found in a line.
type Result struct {
	Commands []Command
	Problems []Problem
}

// ParseError is returned when the line is not valid shell, or when it
// cannot be analyzed at all.
type ParseError struct {
	Line, Col int
	Msg       string
}

// Error formats the error as "line:col: message".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// maxNesting is how many shell strings (sh -c, eval, watch, ...) may be
// nested inside one another before Analyze gives up.
const maxNesting = 100

// recoverPanics makes Analyze turn an internal panic into an error. Tests
// turn it off so that bugs surface.
var recoverPanics = true

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// parse parses src as bash with a parser from the pool.
func parse(src string) (*syntax.File, error) {
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	if err == nil && strings.Contains(src, "\\\n") {
		err = commentContinuation(src)
	}
	return f, err
}

// commentContinuation reports a comment that ends in a backslash. bash
// ends a comment at the line break, so the next line runs; the parser
// reads the backslash as a line continuation and joins the next line to
// the command before the comment, hiding it. Such a line cannot be judged.
func commentContinuation(src string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return err
	}
	var found error
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && found == nil && strings.Contains(c.Text, "\n") {
			found = syntax.ParseError{Pos: c.Pos(), Text: "a comment ends in a backslash: bash runs the next line, the parser would hide it"}
		}
		return found == nil
	})
	return found
}

// parseErr converts an error from the parser into a position and a message.
func parseErr(err error) (line, col int, msg string) {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return int(pe.Pos.Line()), int(pe.Pos.Col()), pe.Text
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		msg := le.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return int(le.Pos.Line()), int(le.Pos.Col()), msg
	}
	return 0, 0, err.Error()
}

// Analyze parses src as bash and returns every simple command it would run,
// in source order (a command substitution's commands come before the
// command whose word contains it). It returns a *ParseError if src is not
// valid shell, and an error wrapping ErrTooComplex if src is beyond the
// analysis's limits.
func Analyze(src string, opts *Options) (*Result, error) {
	return AnalyzeContext(context.Background(), src, opts)
}

// AnalyzeContext is Analyze that stops, returning an error that wraps
// ctxt.Err(), when ctxt is done.
func AnalyzeContext(ctxt context.Context, src string, opts *Options) (res *Result, err error) {
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				res = nil
				err = &ParseError{Msg: fmt.Sprintf("cannot analyze: internal error: %v", r)}
			}
		}()
	}
	if err := precheck(src); err != nil {
		return nil, err
	}
	if err := ctxt.Err(); err != nil {
		return nil, fmt.Errorf("analysis stopped: %w", err)
	}
	a := &analyzer{braceBudget: maxBraceTotal, braceBytes: maxBraceBytes, ctx: ctxt, budget: budgetFor(len(src)), nextCheck: checkEvery}
	if opts != nil {
		a.keepsDir = opts.KeepsDir
	}
	a.charge(len(src))
	f, perr := parse(src)
	if perr != nil {
		line, col, msg := parseErr(perr)
		return nil, &ParseError{Line: line, Col: col, Msg: msg}
	}
	a.res.Commands = make([]Command, 0, 4)
	sc := a.topScript(src, f, opts)
	dir := ""
	if opts != nil && path.IsAbs(opts.Dir) {
		dir = path.Clean(opts.Dir)
	}
	a.stmts(&ctx{sc: sc}, f.Stmts, dir)
	if a.err != nil {
		return nil, a.err
	}
	return &a.res, nil
}

// wrappers are the programs Analyze sees through, reporting the command
// they run (with the wrapper in Command.Wrappers).
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "timeout": true, "nice": true, "ionice": true, "nohup": true,
	"time": true, "command": true, "builtin": true, "exec": true, "stdbuf": true, "xargs": true, "watch": true,
	"chrt": true, "taskset": true, "setsid": true, "unbuffer": true, "su": true, "busybox": true,
}

// IsWrapper reports whether Analyze sees through the program name: the
// command it runs is reported instead, with name in its Wrappers.
func IsWrapper(name string) bool { return wrappers[name] }
