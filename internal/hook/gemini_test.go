package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestGeminiWebFetchChecks: Gemini CLI's web_fetch takes a prompt with the
// URLs in it; each URL it would fetch is judged as a WebFetch of its own,
// and a prompt whose URLs cannot be told is refused.
func TestGeminiWebFetchChecks(t *testing.T) {
	tests := []struct {
		name  string
		input map[string]any
		urls  []string // the WebFetch URLs judged
		err   string
	}{
		{"one url", map[string]any{"prompt": "Summarize https://example.com/docs please"}, []string{"https://example.com/docs"}, ""},
		{"two urls", map[string]any{"prompt": "Compare https://a.example/x and http://b.example:8080/y?q=1"}, []string{"https://a.example/x", "http://b.example:8080/y?q=1"}, ""},
		{"split on every JS space", map[string]any{"prompt": "see\u00a0https://a.example/\u3000https://b.example/\nhttps://c.example/\ufeffhttps://d.example/"}, []string{"https://a.example/", "https://b.example/", "https://c.example/", "https://d.example/"}, ""},
		{"repeated url once", map[string]any{"prompt": "https://a.example/ https://a.example/"}, []string{"https://a.example/"}, ""},
		{"direct url form", map[string]any{"url": "https://example.com/x"}, []string{"https://example.com/x"}, ""},
		{"url and prompt", map[string]any{"url": "https://a.example/", "prompt": "and https://b.example/"}, []string{"https://a.example/", "https://b.example/"}, ""},
		{"github blob also as raw", map[string]any{"prompt": "read https://github.com/o/r/blob/main/a.go"}, []string{"https://github.com/o/r/blob/main/a.go", "https://raw.githubusercontent.com/o/r/main/a.go"}, ""},
		{"decimal ipv4 host", map[string]any{"prompt": "http://2130706433/admin"}, []string{"http://127.0.0.1/admin"}, ""},
		{"hex and short ipv4 host with port", map[string]any{"prompt": "http://0x7f.1:8080/"}, []string{"http://127.0.0.1:8080/"}, ""},
		{"octal ipv4 host", map[string]any{"prompt": "http://0251.0376.0251.0376/latest"}, []string{"http://169.254.169.254/latest"}, ""},
		{"trailing dot ipv4 host", map[string]any{"prompt": "http://169.254.169.254./"}, []string{"http://169.254.169.254/"}, ""},
		{"domain name kept", map[string]any{"prompt": "https://Example.COM/A"}, []string{"https://Example.COM/A"}, ""},

		{"no url", map[string]any{"prompt": "what is the weather"}, nil, "names no URL"},
		{"bare domain is not a url", map[string]any{"prompt": "read example.com"}, nil, "names no URL"},
		{"empty input", map[string]any{}, nil, "names no URL"},
		{"prompt not a string", map[string]any{"prompt": 3}, nil, "not a string"},
		{"ftp", map[string]any{"prompt": "https://a.example/ ftp://b.example/f"}, nil, "not an http or https"},
		{"file", map[string]any{"prompt": "file:///etc/passwd"}, nil, "not an http or https"},
		{"no host", map[string]any{"prompt": "http:///x"}, nil, "not an http or https"},
		{"backslash", map[string]any{"prompt": `https://evil.example\@good.example/`}, nil, "read differently"},
		{"non-ascii", map[string]any{"prompt": "https://exämple.com/"}, nil, "read differently"},
		{"percent host", map[string]any{"prompt": "https://%65vil.example/"}, nil, "does not parse"},
		{"ipv4 part too large", map[string]any{"prompt": "http://1.2.3.256/"}, nil, "too large"},
		{"ipv4 with five parts", map[string]any{"prompt": "http://1.2.3.4.5/"}, nil, "more than four"},
		{"ipv4 bad part", map[string]any{"prompt": "http://1.x.3.4/"}, nil, "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{"cwd": "/w", "session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "web_fetch", "tool_input": tt.input})
			call, err := Parse(Gemini, in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, r := range call.Checks() {
				if r.Tool != "WebFetch" || r.Cwd != "/w" || r.Session != "s" || len(r.Input) != 1 {
					t.Errorf("check %+v", r)
				}
				u, _ := r.Input["url"].(string)
				urls = append(urls, u)
			}
			if !slices.Equal(urls, tt.urls) {
				t.Errorf("URLs judged %q, want %q", urls, tt.urls)
			}
			// The answer hands back the client's own input.
			if call.Request.Tool != "web_fetch" || len(call.Request.Input) != len(tt.input) {
				t.Errorf("request %+v", call.Request)
			}
		})
	}
}

// TestChecksOfOtherCalls: every other call is judged as itself: Claude
// Code's WebFetch by its url, Gemini CLI's google_web_search as a web
// search, and a web_fetch after it ran is not split.
func TestChecksOfOtherCalls(t *testing.T) {
	tests := []struct {
		client  Client
		payload string
		canon   policy.Tool
	}{
		{ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://x.example/","prompt":"see https://y.example/"}}`, policy.ToolFetch},
		{Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"google_web_search","tool_input":{"query":"https://y.example/"}}`, policy.ToolWebSearch},
		{Gemini, `{"cwd":"/w","hook_event_name":"AfterTool","tool_name":"web_fetch","tool_input":{"prompt":"no url"},"tool_response":{"llmContent":"x"}}`, policy.ToolFetch},
		{Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"curl https://y.example/"}}`, policy.ToolShell},
	}
	for _, tt := range tests {
		call, err := Parse(tt.client, []byte(tt.payload))
		if err != nil {
			t.Fatalf("%s: %v", tt.payload, err)
		}
		checks := call.Checks()
		if len(checks) != 1 || checks[0].Tool != call.Request.Tool {
			t.Errorf("%s: checks %+v, want the request itself", tt.payload, checks)
		}
		if c, _ := policy.Canonical(checks[0].Tool); c != tt.canon {
			t.Errorf("%s: judged as %q, want %q", tt.payload, c, tt.canon)
		}
	}
}

// TestGeminiGrepSearchChecks: Gemini CLI's grep_search is a search whose
// include_pattern is the file filter the search judges as include, while
// the answer keeps the client's own input.
func TestGeminiGrepSearchChecks(t *testing.T) {
	call, err := Parse(Gemini, []byte(`{"cwd":"/w","session_id":"s","hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"KEY","dir_path":"/w/src","include_pattern":".env"}}`))
	if err != nil {
		t.Fatal(err)
	}
	checks := call.Checks()
	if len(checks) != 1 {
		t.Fatalf("checks %+v", checks)
	}
	in := checks[0].Input
	if checks[0].Tool != "search_file_content" || in["include"] != ".env" || in["pattern"] != "KEY" || in["dir_path"] != "/w/src" || checks[0].Cwd != "/w" || checks[0].Session != "s" {
		t.Errorf("check %+v", checks[0])
	}
	if _, ok := in["include_pattern"]; ok {
		t.Errorf("check keeps include_pattern: %v", in)
	}
	if call.Request.Input["include_pattern"] != ".env" || call.Request.Input["include"] != nil {
		t.Errorf("the client's input changed: %v", call.Request.Input)
	}
	plain, err := Parse(Gemini, []byte(`{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"KEY"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := plain.Checks(); len(c) != 1 || len(c[0].Input) != 1 {
		t.Errorf("a search without include_pattern is judged as %+v", c)
	}
}
