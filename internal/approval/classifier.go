package approval

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Classifier decides a call in auto mode, before any person is asked: it
// looks at the same [Request] a person would see and returns a [Verdict]
// that allows it, denies it, or hands it to a person.
//
// Classify must honour ctx and return promptly with an error wrapping
// ctx.Err() when ctx is done. On an error the returned Verdict is the zero
// Verdict, which is not valid; callers must never treat an error as an
// allow, and should hand the call to a person instead.
//
// The gate may call Classify from many goroutines at once, so
// implementations must be safe for concurrent use.
type Classifier interface {
	Classify(ctx context.Context, req *Request) (Verdict, error)
}

// Verdict is a classifier's decision about one call.
type Verdict struct {
	// Decision is "allow", "deny" or "ask"; "ask" hands the call to a
	// person through an [Approver].
	Decision string `json:"decision"`
	// Reason is a short explanation, recorded with the decision and, for a
	// deny, passed on to the model.
	Reason string `json:"reason,omitempty"`
}

// Validate reports whether v has one of the three known decisions.
func (v Verdict) Validate() error {
	switch v.Decision {
	case "allow", "deny", "ask":
		return nil
	}
	return fmt.Errorf("approval: unknown verdict decision %q (want allow, deny or ask)", v.Decision)
}

// ClassifierFunc adapts an ordinary function to the [Classifier]
// interface. The function must be safe for concurrent use if the gate is.
type ClassifierFunc func(ctx context.Context, req *Request) (Verdict, error)

// Classify calls f(ctx, req).
func (f ClassifierFunc) Classify(ctx context.Context, req *Request) (Verdict, error) {
	return f(ctx, req)
}

// CommandClassifier is a [Classifier] that runs a program for every call,
// as [Command] does: the program is started directly from Argv (no shell),
// gets the [Request] as one JSON object on stdin, and must write one
// [Verdict] as a JSON object on stdout and exit with status 0.
//
// Anything else is an error naming the program: a non-zero exit status
// (with the start of its stderr), output that is not exactly one JSON
// verdict with only the known fields, or an unknown decision. When ctx is
// done the process is killed and the error wraps ctx.Err().
//
// A CommandClassifier is safe for concurrent use; each call runs its own
// process.
type CommandClassifier struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH
	// when it holds no slash. Required.
	Argv []string
	// Env, when not nil, is the program's whole environment; nil means the
	// environment of this process.
	Env []string
	// Dir is the program's working directory; empty means this process's.
	Dir string
	// WaitDelay bounds how long Classify waits for the program's output
	// pipes to close after it was killed or exited; the default is one
	// second.
	WaitDelay time.Duration
}

// Classify runs the program and returns its verdict.
func (c *CommandClassifier) Classify(ctx context.Context, req *Request) (Verdict, error) {
	p := program{label: "classifier command", argv: c.Argv, env: c.Env, dir: c.Dir, waitDelay: c.WaitDelay}
	out, err := p.run(ctx, req)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if err := decodeStrict(out, "verdict", &v); err != nil {
		return Verdict{}, fmt.Errorf("%s %s: stdout: %w", p.label, p.name(), err)
	}
	if err := v.Validate(); err != nil {
		return Verdict{}, fmt.Errorf("%s %s: %w", p.label, p.name(), err)
	}
	return v, nil
}

// HTTPClassifier is a [Classifier] that POSTs the [Request] as JSON to a
// URL and reads one [Verdict] as JSON from the response, exactly as [HTTP]
// does for answers: the same headers, signature, size limit and errors.
//
// An HTTPClassifier is safe for concurrent use.
type HTTPClassifier struct {
	// URL is the http or https address to POST to. Required.
	URL string
	// Token, when not empty, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Secret, when not empty, signs every request; see [HTTP.Secret].
	Secret string
	// Client sends the requests; nil means a client that connects within
	// ten seconds, does not follow redirects, and gives up after ten
	// minutes.
	Client *http.Client
}

// Classify posts the request and returns the verdict in the response.
func (c *HTTPClassifier) Classify(ctx context.Context, req *Request) (Verdict, error) {
	h := hook{label: "classifier hook", url: c.URL, token: c.Token, secret: c.Secret, client: c.Client}
	var v Verdict
	if err := h.exchange(ctx, req, "verdict", &v); err != nil {
		return Verdict{}, err
	}
	if err := v.Validate(); err != nil {
		return Verdict{}, fmt.Errorf("%s %s: %w", h.label, h.where(), err)
	}
	return v, nil
}
