package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestSessionSettings: a person switches a session's mode and axes; the
// managed policy and flags lock theirs, and other sessions are untouched.
func TestSessionSettings(t *testing.T) {
	w := newWorld(t)
	mode := func(s string) *policy.Mode { m, err := policy.ParseMode(s); must(t, err); return &m }
	sandbox := func(s policy.Sandbox) *policy.Sandbox { return &s }
	approval := func(a policy.Approval) *policy.Approval { return &a }
	on := true
	cases := []struct {
		name     string
		managed  string
		cli      *policy.File
		settings SessionSettings
		session  string
		reqMode  string
		tool     string
		input    map[string]any
		want     policy.Decision
		reason   Reason
		lockedBy string // Locked must name this; "" means not locked
	}{
		{name: "plan for the session", settings: SessionSettings{Mode: mode("plan")}, tool: "Write", input: fp("src/x.go"), want: policy.Deny, reason: ReasonModePlan},
		{name: "another session keeps the default", settings: SessionSettings{Mode: mode("plan")}, session: "other", tool: "Write", input: fp("src/x.go"), want: policy.Ask},
		{name: "the session's mode beats the request's", settings: SessionSettings{Mode: mode("plan")}, reqMode: "bypassPermissions", tool: "Bash", input: sh("make"), want: policy.Deny, reason: ReasonModePlan},
		{name: "read-only sandbox", settings: SessionSettings{Sandbox: sandbox(policy.SandboxReadOnly)}, tool: "Bash", input: sh("touch a"), want: policy.Deny, reason: ReasonSandbox},
		{name: "network on", settings: SessionSettings{Network: &on}, tool: "WebFetch", input: map[string]any{"url": "https://example.com"}, want: policy.Ask, reason: ReasonNetwork},
		{name: "approval always", settings: SessionSettings{Approval: approval(policy.ApprovalAlways)}, tool: "Read", input: fp("README.md"), want: policy.Ask, reason: ReasonPolicyAlways},
		{name: "managed mode is locked", managed: `mode = "default"`, settings: SessionSettings{Mode: mode("bypassPermissions")}, tool: "Bash", input: sh("make"), want: policy.Ask, lockedBy: "managed.toml"},
		{name: "managed network off is locked", managed: `network = false`, settings: SessionSettings{Network: &on}, tool: "WebFetch", input: map[string]any{"url": "https://example.com"}, want: policy.Deny, reason: ReasonSandbox, lockedBy: "managed"},
		{name: "managed bypass ban", managed: "[managed]\ndisable_bypass_mode = true", settings: SessionSettings{Mode: mode("bypassPermissions")}, tool: "Bash", input: sh("make"), want: policy.Ask, lockedBy: "bypassPermissions is disabled"},
		{name: "a flag's mode is locked", cli: cli(t, "strict", nil, nil, nil), settings: SessionSettings{Mode: mode("default")}, tool: "Read", input: fp("README.md"), want: policy.Deny, reason: ReasonStrict, lockedBy: "cli"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := w.engine(t, layers{managed: c.managed, cli: c.cli})
			sessions := NewSessions()
			e.opts.Sessions = sessions
			sessions.Set("s1", c.settings)
			session := c.session
			if session == "" {
				session = "s1"
			}
			d := e.Check(context.Background(), &Request{Tool: c.tool, Input: c.input, Cwd: w.project, Session: session, Mode: c.reqMode})
			if d.Decision != c.want || (c.reason != "" && d.Reason != c.reason) {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Reason, d.Message, c.want, c.reason)
			}
			err := e.Locked(w.project, c.settings)
			switch {
			case c.lockedBy == "" && err != nil:
				t.Fatalf("Locked = %v, want nil", err)
			case c.lockedBy != "" && (err == nil || !strings.Contains(err.Error(), c.lockedBy)):
				t.Fatalf("Locked = %v, want an error naming %q", err, c.lockedBy)
			}
		})
	}
	// Clearing the settings restores the policy's.
	s := NewSessions()
	s.Set("s1", SessionSettings{Mode: mode("plan")})
	s.Set("s1", SessionSettings{})
	if _, ok := s.Get("s1"); ok {
		t.Fatal("zero settings were kept")
	}
}

func TestSessionSettingsEqual(t *testing.T) {
	plan, plan2, def := policy.ModePlan, policy.ModePlan, policy.ModeDefault
	yes, no := true, false
	for _, tc := range []struct {
		a, b SessionSettings
		want bool
	}{
		{SessionSettings{}, SessionSettings{}, true},
		{SessionSettings{Mode: &plan}, SessionSettings{Mode: &plan2}, true},
		{SessionSettings{Mode: &plan}, SessionSettings{Mode: &def}, false},
		{SessionSettings{Mode: &plan}, SessionSettings{}, false},
		{SessionSettings{}, SessionSettings{Network: &no}, false},
		{SessionSettings{Network: &yes}, SessionSettings{Network: &no}, false},
	} {
		if got := tc.a.Equal(tc.b); got != tc.want {
			t.Errorf("%+v.Equal(%+v) = %v", tc.a, tc.b, got)
		}
		if got := tc.b.Equal(tc.a); got != tc.want {
			t.Errorf("%+v.Equal(%+v) = %v", tc.b, tc.a, got)
		}
	}
}

// TestRequestWorkspace: a request's Workspace, set by whoever runs the
// gate, is the project root whatever the request's cwd: a write from a cwd
// outside it is outside the workspace, and "/" binds to no workspace.
func TestRequestWorkspace(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t, layers{user: `sandbox = "workspace-write"`})
	outside := filepath.Join(w.dir, "outside")
	cases := []struct {
		name, workspace, cwd, file string
		want                       policy.Decision
		reason                     Reason
	}{
		{"no binding: the cwd's project is the workspace", "", outside, "new.txt", policy.Ask, ReasonWrite},
		{"a write in the bound workspace", w.project, w.project, "src/new.go", policy.Ask, ReasonWrite},
		{"a cwd outside the bound workspace writes outside it", w.project, outside, "new.txt", policy.Deny, ReasonSandbox},
		{"a nested project inside the bound workspace is inside", w.project, filepath.Join(w.project, "src"), "x.go", policy.Ask, ReasonWrite},
		{"bound to no workspace: the project itself is outside", "/", w.project, "src/new.go", policy.Deny, ReasonSandbox},
		{"a relative workspace is refused", "project", w.project, "src/new.go", policy.Deny, ReasonInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &Request{Tool: "Write", Cwd: tc.cwd, Workspace: tc.workspace,
				Input: map[string]any{"file_path": tc.file, "content": "x"}}
			d := e.Check(context.Background(), req)
			if d.Decision != tc.want || (tc.reason != "" && d.Reason != tc.reason) {
				t.Fatalf("decision %s (%s: %s), want %s (%s)", d.Decision, d.Reason, d.Message, tc.want, tc.reason)
			}
		})
	}
	// The field is never taken from JSON: an agent cannot bind itself.
	req, err := DecodeRequest([]byte(`{"tool":"Read","cwd":"/","Workspace":"/"}`))
	if err == nil && req.Workspace != "" {
		t.Fatalf("the workspace was read from JSON: %q", req.Workspace)
	}
}

// TestAtLeastAsStrict: the order by which a caller that may not loosen
// its gate has its reported mode taken.
func TestAtLeastAsStrict(t *testing.T) {
	const (
		b, a, d = policy.ModeBypass, policy.ModeAcceptEdits, policy.ModeDefault
		p, n, s = policy.ModePlan, policy.ModeDontAsk, policy.ModeStrict
	)
	tests := []struct {
		m, than policy.Mode
		want    bool
	}{
		{d, d, true}, {p, d, true}, {n, d, true}, {s, d, true}, {d, a, true}, {a, b, true},
		{d, s, false}, {p, s, false}, {n, s, false}, {s, p, false}, {d, p, false}, {d, n, false},
		{a, d, false}, {b, d, false}, {b, a, false}, {s, s, true},
	}
	for _, tt := range tests {
		if got := atLeastAsStrict(tt.m, tt.than); got != tt.want {
			t.Errorf("atLeastAsStrict(%s, %s) = %v, want %v", tt.m, tt.than, got, tt.want)
		}
	}
}
