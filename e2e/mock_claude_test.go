package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// claudeStep is one answer of the mock model in a scripted turn: a tool
// call (Tool and Input), or, when Tool is empty, the final text.
type claudeStep struct {
	Tool  string
	Input map[string]any
	// Before runs when the mock is about to make this call, before it
	// answers the request.
	Before func()
}

// claudeResult is a tool result Claude Code sent back to the model.
type claudeResult struct {
	Text    string
	IsError bool
}

// claudeMock is a model server speaking the Anthropic Messages API that
// Claude Code talks to (POST /v1/messages, streamed). The requests of the
// main loop (those offering the Bash tool) are answered from the script:
// the n-th step answers the request whose conversation already holds n
// assistant messages, so a retried request gets the same answer. Other
// requests (titles, summaries) get a short text. Every request body is
// kept.
type claudeMock struct {
	srv    *httptest.Server
	script []claudeStep

	mu       sync.Mutex
	bodies   [][]byte
	results  map[string]claudeResult // by tool_use id
	tools    []string                // tool names of the last main request
	started  map[int]bool            // steps whose Before ran
	finished bool                    // the final text was sent
}

// claudeStartMock starts a mock model server with script and stops it when
// the test ends.
func claudeStartMock(t *testing.T, script []claudeStep) *claudeMock {
	t.Helper()
	m := &claudeMock{script: script, results: map[string]claudeResult{}, started: map[int]bool{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// claudeToolUseID is the id the mock gives the tool call of step i.
func claudeToolUseID(i int) string { return fmt.Sprintf("toolu_e2e_%02d", i) }

// claudeRequest is the part of a Messages request the mock reads.
type claudeRequest struct {
	Stream bool `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func (m *claudeMock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 42}`)
		return
	}
	var req claudeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	main := false
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
		if tl.Name == "Bash" {
			main = true
		}
	}
	if !main {
		claudeRespond(w, req.Stream, nil, "", "e2e")
		return
	}
	step := 0
	for _, msg := range req.Messages {
		if msg.Role == "assistant" {
			step++
		}
		var blocks []claudeBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				m.mu.Lock()
				m.results[b.ToolUseID] = claudeResult{Text: claudeContentText(b.Content), IsError: b.IsError}
				m.mu.Unlock()
			}
		}
	}
	m.mu.Lock()
	m.tools = names
	var before func()
	if step < len(m.script) && !m.started[step] {
		m.started[step] = true
		before = m.script[step].Before
	}
	m.mu.Unlock()
	if before != nil {
		before()
	}
	if step >= len(m.script) || m.script[step].Tool == "" {
		m.mu.Lock()
		m.finished = true
		m.mu.Unlock()
		claudeRespond(w, req.Stream, nil, "", "done")
		return
	}
	st := m.script[step]
	claudeRespond(w, req.Stream, st.Input, st.Tool, claudeToolUseID(step))
}

// claudeContentText is the text of a tool_result's content: a string, or
// the text blocks of a list.
func claudeContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			out = append(out, p.Text)
		}
		return strings.Join(out, "\n")
	}
	return string(raw)
}

// claudeRespond answers with one tool_use block (tool not empty; id is its
// id) or one text block (text in id), streamed as Messages SSE when stream
// is set.
func claudeRespond(w http.ResponseWriter, stream bool, input map[string]any, tool, id string) {
	if input == nil {
		input = map[string]any{}
	}
	in, _ := json.Marshal(input)
	stop := "end_turn"
	var block, delta map[string]any
	if tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": id, "name": tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": id}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	msg := map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	if !stream {
		if tool != "" {
			block["input"] = input
		} else {
			block["text"] = id
		}
		msg["content"] = []any{block}
		msg["stop_reason"] = stop
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"message": msg})
	send("content_block_start", map[string]any{"index": 0, "content_block": block})
	send("content_block_delta", map[string]any{"index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"index": 0})
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	send("message_stop", map[string]any{})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// result returns the tool result Claude Code sent back for step i.
func (m *claudeMock) result(i int) (claudeResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[claudeToolUseID(i)]
	return r, ok
}

// offered returns the tool names of the last main-loop request.
func (m *claudeMock) offered() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.tools...)
}

// done reports whether the mock sent the turn's final text.
func (m *claudeMock) done() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.finished
}

// requests returns the bodies of every request received.
func (m *claudeMock) requests() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.bodies...)
}
