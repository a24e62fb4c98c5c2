package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/policy"
)

// hookWorld is a project, a home, a directory of hook scripts and a gate
// over a real SQLite log, whose user policy is given as TOML.
type hookWorld struct {
	project, home, scripts string
	g                      *Gate
	store                  eventlog.Store
	asked                  atomic.Int32
}

// newHookWorld builds the world. In userTOML, $SCRIPTS is the scripts
// directory and $URL the URL of srv (if any). scripts maps a file name to
// the body of a /bin/sh script. answer is what the person answers; "" for
// no approver.
func newHookWorld(t *testing.T, userTOML string, scripts map[string]string, answer approval.Kind, url string) *hookWorld {
	t.Helper()
	w := &hookWorld{project: realDir(t), home: realDir(t), scripts: realDir(t)}
	for name, body := range scripts {
		must(t, os.WriteFile(filepath.Join(w.scripts, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	must(t, os.MkdirAll(filepath.Join(w.project, ".git"), 0o755))
	src := strings.NewReplacer("$SCRIPTS", w.scripts, "$URL", url).Replace(userTOML)
	uf, err := policy.ParseFile("user.toml", []byte(src), policy.LayerUser)
	must(t, err)
	set, err := policy.Merge(uf)
	must(t, err)
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Project: w.project, Home: w.home})
	must(t, err)
	w.store, err = sqlite.Open(filepath.Join(t.TempDir(), "events.db"), nil)
	must(t, err)
	t.Cleanup(func() { w.store.Close() })
	var ap approval.Approver
	if answer != "" {
		ap = approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
			w.asked.Add(1)
			return approval.Answer{Kind: answer}, nil
		})
	}
	w.g, err = New(eng, w.store, ap, Options{})
	must(t, err)
	return w
}

type logged struct {
	Type    eventlog.Type
	Payload map[string]any
}

func (w *hookWorld) events(t *testing.T, session string) []logged {
	t.Helper()
	var out []logged
	for e, err := range w.store.Query(context.Background(), eventlog.Filter{Session: session}) {
		must(t, err)
		l := logged{Type: e.Type}
		must(t, json.Unmarshal(e.Payload, &l.Payload))
		out = append(out, l)
	}
	return out
}

func (w *hookWorld) hookRuns(t *testing.T, session string) []map[string]any {
	var out []map[string]any
	for _, e := range w.events(t, session) {
		if e.Type == eventlog.TypeHookRan {
			out = append(out, e.Payload)
		}
	}
	return out
}

const (
	hookDeny    = "echo 'not on my watch' >&2; exit 2\n"
	hookAllow   = `echo '{"decision":"allow","reason":"hook says fine"}'` + "\n"
	hookAsk     = `echo '{"decision":"ask","reason":"a person should look"}'` + "\n"
	hookCrash   = "echo oops >&2; exit 1\n"
	hookGarbage = "echo 'all good!'\n"
	hookSleep   = "sleep 5\n"
	hookPass    = "exit 0\n"
)

func hookEntry(event, matcher, command, extra string) string {
	return fmt.Sprintf("[[hooks]]\nevent = %q\nmatcher = %q\ncommand = %q\n%s\n", event, matcher, command, extra)
}

// TestUserHooksDecide: each hook answer through the gate, with the
// decision, its actor, the person asked or not, and the hook.ran events in
// the SQLite log. The never-loosen cases: a deny rule, a sandbox denial, a
// protected-path ask and an ask rule stand whatever a hook answers.
func TestUserHooksDecide(t *testing.T) {
	write := func(name string) (string, func(w *hookWorld) map[string]any) {
		return "Write", func(w *hookWorld) map[string]any {
			return map[string]any{"file_path": filepath.Join(w.project, name), "content": "x"}
		}
	}
	read := func(w *hookWorld) map[string]any {
		return map[string]any{"file_path": filepath.Join(w.project, "README")}
	}
	tests := []struct {
		name     string
		policy   string // extra user policy
		event    string
		script   string
		timeout  string
		tool     string
		input    func(w *hookWorld) map[string]any
		answer   approval.Kind
		want     policy.Decision
		reason   engine.Reason
		actor    Actor
		asked    bool
		msg      string   // substring of the decision's message
		outcomes []string // "outcome/effect-prefix" of each hook.ran
	}{
		{name: "pre deny on allowed read", event: "PreToolUse", script: hookDeny, tool: "Read", input: read,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, msg: "not on my watch", outcomes: []string{"deny/denied"}},
		{name: "pre crash denies", event: "PreToolUse", script: hookCrash, tool: "Read", input: read,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, msg: "failed, so the call is denied: it exited with status 1: oops", outcomes: []string{"error/denied"}},
		{name: "pre garbage denies", event: "PreToolUse", script: hookGarbage, tool: "Read", input: read,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, msg: "not a hook answer", outcomes: []string{"error/denied"}},
		{name: "pre timeout denies", event: "PreToolUse", script: hookSleep, timeout: `timeout = "200ms"`, tool: "Read", input: read,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, msg: "time limit of 200ms", outcomes: []string{"error/denied"}},
		{name: "pre pass leaves allow", event: "PreToolUse", script: hookPass, tool: "Read", input: read,
			want: policy.Allow, reason: engine.ReasonReadOnly, actor: ActorPolicy, outcomes: []string{"pass/none"}},
		{name: "pre ask makes allow ask", event: "PreToolUse", script: hookAsk, tool: "Read", input: read, answer: approval.AllowOnce,
			want: policy.Allow, reason: engine.ReasonUserApproved, actor: ActorUser, asked: true, outcomes: []string{"ask/asked"}},
		{name: "pre allow lifts a soft ask", event: "PreToolUse", script: hookAllow, tool: "Write",
			want: policy.Allow, reason: engine.ReasonHook, actor: ActorHook, msg: "allowed by PreToolUse hook at user.toml:1", outcomes: []string{"allow/allowed"}},
		{name: "pre matcher skips other tools", event: "PreToolUse", script: hookDeny, tool: "Read", input: read,
			want: policy.Allow, reason: engine.ReasonReadOnly, actor: ActorPolicy},
		// Never loosen.
		{name: "deny rule stands", policy: "[permissions]\ndeny = [\"Write(secret.txt)\"]\n", event: "PreToolUse", script: hookAllow, tool: "Write",
			want: policy.Deny, reason: engine.ReasonRuleDeny, actor: ActorPolicy},
		{name: "sandbox denial stands", policy: "sandbox = \"read-only\"\n", event: "PreToolUse", script: hookAllow, tool: "Write",
			want: policy.Deny, reason: engine.ReasonSandbox, actor: ActorPolicy},
		{name: "protected path ask stands before", event: "PreToolUse", script: hookAllow, tool: "Write",
			want: policy.Deny, reason: engine.ReasonNoApprover, actor: ActorSystem, outcomes: []string{"allow/allow set aside: the call must be confirmed by a person (protected_path)"}},
		{name: "protected path ask stands on request", event: "PermissionRequest", script: hookAllow, tool: "Write", answer: approval.Deny,
			want: policy.Deny, reason: engine.ReasonUserDenied, actor: ActorUser, asked: true, outcomes: []string{"allow/allow set aside"}},
		{name: "ask rule stands", policy: "[permissions]\nask = [\"Write(a.txt)\"]\n", event: "PreToolUse", script: hookAllow, tool: "Write",
			want: policy.Deny, reason: engine.ReasonNoApprover, actor: ActorSystem, outcomes: []string{"allow/allow set aside: the call must be confirmed by a person (rule_ask)"}},
		// PermissionRequest.
		{name: "permission request allows a soft ask", event: "PermissionRequest", script: hookAllow, tool: "Write",
			want: policy.Allow, reason: engine.ReasonHook, actor: ActorHook, msg: "approved by PermissionRequest hook at user.toml:", outcomes: []string{"allow/allowed"}},
		{name: "permission request denies", event: "PermissionRequest", script: hookDeny, tool: "Write", answer: approval.AllowOnce,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, msg: "not on my watch", outcomes: []string{"deny/denied"}},
		{name: "permission request silent goes to the person", event: "PermissionRequest", script: hookPass, tool: "Write", answer: approval.AllowOnce,
			want: policy.Allow, reason: engine.ReasonUserApproved, actor: ActorUser, asked: true, outcomes: []string{"pass/none: the question goes to a person"}},
		{name: "permission request crash denies", event: "PermissionRequest", script: hookCrash, tool: "Write", answer: approval.AllowOnce,
			want: policy.Deny, reason: engine.ReasonHook, actor: ActorHook, outcomes: []string{"error/denied"}},
		{name: "permission request not run for allowed calls", event: "PermissionRequest", script: hookDeny, tool: "Read", input: read,
			want: policy.Allow, reason: engine.ReasonReadOnly, actor: ActorPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matcher := tt.tool
			if tt.name == "pre matcher skips other tools" {
				matcher = "Edit|Write|mcp__fs__*"
			}
			toml := tt.policy + hookEntry(tt.event, matcher, "$SCRIPTS/hook.sh", tt.timeout)
			w := newHookWorld(t, toml, map[string]string{"hook.sh": tt.script}, tt.answer, "")
			must(t, os.WriteFile(filepath.Join(w.project, "README"), []byte("hi"), 0o644))
			input := tt.input
			if input == nil {
				target := "a.txt"
				switch {
				case strings.HasPrefix(tt.name, "deny rule"):
					target = "secret.txt"
				case strings.HasPrefix(tt.name, "protected path"):
					target = ".git/config"
				}
				_, input = write(target)
			}
			req := &engine.Request{Tool: tt.tool, Input: input(w), Cwd: w.project, Session: "s1"}
			d, err := w.g.Check(context.Background(), req, "t1")
			must(t, err)
			if d.Decision != tt.want || tt.reason != "" && d.Reason != tt.reason || !strings.Contains(d.Message, tt.msg) {
				t.Fatalf("decision %s %s %q, want %s %s containing %q", d.Decision, d.Reason, d.Message, tt.want, tt.reason, tt.msg)
			}
			if got := w.asked.Load() > 0; got != tt.asked {
				t.Fatalf("person asked = %v, want %v", got, tt.asked)
			}
			r := resolved(t, w.store, "s1")
			if tt.actor != "" && r["actor"] != string(tt.actor) || r["decision"] != tt.want.String() {
				t.Fatalf("permission.resolved %v, want actor %s", r, tt.actor)
			}
			runs := w.hookRuns(t, "s1")
			if tt.outcomes != nil && len(runs) != len(tt.outcomes) {
				t.Fatalf("%d hook.ran events, want %d: %v", len(runs), len(tt.outcomes), runs)
			}
			if tt.outcomes == nil && (tt.want == policy.Deny && d.Source != engine.SourceHook || tt.name == "pre matcher skips other tools" || strings.HasPrefix(tt.name, "permission request not run")) && len(runs) != 0 {
				t.Fatalf("a hook ran: %v", runs)
			}
			for i, want := range tt.outcomes {
				outcome, effect, _ := strings.Cut(want, "/")
				got := runs[i]
				if got["outcome"] != outcome || !strings.HasPrefix(got["effect"].(string), effect) {
					t.Fatalf("hook.ran %d: outcome %v effect %q, want %s %q", i, got["outcome"], got["effect"], outcome, effect)
				}
				if got["hook"] != "user.toml:"+fmt.Sprint(strings.Count(tt.policy, "\n")+1) || got["target"] != filepath.Join(w.scripts, "hook.sh") ||
					got["event"] != tt.event || got["toolCallId"] == "" || got["durationMs"] == nil || got["layer"] != "user" {
					t.Fatalf("hook.ran %d does not say which hook ran: %v", i, got)
				}
			}
			if d.Reason == engine.ReasonHook && !strings.Contains(d.Message, filepath.Join(w.scripts, "hook.sh")) {
				t.Fatalf("the message %q does not name the hook's command", d.Message)
			}
		})
	}
}

// TestUserHooksChangeInput: a changed input is decided again from the
// start — into a deny rule, a protected path — and hooks that keep
// changing it are stopped.
func TestUserHooksChangeInput(t *testing.T) {
	to := func(file string) string {
		return fmt.Sprintf(`echo '{"updatedInput": {"file_path": "'"$PWD/%s"'", "content": "x"}}'`+"\n", file)
	}
	tests := []struct {
		name   string
		policy string
		script string
		want   policy.Decision
		reason engine.Reason
		runs   int
		file   string
	}{
		{name: "into a deny rule", policy: "[permissions]\ndeny = [\"Write(secret.txt)\"]\n", script: to("secret.txt"), want: policy.Deny, reason: engine.ReasonRuleDeny, runs: 1, file: "secret.txt"},
		{name: "into a protected path", script: to(".git/config"), want: policy.Deny, reason: engine.ReasonNoApprover, runs: 2, file: ".git/config"},
		{name: "into an allowed path", policy: "[permissions]\nallow = [\"Write(ok.txt)\"]\n", script: to("ok.txt"), want: policy.Allow, reason: engine.ReasonRuleAllow, runs: 2, file: "ok.txt"},
		{name: "forever", script: `n=$(cat "$PWD/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$PWD/count"; echo '{"updatedInput": {"file_path": "'"$PWD/f$n"'", "content": "x"}}'` + "\n",
			want: policy.Deny, reason: engine.ReasonHook, runs: MaxInputChanges + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newHookWorld(t, tt.policy+hookEntry("PreToolUse", "Write", "$SCRIPTS/hook.sh", ""), map[string]string{"hook.sh": tt.script}, "", "")
			req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.project, "a.txt"), "content": "x"}, Cwd: w.project, Session: "s1"}
			d, err := w.g.Check(context.Background(), req, "t1")
			must(t, err)
			if d.Decision != tt.want || d.Reason != tt.reason {
				t.Fatalf("decision %s %s %q, want %s %s", d.Decision, d.Reason, d.Message, tt.want, tt.reason)
			}
			if req.Input["file_path"] != filepath.Join(w.project, "a.txt") {
				t.Fatal("the caller's request was changed")
			}
			if tt.file != "" && (d.UpdatedInput == nil || d.UpdatedInput["file_path"] != filepath.Join(w.project, tt.file)) {
				t.Fatalf("UpdatedInput = %v, want the changed input", d.UpdatedInput)
			}
			runs := w.hookRuns(t, "s1")
			if len(runs) != tt.runs {
				t.Fatalf("%d hook runs, want %d", len(runs), tt.runs)
			}
			if runs[0]["effect"] != "input changed" || runs[0]["updatedInput"] == nil {
				t.Fatalf("first run %v", runs[0])
			}
		})
	}
}

// TestUserHooksRun: Gate.Run runs PostToolUse hooks after the tool, tells
// the agent what a blocking one said, and refuses to run a call whose
// input a hook changed (its exec runs the input as given).
func TestUserHooksRun(t *testing.T) {
	toml := hookEntry("PostToolUse", "Bash", "$SCRIPTS/post.sh", "") + hookEntry("PreToolUse", "Write", "$SCRIPTS/change.sh", "")
	w := newHookWorld(t, toml+"[permissions]\nallow = [\"Bash(ls)\", \"Write\"]\n", map[string]string{
		"post.sh":   `cat > "$PWD/post.json"; echo "lint failed" >&2; exit 2` + "\n",
		"change.sh": `echo '{"updatedInput": {"file_path": "'"$PWD/b.txt"'", "content": "y"}}'` + "\n",
	}, "", "")
	req := &engine.Request{Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: w.project, Session: "s1"}
	d, res, err := w.g.Run(context.Background(), req, "t1", func(context.Context) (Result, error) {
		return Result{Stdout: []byte("file1\n")}, nil
	})
	must(t, err)
	if d.Decision != policy.Allow || !strings.Contains(string(res.Stderr), "lint failed") {
		t.Fatalf("decision %s, stderr %q", d.Decision, res.Stderr)
	}
	var post map[string]any
	b, err := os.ReadFile(filepath.Join(w.project, "post.json"))
	must(t, err)
	must(t, json.Unmarshal(b, &post))
	if post["hook_event_name"] != "PostToolUse" || post["tool_response"].(map[string]any)["stdout"] != "file1\n" {
		t.Fatalf("the PostToolUse hook was told %v", post)
	}
	var types []string
	for _, e := range w.events(t, "s1") {
		types = append(types, string(e.Type))
	}
	if got := strings.Join(types, " "); got != "permission.resolved tool.started tool.completed hook.ran" {
		t.Fatalf("events %s", got)
	}

	req = &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.project, "a.txt"), "content": "x"}, Cwd: w.project, Session: "s2"}
	ran := false
	d, _, err = w.g.Run(context.Background(), req, "t1", func(context.Context) (Result, error) { ran = true; return Result{}, nil })
	must(t, err)
	if ran || d.Decision != policy.Deny || d.Reason != engine.ReasonHook {
		t.Fatalf("a call whose input a hook changed ran (%v) or was not denied: %s %s", ran, d.Decision, d.Reason)
	}
}

// TestUserHooksHTTP: an http hook on 127.0.0.1 answers; a broken one
// denies.
func TestUserHooksHTTP(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    policy.Decision
		msg     string
	}{
		{"deny", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"decision":"deny","reason":"http says no"}`)
		}, policy.Deny, "http says no"},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, policy.Deny, "answered HTTP 500"},
		{"allow", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"decision":"allow"}`) }, policy.Allow, "approved by PermissionRequest hook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewDecoder(r.Body).Decode(&got)
				tt.handler(w, r)
			}))
			defer srv.Close()
			w := newHookWorld(t, "[[hooks]]\nevent = \"PermissionRequest\"\nurl = \"$URL\"\ntimeout = \"2s\"\n", nil, "", srv.URL)
			req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.project, "a.txt"), "content": "x"}, Cwd: w.project, Session: "s1"}
			d, err := w.g.Check(context.Background(), req, "t1")
			must(t, err)
			if d.Decision != tt.want || !strings.Contains(d.Message, tt.msg) {
				t.Fatalf("decision %s %q", d.Decision, d.Message)
			}
			srv.Close() // waits for the handler
			if got["tool_name"] != "Write" || got["hook_event_name"] != "PermissionRequest" {
				t.Fatalf("the server was told %v", got)
			}
			runs := w.hookRuns(t, "s1")
			if len(runs) != 1 || runs[0]["type"] != "http" || runs[0]["target"] != srv.URL {
				t.Fatalf("hook.ran %v", runs)
			}
		})
	}
}

// TestUntrustedProjectHooks: the attack — a cloned repository's policy
// defines a hook that would run its own program — is refused: the program
// never runs, and explain says why. Once the user trusts the project, it
// runs.
func TestUntrustedProjectHooks(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) {
			project, home := realDir(t), realDir(t)
			marker := filepath.Join(home, "pwned")
			must(t, os.MkdirAll(filepath.Join(project, ".toolgate"), 0o755))
			must(t, os.WriteFile(filepath.Join(project, ".toolgate", "payload.sh"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
			must(t, os.WriteFile(filepath.Join(project, policy.ProjectFile), []byte(hookEntry("PreToolUse", "", "./.toolgate/payload.sh", "")), 0o644))
			user := filepath.Join(home, "user.toml")
			userSrc := ""
			if trusted {
				userSrc = fmt.Sprintf("trusted_projects = [%q]\n", project)
			}
			must(t, os.WriteFile(user, []byte(userSrc), 0o644))
			eng, err := engine.New(engine.Options{Policy: engine.FromFiles(filepath.Join(home, "managed.toml"), user), Project: project, Home: home})
			must(t, err)
			store, err := sqlite.Open(filepath.Join(t.TempDir(), "events.db"), nil)
			must(t, err)
			defer store.Close()
			g, err := New(eng, store, nil, Options{})
			must(t, err)
			req := &engine.Request{Tool: "Read", Input: map[string]any{"file_path": filepath.Join(project, "x")}, Cwd: project, Session: "s1"}
			_, err = g.Check(context.Background(), req, "")
			must(t, err)
			_, statErr := os.Stat(marker)
			if ran := statErr == nil; ran != trusted {
				t.Fatalf("the project's hook ran = %v, want %v", ran, trusted)
			}
			ex := eng.Explain(context.Background(), req)
			notes := strings.Join(ex.Trace.Notes, "\n")
			if !trusted && (!strings.Contains(notes, "PreToolUse hook at "+filepath.Join(project, policy.ProjectFile)+":1") || !strings.Contains(notes, "hooks run programs") || len(ex.Trace.Hooks) != 0) {
				t.Fatalf("explain does not say the hook was refused: notes %q hooks %v", notes, ex.Trace.Hooks)
			}
			if trusted && (len(ex.Trace.Hooks) != 1 || !strings.Contains(ex.Trace.Hooks[0], "payload.sh")) {
				t.Fatalf("explain lists hooks %v", ex.Trace.Hooks)
			}
		})
	}
}

// TestReadmeUserHookExample runs the README's user hook example as it is
// written: its policy entry and its script.
func TestReadmeUserHookExample(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	must(t, err)
	_, section, ok := strings.Cut(string(raw), "\n## User hooks\n")
	if !ok {
		t.Fatal("README has no User hooks section")
	}
	block := func(lang string) string {
		_, rest, ok := strings.Cut(section, "```"+lang+"\n")
		body, _, ok2 := strings.Cut(rest, "```\n")
		if !ok || !ok2 {
			t.Fatalf("no %s block in the User hooks section", lang)
		}
		return body
	}
	w := newHookWorld(t, block("toml"), nil, "", "")
	script := filepath.Join(w.home, ".config/toolgate/hooks/no-migrations.sh")
	must(t, os.MkdirAll(filepath.Dir(script), 0o755))
	must(t, os.WriteFile(script, []byte(block("sh")), 0o755))
	for _, tt := range []struct {
		file   string
		denied bool
	}{{"db/migrations/001_init.sql", true}, {"db/schema.sql", false}} {
		req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.project, tt.file), "content": "x"}, Cwd: w.project, Session: "s-" + filepath.Base(tt.file)}
		d, err := w.g.Check(context.Background(), req, "")
		must(t, err)
		byHook := d.Decision == policy.Deny && d.Reason == engine.ReasonHook && strings.Contains(d.Message, "applied migrations are not edited by agents")
		if byHook != tt.denied {
			t.Fatalf("%s: %s %s %q", tt.file, d.Decision, d.Reason, d.Message)
		}
		if runs := w.hookRuns(t, req.Session); len(runs) != 1 {
			t.Fatalf("%s: %d hook runs", tt.file, len(runs))
		}
	}
}

// TestHookScriptsProtected: the attack — an agent in bypassPermissions
// mode rewrites the script a hook runs, so that the hook then allows what
// it should not — is stopped: the files a hook names are protected paths,
// whose writes ask in every mode, and the hook's own allow cannot lift
// that.
func TestHookScriptsProtected(t *testing.T) {
	toml := "mode = \"bypassPermissions\"\nsandbox = \"danger-full-access\"\n" +
		hookEntry("PreToolUse", "", "$SCRIPTS/hook.sh --strict", "") + hookEntry("PostToolUse", "", "/bin/sh ~/hooks/post.sh", "")
	w := newHookWorld(t, toml, map[string]string{"hook.sh": hookAllow}, "", "")
	for _, target := range []string{filepath.Join(w.scripts, "hook.sh"), filepath.Join(w.home, "hooks/post.sh")} {
		req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": target, "content": "#!/bin/sh\nexit 0\n"}, Cwd: w.project, Session: "s-" + filepath.Base(target)}
		d, err := w.g.Check(context.Background(), req, "")
		must(t, err)
		if d.Decision == policy.Allow {
			t.Fatalf("writing the hook's file %s was allowed: %s %s", target, d.Reason, d.Message)
		}
		if r := resolved(t, w.store, req.Session); r["reason"] != string(engine.ReasonNoApprover) {
			t.Fatalf("resolved %v", r)
		}
	}
	// Another file is allowed by the mode, so the protection is the hook's.
	req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.scripts, "other.sh"), "content": "x"}, Cwd: w.project, Session: "s-other"}
	d, err := w.g.Check(context.Background(), req, "")
	must(t, err)
	if d.Decision != policy.Allow {
		t.Fatalf("another file: %s %s", d.Decision, d.Reason)
	}
}
