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
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return deny, errors.New("approval command: no program configured")
	}
	in, err := json.Marshal(req)
	if err != nil {
		return deny, fmt.Errorf("approval command: encode request: %w", err)
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	var stdout limitedBuffer
	stdout.max = maxAnswerBytes
	var stderr limitedBuffer
	stderr.max = 4 << 10
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = time.Second
	}
	name := c.Argv[0]
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return deny, fmt.Errorf("approval command %s: %w", name, ctx.Err())
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) && ee.ExitCode() == 2 {
			return deny, fmt.Errorf("approval command %s denied the call (exit status 2)%s", name, stderrNote(&stderr))
		}
		return deny, fmt.Errorf("approval command %s failed: %v%s", name, runErr, stderrNote(&stderr))
	}
	if stdout.over {
		return deny, fmt.Errorf("approval command %s wrote more than %d bytes", name, maxAnswerBytes)
	}
	a, err := decodeAnswer(stdout.Bytes())
	if err != nil {
		return deny, fmt.Errorf("approval command %s: %w", name, err)
	}
	return a, nil
}

// decodeAnswer decodes exactly one JSON answer with only known fields.
func decodeAnswer(b []byte) (Answer, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return Answer{Kind: Deny}, errors.New("no answer on stdout")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var a Answer
	if err := dec.Decode(&a); err != nil {
		return Answer{Kind: Deny}, fmt.Errorf("bad answer %q: %v", clip(b, 200), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Answer{Kind: Deny}, fmt.Errorf("bad answer %q: more than one JSON value", clip(b, 200))
	}
	if err := a.Validate(); err != nil {
		return Answer{Kind: Deny}, err
	}
	return a, nil
}

func stderrNote(b *limitedBuffer) string {
	s := strings.TrimSpace(b.String())
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
// more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room < len(p) {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
