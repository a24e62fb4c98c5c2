package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestProfiling: the runtime profiles are served only when the option is
// on, and then only to the approver.
func TestProfiling(t *testing.T) {
	on := func(o *Options, _ *policy.File) { o.Profiling = true }
	for _, tc := range []struct {
		name    string
		opts    []envOption
		agent   int
		approve int
	}{
		{"off", nil, http.StatusNotFound, http.StatusNotFound},
		{"on", []envOption{on}, http.StatusForbidden, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/cmdline"} {
				if r := e.call("GET", path, e.tokens.Agent, nil); r.code != tc.agent {
					t.Errorf("agent GET %s: %d, want %d", path, r.code, tc.agent)
				}
				r := e.call("GET", path, e.tokens.Approver, nil)
				if r.code != tc.approve {
					t.Errorf("approver GET %s: %d, want %d", path, r.code, tc.approve)
				}
				if tc.approve == http.StatusOK && path == "/debug/pprof/heap?debug=1" && !strings.Contains(string(r.body), "heap profile") {
					t.Errorf("GET %s is not a heap profile:\n%.300s", path, r.body)
				}
			}
			if r := e.call("GET", "/debug/pprof/", "", nil); tc.approve == http.StatusOK && r.code != http.StatusUnauthorized {
				t.Errorf("GET /debug/pprof/ without a token: %d, want 401", r.code)
			}
		})
	}
}
