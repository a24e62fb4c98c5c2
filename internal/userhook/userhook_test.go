package userhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// script writes an executable sh script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func input(cwd string) *Input {
	return &Input{HookEventName: policy.HookPreToolUse, SessionID: "s1", ToolUseID: "tc_1", Cwd: cwd, ToolName: "Bash",
		ToolInput: map[string]any{"command": "ls"}, Decision: &Verdict{Decision: "allow", Reason: "read_only"}}
}

// TestCommandHooks runs real scripts: every way a hook can answer, and
// every way it can fail, which must come out as Failed (the gate denies).
func TestCommandHooks(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		body    string
		event   policy.HookEvent
		timeout time.Duration
		want    Outcome
		reason  string // substring of Reason
		input   map[string]any
	}{
		{name: "exit 0 silent", body: "exit 0\n", want: Pass},
		{name: "exit 0 whitespace", body: "echo; echo '  '\n", want: Pass},
		{name: "allow json", body: `echo '{"decision": "allow", "reason": "fine"}'` + "\n", want: Allow, reason: "fine"},
		{name: "action alias", body: `echo '{"action": "deny"}'` + "\n", want: Deny},
		{name: "ask json", body: `echo '{"decision": "ask", "reason": "look"}'` + "\n", want: Ask, reason: "look"},
		{name: "claude form", body: `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "nope"}}'` + "\n", want: Deny, reason: "nope"},
		{name: "updated input", body: `echo '{"updatedInput": {"command": "ls -l"}}'` + "\n", want: Pass, input: map[string]any{"command": "ls -l"}},
		{name: "exit 2 stderr", body: "echo 'rm is not for you' >&2; exit 2\n", want: Deny, reason: "rm is not for you"},
		{name: "exit 2 silent", body: "exit 2\n", want: Deny, reason: "exited with status 2"},
		{name: "exit 2 beats stdout", body: `echo '{"decision":"allow"}'; exit 2` + "\n", want: Deny},
		{name: "crash", body: "echo boom >&2; exit 1\n", want: Failed, reason: "exited with status 1: boom"},
		{name: "killed by signal", body: "kill -9 $$\n", want: Failed, reason: "exited with status"},
		{name: "garbage", body: "echo 'hello there'\n", want: Failed, reason: "not a hook answer"},
		{name: "unknown field", body: `echo '{"decision":"allow","extra":1}'` + "\n", want: Failed, reason: "unknown field"},
		{name: "bad decision", body: `echo '{"decision":"maybe"}'` + "\n", want: Failed, reason: `"maybe" is not allow, deny or ask`},
		{name: "two values", body: `echo '{}{}'` + "\n", want: Failed, reason: "more than one JSON value"},
		{name: "two decisions", body: `echo '{"decision":"allow","action":"deny"}'` + "\n", want: Failed, reason: "both allow and deny"},
		{name: "two inputs", body: `echo '{"updatedInput":{"a":1},"hookSpecificOutput":{"updatedInput":{"a":2}}}'` + "\n", want: Failed, reason: "two different ones"},
		{name: "empty input", body: `echo '{"updatedInput":{}}'` + "\n", want: Failed, reason: "empty updatedInput"},
		{name: "not utf8", body: `printf '\377\376'` + "\n", want: Failed, reason: "not UTF-8"},
		{name: "too much output", body: "head -c 2000000 /dev/zero | tr '\\0' ' '; echo x\n", want: Failed, reason: "more than 1048576 bytes"},
		{name: "timeout", body: "sleep 5\n", timeout: 200 * time.Millisecond, want: Failed, reason: "time limit of 200ms"},
		{name: "input on post", body: `echo '{"updatedInput": {"command": "x"}}'` + "\n", event: policy.HookPostToolUse, want: Failed, reason: "only a PreToolUse hook"},
	}
	r := &Runner{Home: dir}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &policy.Hook{Event: policy.HookPreToolUse, Type: policy.HookCommand, Command: script(t, dir, fmt.Sprintf("h%d.sh", i), tt.body), Timeout: 5 * time.Second}
			if tt.timeout > 0 {
				h.Timeout = tt.timeout
			}
			if tt.event != "" {
				h.Event = tt.event
			}
			start := time.Now()
			res := r.Run(context.Background(), h, input(dir))
			if res.Outcome != tt.want || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("Run = %s %q, want %s containing %q", res.Outcome, res.Reason, tt.want, tt.reason)
			}
			if !reflect.DeepEqual(res.UpdatedInput, tt.input) {
				t.Fatalf("UpdatedInput = %v, want %v", res.UpdatedInput, tt.input)
			}
			if el := time.Since(start); tt.timeout > 0 && el > 3*time.Second {
				t.Fatalf("a hook past its %s limit took %s to stop", tt.timeout, el)
			}
		})
	}
}

// TestCommandHookMissing: a hook whose program does not exist, or whose
// cwd is gone, fails.
func TestCommandHookMissing(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{}
	h := &policy.Hook{Event: policy.HookPreToolUse, Type: policy.HookCommand, Command: filepath.Join(dir, "no-such-hook"), Timeout: 5 * time.Second}
	if res := r.Run(context.Background(), h, input(dir)); res.Outcome != Failed || !strings.Contains(res.Reason, "status 127") {
		t.Fatalf("missing program: %s %q", res.Outcome, res.Reason)
	}
	h.Command = "true"
	if res := r.Run(context.Background(), h, input(filepath.Join(dir, "gone"))); res.Outcome != Failed || !strings.Contains(res.Reason, "cannot be entered") {
		t.Fatalf("missing cwd: %s %q", res.Outcome, res.Reason)
	}
	r.Shell = filepath.Join(dir, "no-shell")
	if res := r.Run(context.Background(), h, input(dir)); res.Outcome != Failed || !strings.Contains(res.Reason, "could not run") {
		t.Fatalf("missing shell: %s %q", res.Outcome, res.Reason)
	}
}

// TestCommandHookEnvironment: the hook gets the call as JSON on stdin, runs
// in the call's cwd, and sees a clean environment.
func TestCommandHookEnvironment(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	t.Setenv("TOOLGATE_TEST_SECRET", "hunter2")
	out := filepath.Join(dir, "out")
	h := &policy.Hook{Event: policy.HookPreToolUse, Type: policy.HookCommand, Timeout: 5 * time.Second,
		Command: script(t, dir, "env.sh", fmt.Sprintf("cat > %[1]s.stdin; pwd > %[1]s.pwd; env > %[1]s.env\n", out))}
	res := (&Runner{Home: "/home/someone"}).Run(context.Background(), h, input(cwd))
	if res.Outcome != Pass {
		t.Fatalf("Run = %s %q", res.Outcome, res.Reason)
	}
	var got Input
	b, _ := os.ReadFile(out + ".stdin")
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("stdin %q: %v", b, err)
	}
	if got.ToolName != "Bash" || got.ToolInput["command"] != "ls" || got.HookEventName != policy.HookPreToolUse || got.Cwd != cwd || got.ToolUseID != "tc_1" || got.Decision.Decision != "allow" {
		t.Fatalf("stdin = %+v", got)
	}
	if b, _ := os.ReadFile(out + ".pwd"); strings.TrimSpace(string(b)) != cwd {
		t.Fatalf("pwd = %q, want %q", b, cwd)
	}
	env, _ := os.ReadFile(out + ".env")
	if strings.Contains(string(env), "hunter2") || !strings.Contains(string(env), "HOME=/home/someone\n") || !strings.Contains(string(env), "TOOLGATE_HOOK_EVENT=PreToolUse\n") {
		t.Fatalf("environment not clean:\n%s", env)
	}
}

// TestCommandHookKillsGroup: at the time limit the hook's whole process
// group is killed, including a child that would outlive it.
func TestCommandHookKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	h := &policy.Hook{Event: policy.HookPreToolUse, Type: policy.HookCommand, Timeout: 300 * time.Millisecond,
		Command: script(t, dir, "fork.sh", fmt.Sprintf("sleep 30 &\necho $! > %s\nwait\n", pidFile))}
	res := (&Runner{}).Run(context.Background(), h, input(dir))
	if res.Outcome != Failed {
		t.Fatalf("Run = %s", res.Outcome)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return // gone, or a zombie: killed
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d still runs: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPHooks posts to real servers on 127.0.0.1.
func TestHTTPHooks(t *testing.T) {
	var got Input
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    Outcome
		reason  string
	}{
		{"empty 200", func(w http.ResponseWriter, r *http.Request) {}, Pass, ""},
		{"204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }, Pass, ""},
		{"deny json", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"decision":"deny","reason":"from http"}`)
		}, Deny, "from http"},
		{"allow json", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"decision":"allow"}`) }, Allow, ""},
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "broken", 500) }, Failed, "answered HTTP 500: broken"},
		{"403 with allow body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			io.WriteString(w, `{"decision":"allow"}`)
		}, Failed, "HTTP 403"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.com/", http.StatusFound)
		}, Failed, "HTTP 302"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }, Failed, "not a hook answer"},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}, Failed, "time limit of 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
					http.Error(w, "want a JSON POST", 400)
					return
				}
				got = Input{}
				json.NewDecoder(r.Body).Decode(&got)
				tt.handler(w, r)
			}))
			defer srv.Close()
			h := &policy.Hook{Event: policy.HookPermissionRequest, Type: policy.HookHTTP, URL: srv.URL + "/hook", Timeout: 200 * time.Millisecond}
			res := (&Runner{}).Run(context.Background(), h, input(t.TempDir()))
			if res.Outcome != tt.want || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("Run = %s %q, want %s containing %q", res.Outcome, res.Reason, tt.want, tt.reason)
			}
			srv.Close() // waits for the handler
			if got.ToolName != "Bash" || got.ToolInput["command"] != "ls" {
				t.Fatalf("the server got %+v", got)
			}
		})
	}
	h := &policy.Hook{Event: policy.HookPreToolUse, Type: policy.HookHTTP, URL: "http://127.0.0.1:1/", Timeout: time.Second}
	if res := (&Runner{}).Run(context.Background(), h, input(t.TempDir())); res.Outcome != Failed || !strings.Contains(res.Reason, "request failed") {
		t.Fatalf("nothing listening: %s %q", res.Outcome, res.Reason)
	}
}

// TestAllowBlocked: a hook's allow lifts only what an allow rule could.
func TestAllowBlocked(t *testing.T) {
	h := &policy.Hook{Event: policy.HookPreToolUse}
	soft := engine.Decision{Decision: policy.Ask, Reason: engine.ReasonWrite, Risk: risk.Write, Source: engine.SourceDefault}
	with := func(f func(d *engine.Decision)) *engine.Decision { d := soft; f(&d); return &d }
	tests := []struct {
		name string
		d    *engine.Decision
		hook *policy.Hook
		want string // substring; "" for may allow
	}{
		{"soft ask", &soft, h, ""},
		{"allow", with(func(d *engine.Decision) { d.Decision = policy.Allow }), h, ""},
		{"deny rule", with(func(d *engine.Decision) {
			d.Decision, d.Reason, d.Source = policy.Deny, engine.ReasonRuleDeny, engine.SourceRule
		}), h, "never loosens a deny"},
		{"sandbox", with(func(d *engine.Decision) {
			d.Decision, d.Reason, d.Source = policy.Deny, engine.ReasonSandbox, engine.SourceSandbox
		}), h, "never loosens a deny"},
		{"protected path", with(func(d *engine.Decision) {
			d.Reason, d.Source, d.Hard = engine.ReasonProtectedPath, engine.SourceSafety, true
		}), h, "confirmed by a person (protected_path)"},
		{"ask rule", with(func(d *engine.Decision) { d.Reason, d.Source, d.Hard = engine.ReasonRuleAsk, engine.SourceRule, true }), h, "confirmed by a person (rule_ask)"},
		{"destructive", with(func(d *engine.Decision) { d.Reason, d.Risk = engine.ReasonDestructive, risk.Destructive }), h, "confirmed by a person"},
		{"always", with(func(d *engine.Decision) { d.Reason, d.Source = engine.ReasonPolicyAlways, engine.SourceMode }), h, "policy_always"},
		{"hook ask", with(func(d *engine.Decision) { d.Reason, d.Source = engine.ReasonHook, engine.SourceHook }), h, "another hook"},
		{"managed lock", &soft, &policy.Hook{NoAllow: "locked"}, "locked"},
	}
	for _, tt := range tests {
		if got := AllowBlocked(tt.hook, tt.d); tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: AllowBlocked = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzParseAnswer: whatever a hook prints, the answer is one of the
// outcomes, never a panic, and only Failed carries no decision of its own.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{"", " \n", `{"decision":"allow"}`, `{"action":"block","reason":"r"}`, `{"updatedInput":{"a":1}}`,
		`{"hookSpecificOutput":{"permissionDecision":"ask","decision":{"behavior":"deny"}}}`, `{"decision":1}`, "not json", `{}{}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		r := parseAnswer(out)
		switch r.Outcome {
		case Pass, Allow, Deny, Ask:
			if r.UpdatedInput != nil && len(r.UpdatedInput) == 0 {
				t.Fatalf("%q: an empty updated input passed", out)
			}
		case Failed:
			if r.Reason == "" {
				t.Fatalf("%q: failed without a reason", out)
			}
		default:
			t.Fatalf("%q: outcome %q", out, r.Outcome)
		}
		if len(r.Reason) > MaxReasonBytes+len("…") {
			t.Fatalf("%q: reason of %d bytes", out, len(r.Reason))
		}
	})
}
