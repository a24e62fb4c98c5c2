package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// maxAnswerBytes caps what is read from an approver program's stdout.
const maxAnswerBytes = 1 << 20

// Command is an [Approver] that runs a program for every question. The
// program is started directly from Argv (no shell), gets the [Request] as
// one JSON object on stdin, and must write one [Answer] as a JSON object on
// stdout and exit with status 0.
//
// Anything else is a deny with an error: exit status 2 (the program's way
// to say "deny, and this is not a crash"), another non-zero status, output
// that is not exactly one JSON answer, or an unknown answer kind. When ctx
// is done the process is killed and Approve returns ctx.Err().
//
// A Command is safe for concurrent use; each call runs its own process.
type Command struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH
	// when it holds no slash. Required.
	Argv []string
	// Env, when not nil, is the program's whole environment; nil means the
	// environment of this process.
	Env []string
	// Dir is the program's working directory; empty means this process's.
	Dir string
	// WaitDelay bounds how long Approve waits for the program's output
	// pipes to close after it was killed or exited (a grandchild may hold
	// them); the default is one second.
	WaitDelay time.Duration
}

// Approve runs the program and returns its answer. On any failure the
// returned answer is a deny and the error says what went wrong.
func (c *Command) Approve(ctx context.Context, req *Request) (Answer, error) {
	deny := Answer{Kind: Deny}
	p := program{label: "approval command", argv: c.Argv, env: c.Env, dir: c.Dir, waitDelay: c.WaitDelay}
	out, err := p.run(ctx, req)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.code == 2 {
			return deny, fmt.Errorf("%s %s denied the call (exit status 2)%s", p.label, p.name(), stderrNote(ee.stderr))
		}
		return deny, err
	}
	var a Answer
	if err := decodeStrict(out, "answer", &a); err != nil {
		return deny, fmt.Errorf("%s %s: stdout: %w", p.label, p.name(), err)
	}
	if err := a.Validate(); err != nil {
		return deny, fmt.Errorf("%s %s: %w", p.label, p.name(), err)
	}
	// The channel is this one, whatever the program wrote in "via": it
	// cannot pass its answer off as one given on the page.
	a.Via = ViaCommand
	return a, nil
}

// program is an external program configured by the user: what [Command]
// and [CommandClassifier] run. label names its role in errors.
type program struct {
	label     string
	argv      []string
	env       []string
	dir       string
	waitDelay time.Duration
}

func (p program) name() string {
	if len(p.argv) == 0 {
		return ""
	}
	return p.argv[0]
}

// exitError is a program that exited with a non-zero status.
type exitError struct {
	label, name string
	code        int
	err         error
	stderr      string
}

func (e *exitError) Error() string {
	return fmt.Sprintf("%s %s failed: %v%s", e.label, e.name, e.err, stderrNote(e.stderr))
}

func (e *exitError) Unwrap() error { return e.err }

// run encodes v as JSON, starts the program with it (and a newline) on
// stdin, and returns what the program wrote on stdout once it exited with
// status 0. A non-zero exit is an [*exitError]; when ctx is done the
// process is killed and the error wraps ctx.Err(). Every error names the
// program.
func (p program) run(ctx context.Context, v any) ([]byte, error) {
	if p.name() == "" {
		return nil, fmt.Errorf("%s: no program configured", p.label)
	}
	in, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s %s: encode request: %w", p.label, p.name(), err)
	}
	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	cmd.Dir = p.dir
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	stdout := limitedBuffer{max: maxAnswerBytes}
	stderr := limitedBuffer{max: 4 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = p.waitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = time.Second
	}
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s %s: %w", p.label, p.name(), ctx.Err())
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return nil, &exitError{label: p.label, name: p.name(), code: ee.ExitCode(), err: runErr, stderr: stderr.String()}
		}
		return nil, fmt.Errorf("%s %s failed: %w%s", p.label, p.name(), runErr, stderrNote(stderr.String()))
	}
	if stdout.over {
		return nil, fmt.Errorf("%s %s wrote more than %d bytes on stdout", p.label, p.name(), maxAnswerBytes)
	}
	return stdout.Bytes(), nil
}

// decodeStrict decodes b as exactly one JSON value into v, refusing
// fields v does not have. what names the value in errors ("answer").
func decodeStrict(b []byte, what string, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("no %s: want one JSON object", what)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad %s %q: %v", what, clip(b, 200), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("bad %s %q: more than one JSON value", what, clip(b, 200))
	}
	return nil
}

func stderrNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + clip([]byte(s), 500)
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// limitedBuffer keeps the first max bytes written to it and notes whether
// more came. It has no ReadFrom, so io.Copy goes through Write and the
// limit holds.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }
