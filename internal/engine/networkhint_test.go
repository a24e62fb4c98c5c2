package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestNetworkOffSaysHowToTurnItOn checks that a call the sandbox denies
// for want of network names the knob that turns it on where a person can
// turn it, and no knob where none can; and that the policy line it names
// does turn it on.
func TestNetworkOffSaysHowToTurnItOn(t *testing.T) {
	w := newWorld(t)
	off := false
	cliOff := cli(t, "", nil, nil, nil)
	cliOff.Network = &off
	fetch := map[string]any{"url": "https://example.com/x"}
	cases := []struct {
		name   string
		l      layers
		tool   string
		input  map[string]any
		want   policy.Decision
		has    []string
		hasNot []string
	}{
		{name: "default policy", tool: "WebFetch", input: fetch, want: policy.Deny,
			has: []string{"network access off: ", "sets Network to on in the session's settings on toolgate's page", "network = true in the user policy (~/.config/toolgate/policy.toml)"}},
		{name: "a shell line", tool: "Bash", input: sh("npm install"), want: policy.Deny,
			has: []string{"network access off: npm install", "network = true"}},
		{name: "read-only sandbox needs workspace-write too", l: layers{project: `sandbox = "read-only"`}, tool: "WebFetch", input: fetch, want: policy.Deny,
			has: []string{"Sandbox to workspace-write and Network to on", `sandbox = "workspace-write" and network = true`}},
		{name: "a flag keeps it off", l: layers{cli: cliOff}, tool: "WebFetch", input: fetch, want: policy.Deny,
			has: []string{"network access stays off here: it is set by cli"}, hasNot: []string{"toolgate's page"}},
		{name: "the managed policy keeps it off", l: layers{managed: `network = false`, user: `network = true`}, tool: "WebFetch", input: fetch, want: policy.Deny,
			has: []string{"the managed policy turns network access off"}, hasNot: []string{"toolgate's page"}},
		{name: "the line it names turns it on", l: layers{user: `network = true`}, tool: "WebFetch", input: fetch, want: policy.Ask},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := w.engine(t, tc.l)
			d := e.Check(context.Background(), &Request{Tool: tc.tool, Input: tc.input, Cwd: filepath.Join(w.project)})
			if d.Decision != tc.want {
				t.Fatalf("got %s (%s: %s), want %s", d.Decision, d.Reason, d.Message, tc.want)
			}
			if tc.want == policy.Deny && d.Reason != ReasonSandbox {
				t.Fatalf("reason %s, want %s: %s", d.Reason, ReasonSandbox, d.Message)
			}
			for _, s := range tc.has {
				if !strings.Contains(d.Message, s) {
					t.Errorf("message %q does not say %q", d.Message, s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(d.Message, s) {
					t.Errorf("message %q says %q, which cannot turn it on here", d.Message, s)
				}
			}
		})
	}
}
