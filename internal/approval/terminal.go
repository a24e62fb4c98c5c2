package approval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/policy"
)

// DefaultConfirmAttempts is how many confirmations of a destructive call a
// [Terminal] asks for before it denies the call, when
// [Terminal.ConfirmAttempts] is zero.
const DefaultConfirmAttempts = 3

// confirmWord is what a person types to allow a destructive call that has
// no [Request.ConfirmTarget].
const confirmWord = "yes"

// Limits on what a question shows of one field or list, so that a huge
// command cannot push the rest of the question off the screen. What is cut
// is announced.
const (
	maxFieldRunes = 1000
	maxListItems  = 20
	maxLineBytes  = 64 << 10
)

// ErrInputEnded is wrapped by the error of a question whose input ended
// (end of file) before an answer was given; every later question fails
// with it too.
var ErrInputEnded = errors.New("the input ended before an answer was given")

// Terminal is an [Approver] that asks a person at a terminal. Each
// question shows what the call does — the tool, the summary, every part
// with its risk, the engine's decision and reason, the paths it reads,
// writes and deletes and the hosts it contacts, then the call's risk,
// reason and message, the rule that asked and the suggested rule — and
// waits for one line:
//
//	a  allow once
//	s  allow for this session
//	p  always allow in this project
//	u  always allow for me
//	e  edit the rule to remember, then choose p or u
//	d  deny, then an optional message for the model
//
// These are the keys and the words of the web approval page ([Keys]).
// Keys are case-insensitive; anything else asks again, naming the keys.
// s is always offered: it remembers this very call for the session, not
// a rule. p and u are offered only when there is a rule to remember (the
// suggested one or one written with e); an edited rule must parse and is
// returned in [Answer.Rule]. For a [Request.Destructive] call only a and
// d are offered, and a must be confirmed by typing
// [Request.ConfirmTarget] as shown (or "yes" when it is empty); after
// [Terminal.ConfirmAttempts] wrong confirmations the call is denied.
// Every answer's [Answer.Via] is "terminal".
//
// Everything that came from the agent is shown with control characters,
// escape sequences and bidirectional-text controls replaced by visible
// escapes such as \x1b, so the agent cannot repaint or hide part of the
// question. Colours are used only when the output is a terminal, the
// NO_COLOR environment variable is not set and TERM is not "dumb".
//
// Concurrent calls to Approve are served one at a time: a question waits,
// showing nothing, until the one before it is answered, and a question
// whose ctx ends while it waits is never shown. When ctx ends during a
// question, Approve notes on the terminal that the question was withdrawn
// and returns ctx.Err() at once. A line typed for a withdrawn question is
// not taken as the answer to the next one unless it was typed after the
// next one appeared, and when the input is a terminal, anything typed
// before a question appears is discarded; other inputs, such as a pipe
// of scripted answers, are read in order.
//
// A Terminal reads its input in one goroutine of its own, started by the
// first question and ended by [Terminal.Close]. A read cannot be
// interrupted, so after a withdrawn question that goroutine stays blocked
// in its read until the next line arrives or the input ends, even past
// Close unless the Terminal opened /dev/tty itself (Close closes it). No
// other goroutine outlives a call.
//
// The zero Terminal is ready to use. Its fields must not change after the
// first call, and a Terminal must not be copied after first use.
type Terminal struct {
	// In is where answers are read, one line each; nil means /dev/tty.
	In io.Reader
	// Out is where questions are written; nil means /dev/tty.
	Out io.Writer
	// ConfirmAttempts is how many times a destructive call's confirmation
	// is asked before the call is denied; zero means
	// [DefaultConfirmAttempts].
	ConfirmAttempts int

	initOnce  sync.Once
	turn      chan struct{} // holds a token while a question is on the terminal
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	mu     sync.Mutex // guards tty and closed
	tty    *os.File
	closed bool

	// The fields below are used only by the holder of turn.
	started bool
	want    chan readRequest // to the reader: read one line
	lines   chan inputLine   // from the reader
	reading bool             // a read was requested and its line not yet taken
	readErr error            // the input failed or ended; sticky
}

// readRequest asks the reader for one line or, with drain, to discard
// what was typed but not yet read.
type readRequest struct{ drain bool }

// inputLine is the reader's reply to a readRequest.
type inputLine struct {
	text    string
	err     error
	at      time.Time // when the line was complete
	drained bool      // the reply to a drain
}

// Approve asks the person and returns their answer. On any failure —
// there is no terminal, the input ended, ctx ended — the returned answer
// is a deny and the error says why; when ctx ended the error is
// ctx.Err().
func (t *Terminal) Approve(ctx context.Context, req *Request) (Answer, error) {
	deny := Answer{Kind: Deny}
	if req == nil {
		return deny, errors.New("approval terminal: no request")
	}
	t.init()
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return deny, ctx.Err()
	}
	defer func() { <-t.turn }()
	if err := ctx.Err(); err != nil {
		return deny, err
	}
	in, out, err := t.streams()
	if err != nil {
		return deny, err
	}
	if !t.started {
		t.started = true
		go t.readLoop(in)
	}
	q := &question{t: t, ctx: ctx, req: req, w: &errWriter{w: out}, st: styleFor(out)}
	var a Answer
	err = t.drain(ctx)
	if err == nil {
		a, err = q.ask()
	}
	if err != nil {
		if ctx.Err() != nil {
			if q.rendered {
				q.printf("\n%s\n", q.st.dim(fmt.Sprintf("(question withdrawn: %v)", ctx.Err())))
			}
			return deny, ctx.Err()
		}
		return deny, err
	}
	return a, nil
}

func (t *Terminal) init() {
	t.initOnce.Do(func() {
		t.turn = make(chan struct{}, 1)
		t.done = make(chan struct{})
		t.want = make(chan readRequest, 1)
		t.lines = make(chan inputLine, 1)
	})
}

// Close ends the Terminal's reader goroutine once it is not in a read,
// and closes /dev/tty if the Terminal opened it, which ends a read at
// once; a question on the terminal then fails. It does not close In or
// Out. Approve fails after Close.
func (t *Terminal) Close() error {
	t.init()
	t.closeOnce.Do(func() { close(t.done) })
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.tty == nil {
		return nil
	}
	err := t.tty.Close()
	t.tty = nil
	return err
}

// streams returns the input and output, opening /dev/tty for what is not
// set.
func (t *Terminal) streams() (io.Reader, io.Writer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, errors.New("approval terminal: closed")
	}
	in, out := t.In, t.Out
	if in != nil && out != nil {
		return in, out, nil
	}
	if t.tty == nil {
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("approval terminal: there is no terminal to ask on (%w); run toolgate from a terminal or configure another approver", err)
		}
		t.tty = f
	}
	if in == nil {
		in = t.tty
	}
	if out == nil {
		out = t.tty
	}
	return in, out, nil
}

// readLoop reads one line from r for every request on t.want and sends
// it on t.lines, which never blocks: there is at most one request at a
// time. It returns after the first error, which it sends too, or once
// t.done is closed.
func (t *Terminal) readLoop(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		var w readRequest
		select {
		case w = <-t.want:
		case <-t.done:
			return
		}
		if w.drain {
			drainTerminal(br, r)
			t.lines <- inputLine{drained: true}
			continue
		}
		s, err := scanLine(br)
		t.lines <- inputLine{text: s, err: err, at: time.Now()}
		if err != nil {
			return
		}
	}
}

// drain discards input typed before the question is shown, unless a
// read left by a withdrawn question is pending: then nothing waits unread
// and readLine discards that read's line if it came before the prompt.
// Only the holder of t.turn may call it.
func (t *Terminal) drain(ctx context.Context) error {
	if t.reading || t.readErr != nil {
		return nil
	}
	t.want <- readRequest{drain: true}
	t.reading = true
	_, err := t.readLine(ctx, time.Time{})
	return err
}

// readLine returns the next line of input without its line ending.
// shown is when its prompt began to appear: a line completed before that,
// left over from a withdrawn question, is discarded. With a
// zero shown, it only waits for a pending drain. Only the holder of
// t.turn may call it.
func (t *Terminal) readLine(ctx context.Context, shown time.Time) (string, error) {
	for {
		if t.readErr != nil {
			return "", t.readErr
		}
		if !t.reading {
			if shown.IsZero() {
				return "", nil
			}
			t.want <- readRequest{}
			t.reading = true
		}
		select {
		case l := <-t.lines:
			t.reading = false
			switch {
			case l.drained:
				continue
			case l.err == io.EOF:
				t.readErr = fmt.Errorf("approval terminal: %w", ErrInputEnded)
				return "", t.readErr
			case l.err != nil:
				t.readErr = fmt.Errorf("approval terminal: read: %w", l.err)
				return "", t.readErr
			case l.at.Before(shown):
				continue
			}
			return l.text, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// scanLine reads up to and without the next "\n" or "\r\n", keeping at
// most maxLineBytes of it. A last line with no newline is returned before
// io.EOF is.
func scanLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		if room := maxLineBytes - len(b); room > 0 {
			b = append(b, frag[:min(len(frag), room)]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(b) > 0:
			return strings.TrimRight(string(b), "\r\n"), nil
		case err != nil:
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

// drainTerminal discards what was typed on the terminal r and not yet
// read, in br's buffer or in the terminal's. It does nothing for other
// inputs, whose answers may have been written in advance on purpose.
func drainTerminal(br *bufio.Reader, r io.Reader) {
	f, ok := r.(*os.File)
	if !ok || !isTerminal(f) {
		return
	}
	br.Discard(br.Buffered())
	// A deadline already past would stop the read before it looks at the
	// input, so the deadline is a moment away.
	if f.SetReadDeadline(time.Now().Add(20*time.Millisecond)) != nil {
		return
	}
	defer f.SetReadDeadline(time.Time{})
	var buf [512]byte
	for range 64 {
		if _, err := f.Read(buf[:]); err != nil {
			return
		}
	}
}

// question is one question on the terminal, from rendering to answer.
type question struct {
	t   *Terminal
	ctx context.Context
	req *Request
	w   *errWriter
	st  style

	rendered bool // the call was shown
}

func (q *question) printf(format string, args ...any) { fmt.Fprintf(q.w, format, args...) }

// line shows prompt and reads the answer to it.
// A line completed once the prompt began to appear is its answer.
func (q *question) line(prompt string) (string, error) {
	shown := time.Now()
	q.printf("%s", prompt)
	if q.w.err != nil {
		return "", fmt.Errorf("approval terminal: write: %w", q.w.err)
	}
	return q.t.readLine(q.ctx, shown)
}

func (q *question) ask() (Answer, error) {
	q.render()
	q.printf("\n")
	if q.req.Destructive {
		return q.askDestructive()
	}
	rule := q.req.SuggestedRule
	q.menu(rule)
	for {
		s, err := q.line(q.prompt(rule))
		if err != nil {
			return Answer{}, err
		}
		switch key := strings.ToLower(strings.TrimSpace(s)); key {
		case KeyAllowOnce:
			return Answer{Kind: AllowOnce, Via: ViaTerminal}, nil
		case KeyAllowSession:
			return Answer{Kind: AllowSession, Via: ViaTerminal}, nil
		case KeyAllowProject, KeyAllowUser:
			if rule == "" {
				q.printf("There is no rule to remember this by: press e to write one, or answer %s.\n", q.keyList(rule))
				continue
			}
			a := Answer{Kind: keyKinds[key], Via: ViaTerminal}
			if rule != q.req.SuggestedRule {
				a.Rule = rule
			}
			return a, nil
		case KeyEdit:
			r, err := q.editRule(rule)
			if err != nil {
				return Answer{}, err
			}
			if r != rule {
				rule = r
				q.menu(rule)
			}
		case KeyDeny:
			return q.deny()
		default:
			q.printf("Please answer %s.\n", q.keyList(rule))
		}
	}
}

// The keys of an answer, the same on the terminal and on the web
// approval page.
const (
	KeyAllowOnce    = "a"
	KeyAllowSession = "s"
	KeyAllowProject = "p"
	KeyAllowUser    = "u"
	KeyDeny         = "d"
	// KeyEdit edits the rule that p and u remember (terminal only: the
	// page shows the rule in a field).
	KeyEdit = "e"
)

// Where a person answered ([Answer.Via]).
const (
	ViaTerminal = "terminal"
	ViaPage     = "page"
	ViaLink     = "link"
	ViaAPI      = "api"
	// ViaCommand is an answer a [Command] read from its program.
	ViaCommand = "command"
	// ViaWebhook is an answer an [HTTP] approver read from its web hook.
	ViaWebhook = "webhook"
)

// Keys lists the answers in the order they are offered, each with its
// key and its label, as the web approval page words them.
var Keys = []struct {
	Key   string
	Kind  Kind
	Label string
}{
	{KeyAllowOnce, AllowOnce, "Allow once"},
	{KeyAllowSession, AllowSession, "Allow for session"},
	{KeyAllowProject, AllowProject, "Always allow in project"},
	{KeyAllowUser, AllowUser, "Always allow for me"},
	{KeyDeny, Deny, "Deny"},
}

// keyKinds maps a key to the kind it answers.
var keyKinds = map[string]Kind{KeyAllowOnce: AllowOnce, KeyAllowSession: AllowSession, KeyAllowProject: AllowProject, KeyAllowUser: AllowUser, KeyDeny: Deny}

// label is the label of kind in [Keys].
func label(kind Kind) string {
	for _, k := range Keys {
		if k.Kind == kind {
			return k.Label
		}
	}
	return string(kind)
}

// keyList names the keys offered, as "a, s, e or d".
func (q *question) keyList(rule string) string {
	if rule == "" {
		return "a, s, e or d"
	}
	return "a, s, p, u, e or d"
}

// prompt is the prompt of a question that is not destructive: the keys
// offered.
func (q *question) prompt(rule string) string {
	keys := "a/s/e/d"
	if rule != "" {
		keys = "a/s/p/u/e/d"
	}
	return q.st.bold("[" + keys + "] > ")
}

// editRule asks for the rule to remember until it parses; an empty line
// keeps current.
func (q *question) editRule(current string) (string, error) {
	prompt := "Rule to remember (a policy rule such as Bash(npm test:*)): "
	if current != "" {
		prompt = fmt.Sprintf("Rule to remember (Enter keeps %s): ", show(current))
	}
	for {
		s, err := q.line(prompt)
		if err != nil {
			return "", err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return current, nil
		}
		if strings.ContainsFunc(s, unicode.IsControl) {
			q.printf("%s it holds control characters\n", q.st.red("Not a rule:"))
			continue
		}
		if _, err := policy.ParseRule(s, policy.Allow, policy.Position{}); err != nil {
			q.printf("%s %s\n", q.st.red("Not a rule:"), show(err.Error()))
			continue
		}
		return s, nil
	}
}

func (q *question) askDestructive() (Answer, error) {
	q.printf("%s\n", q.st.red("This call cannot be undone, so it can only be allowed once."))
	q.printf("  %s %s (you will be asked to confirm)   %s %s\n", q.st.bold("[a]"), label(AllowOnce), q.st.bold("[d]"), label(Deny))
	for {
		s, err := q.line(q.st.bold("[a/d] > "))
		if err != nil {
			return Answer{}, err
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case KeyAllowOnce:
			return q.confirm()
		case KeyDeny:
			return q.deny()
		case KeyAllowSession, KeyAllowProject, KeyAllowUser, KeyEdit:
			q.printf("A destructive call is never remembered: answer a to allow it once or d to deny it.\n")
		default:
			q.printf("Please answer a or d.\n")
		}
	}
}

// confirm asks the person to type the confirmation target, as shown.
func (q *question) confirm() (Answer, error) {
	target := q.req.ConfirmWord()
	attempts := q.t.ConfirmAttempts
	if attempts <= 0 {
		attempts = DefaultConfirmAttempts
	}
	for i := 1; ; i++ {
		s, err := q.line(fmt.Sprintf("Type %s to allow it: ", q.st.bold(target)))
		if err != nil {
			return Answer{}, err
		}
		if q.req.Confirmed(s) {
			return Answer{Kind: AllowOnce, Confirm: strings.TrimSpace(s), Via: ViaTerminal}, nil
		}
		left := attempts - i
		if left <= 0 {
			break
		}
		tries := "tries"
		if left == 1 {
			tries = "try"
		}
		q.printf("That is not %s; %d %s left.\n", target, left, tries)
	}
	q.printf("%s\n", q.st.red("Not confirmed, so the call is denied."))
	return Answer{Kind: Deny, Message: "the user did not confirm the destructive call", Via: ViaTerminal}, nil
}

func (q *question) deny() (Answer, error) {
	s, err := q.line("Message for the model (optional, Enter to skip): ")
	if errors.Is(err, ErrInputEnded) {
		// The deny was given; only the optional message is missing.
		return Answer{Kind: Deny, Via: ViaTerminal}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	return Answer{Kind: Deny, Message: strings.TrimSpace(s), Via: ViaTerminal}, nil
}

// menu shows the choices for a call that is not destructive, with the
// keys and words of the web approval page.
func (q *question) menu(rule string) {
	b := q.st.bold
	q.printf("  %s %s   %s %s\n", b("[a]"), label(AllowOnce), b("[s]"), label(AllowSession))
	if rule == "" {
		q.printf("  %s write a rule to keep   %s %s\n", b("[e]"), b("[d]"), label(Deny))
		return
	}
	q.printf("  %s %s   %s %s\n", b("[p]"), label(AllowProject), b("[u]"), label(AllowUser))
	q.printf("  %s edit the rule   %s %s\n", b("[e]"), b("[d]"), label(Deny))
	q.printf("  %s keep %s\n", b("p, u"), show(rule))
}

// render shows the call.
func (q *question) render() {
	q.rendered = true
	r, st := q.req, q.st
	field := func(indent, name, value string) {
		if value != "" {
			q.printf("%s%s %s\n", indent, st.dim(fmt.Sprintf("%-9s", name)), value)
		}
	}
	list := func(indent, name string, items []string) {
		if len(items) == 0 {
			return
		}
		shown := make([]string, 0, min(len(items), maxListItems))
		for _, it := range items[:min(len(items), maxListItems)] {
			shown = append(shown, show(it))
		}
		s := strings.Join(shown, ", ")
		if n := len(items) - len(shown); n > 0 {
			s += st.dim(fmt.Sprintf(" … and %d more", n))
		}
		field(indent, name, s)
	}
	q.printf("\n%s\n", st.bold("toolgate: a tool call needs your approval"))
	summary := r.Summary
	if summary == "" {
		summary = r.Tool
	}
	q.printf("  %s\n", st.bold(show(summary)))
	field("  ", "tool", show(r.Tool))
	field("  ", "session", show(r.Session))
	field("  ", "cwd", show(r.Cwd))
	if len(r.Units) == 0 {
		for _, k := range slices.Sorted(maps.Keys(r.Input)) {
			v, ok := r.Input[k].(string)
			if !ok {
				b, _ := json.Marshal(r.Input[k])
				v = string(b)
			}
			field("  ", "input", show(k)+": "+show(v))
		}
	}
	for _, u := range r.Units {
		q.printf("  %s %s\n", st.bold("·"), show(u.Label))
		field("      ", "risk", st.risk(u.Risk, show(u.Risk)))
		decision := show(u.Decision)
		if u.Reason != "" {
			decision += " (" + show(u.Reason) + ")"
		}
		field("      ", "decision", decision)
		list("      ", "reads", u.Reads)
		list("      ", "writes", u.Writes)
		list("      ", "deletes", u.Deletes)
		list("      ", "hosts", u.Hosts)
	}
	// One part that says what the call says is not said twice.
	if len(r.Units) != 1 || r.Units[0].Risk != r.Risk || r.Units[0].Reason != r.Reason {
		field("  ", "risk", st.risk(r.Risk, show(r.Risk)))
		field("  ", "reason", show(r.Reason))
	}
	field("  ", "message", show(r.Message))
	field("  ", "asked by", show(r.Rule))
	field("  ", "suggested", show(r.SuggestedRule))
}

// show prepares text that came from the agent for the terminal: it is
// cut to maxFieldRunes (saying so) and cleaned of control characters.
func show(s string) string {
	n := 0
	for i := range s {
		if n == maxFieldRunes {
			return clean(s[:i]) + fmt.Sprintf(" … (%d more characters not shown)", utf8.RuneCountInString(s[i:]))
		}
		n++
	}
	return clean(s)
}

// clean replaces everything in s that a terminal would act on rather than
// print with visible escapes; see [termtext.Escape].
func clean(s string) string { return termtext.Escape(s) }

// errWriter keeps the first write error and skips later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// style paints text with ANSI colours, or leaves it alone when off.
type style struct{ on bool }

// styleFor turns colours on when w is a terminal and NO_COLOR is not set.
func styleFor(w io.Writer) style {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return style{}
	}
	if _, set := os.LookupEnv("NO_COLOR"); set || os.Getenv("TERM") == "dumb" {
		return style{}
	}
	return style{on: true}
}

func (s style) paint(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string   { return s.paint("1", t) }
func (s style) dim(t string) string    { return s.paint("2", t) }
func (s style) red(t string) string    { return s.paint("1;31", t) }
func (s style) yellow(t string) string { return s.paint("33", t) }
func (s style) green(t string) string  { return s.paint("32", t) }

// risk paints text in the colour of the risk level.
func (s style) risk(level, text string) string {
	switch level {
	case "destructive", "credential":
		return s.red(text)
	case "execute", "network", "write":
		return s.yellow(text)
	case "read":
		return s.green(text)
	}
	return text
}

// isTerminal reports whether f is a character device, as a terminal is.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
