package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// codexCall is one tool call the mock model makes: a function call named
// Name (in Namespace, for an MCP tool: "mcp__SERVER") with Args as its
// arguments, or, when Custom is set, a freeform custom tool call (Codex's
// apply_patch) whose input is Input.
type codexCall struct {
	Namespace string
	Name      string
	Args      map[string]any
	Custom    bool
	Input     string
}

// codexOutput is what came back to the model for one of its calls.
type codexOutput struct {
	CallID string
	Output string
}

// codexMock is a model server speaking the OpenAI Responses API as Codex
// uses it (POST /v1/responses, streamed as SSE). Its turn is scripted: a
// request holding n tool results is answered with the call script[n], or
// with the final text once the script is done, so a retried request gets
// the same answer. Every request body is kept.
type codexMock struct {
	url    string // base URL, ending in /v1
	script []codexCall
	final  string

	mu       sync.Mutex
	requests []map[string]any
}

// startCodexMock starts the mock on a free loopback port; it stops when
// the test ends.
func startCodexMock(t *testing.T, final string, script ...codexCall) *codexMock {
	t.Helper()
	m := &codexMock{script: script, final: final}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(m.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	m.url = "http://" + ln.Addr().String() + "/v1"
	return m
}

func (m *codexMock) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		// Codex may list models; it copes with none.
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(codexOutputsOf(req))
	m.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("resp_%d", n)
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": id}})
	var item map[string]any
	if n < len(m.script) {
		c := m.script[n]
		callID := fmt.Sprintf("call_%d", n)
		if c.Custom {
			item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "call_id": callID, "name": c.Name, "input": c.Input, "status": "completed"}
		} else {
			args, _ := json.Marshal(c.Args)
			item = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": c.Name, "arguments": string(args), "status": "completed"}
			if c.Namespace != "" {
				item["namespace"] = c.Namespace
			}
		}
	} else {
		item = map[string]any{"type": "message", "role": "assistant", "id": "msg_" + id, "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": m.final, "annotations": []any{}}}}
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response.completed", map[string]any{"response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15,
	}}})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// codexOutputsOf returns the tool results in a request's input, in order.
func codexOutputsOf(req map[string]any) []codexOutput {
	items, _ := req["input"].([]any)
	var out []codexOutput
	for _, it := range items {
		m, _ := it.(map[string]any)
		switch m["type"] {
		case "function_call_output", "custom_tool_call_output":
		default:
			continue
		}
		id, _ := m["call_id"].(string)
		out = append(out, codexOutput{CallID: id, Output: codexOutputText(m["output"])})
	}
	return out
}

// codexOutputText flattens a tool output, which is a string or a list of
// content items, to text.
func codexOutputText(v any) string {
	switch o := v.(type) {
	case string:
		return o
	case []any:
		var parts []string
		for _, p := range o {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// outputs returns the tool results of the longest request: what the model
// was told about each of its calls, by call index.
func (m *codexMock) outputs() []codexOutput {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best []codexOutput
	for _, r := range m.requests {
		if o := codexOutputsOf(r); len(o) >= len(best) {
			best = o
		}
	}
	return best
}
