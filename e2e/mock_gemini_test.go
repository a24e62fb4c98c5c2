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

// geminiFetched is the text the mock answers web_fetch's own model request
// with (Gemini CLI has the model fetch the URLs).
const geminiFetched = "the fetched page says hello"

// geminiCall is one function call the mock model makes.
type geminiCall struct {
	Name string
	Args map[string]any
}

// geminiMock is a model server speaking the Gemini API that Gemini CLI
// talks to (GOOGLE_GEMINI_BASE_URL). A scripted turn is a list of function
// calls the model makes, one per request that offers tools, then a final
// text. The step a request is at is the number of function calls the
// conversation it carries already holds, so a retried request gets the
// same answer. Every request body is recorded.
type geminiMock struct {
	srv   *httptest.Server
	calls []geminiCall
	final string

	mu       sync.Mutex
	requests []geminiRequest
}

// geminiRequest is one recorded request.
type geminiRequest struct {
	Path string
	Body map[string]any
}

// geminiResponse is a functionResponse part the client sent back.
type geminiResponse struct {
	Name     string
	Response map[string]any
}

// Text is the response as JSON text, for matching.
func (r geminiResponse) Text() string {
	b, _ := json.Marshal(r.Response)
	return string(b)
}

func newGeminiMock(t *testing.T, final string, calls ...geminiCall) *geminiMock {
	t.Helper()
	m := &geminiMock{calls: calls, final: final}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the base URL for GOOGLE_GEMINI_BASE_URL.
func (m *geminiMock) URL() string { return m.srv.URL }

func (m *geminiMock) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(data, &body)
	m.mu.Lock()
	m.requests = append(m.requests, geminiRequest{Path: r.URL.Path, Body: body})
	m.mu.Unlock()

	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens": 10}`)
		return
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"), strings.HasSuffix(r.URL.Path, ":generateContent"):
	default:
		http.NotFound(w, r)
		return
	}
	var part map[string]any
	if geminiFetchURLs(body) != "" {
		part = map[string]any{"text": geminiFetched}
	} else if geminiOffersTools(body) {
		step := geminiCallsIn(body)
		if step < len(m.calls) {
			c := m.calls[step]
			part = map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}}
		} else {
			part = map[string]any{"text": m.final}
		}
	} else {
		// A side request (routing, next speaker): an easy task, and the
		// user speaks next.
		part = map[string]any{"text": `{"complexity_reasoning": "scripted", "complexity_score": 10, "reasoning": "done", "next_speaker": "user"}`}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
	}
	out, _ := json.Marshal(resp)
	if strings.HasSuffix(r.URL.Path, ":generateContent") {
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", out)
}

// geminiOffersTools reports whether a request offers the model function
// declarations: the main conversation, not a side request.
func geminiOffersTools(body map[string]any) bool {
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		if tm, ok := t.(map[string]any); ok {
			if fd, ok := tm["functionDeclarations"].([]any); ok && len(fd) > 0 {
				return true
			}
		}
	}
	return false
}

// geminiParts returns the parts of a request's contents with the role of
// their content.
func geminiParts(body map[string]any) (roles []string, parts []map[string]any) {
	contents, _ := body["contents"].([]any)
	for _, c := range contents {
		cm, _ := c.(map[string]any)
		role, _ := cm["role"].(string)
		ps, _ := cm["parts"].([]any)
		for _, p := range ps {
			if pm, ok := p.(map[string]any); ok {
				roles = append(roles, role)
				parts = append(parts, pm)
			}
		}
	}
	return roles, parts
}

func geminiCallsIn(body map[string]any) int {
	n := 0
	_, parts := geminiParts(body)
	for _, p := range parts {
		if _, ok := p["functionCall"]; ok {
			n++
		}
	}
	return n
}

// geminiFetchURLs returns the authorized URLs of web_fetch's model request,
// or "" for another request.
func geminiFetchURLs(body map[string]any) string {
	_, parts := geminiParts(body)
	for _, p := range parts {
		text, _ := p["text"].(string)
		_, rest, ok := strings.Cut(text, "<authorized_urls>")
		if !ok {
			continue
		}
		urls, _, _ := strings.Cut(rest, "</authorized_urls>")
		return strings.TrimSpace(urls)
	}
	return ""
}

// fetches returns the URLs of every web_fetch model request.
func (m *geminiMock) fetches() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, r := range m.requests {
		if u := geminiFetchURLs(r.Body); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// toolNames returns the function names the last request offering tools
// declared.
func (m *geminiMock) toolNames() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.requests) - 1; i >= 0; i-- {
		body := m.requests[i].Body
		if !geminiOffersTools(body) {
			continue
		}
		var names []string
		for _, t := range body["tools"].([]any) {
			fd, _ := t.(map[string]any)["functionDeclarations"].([]any)
			for _, d := range fd {
				if dm, ok := d.(map[string]any); ok {
					name, _ := dm["name"].(string)
					names = append(names, name)
				}
			}
		}
		return names
	}
	return nil
}

// responses returns the function responses of the longest conversation
// the client sent, in order.
func (m *geminiMock) responses() []geminiResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best []geminiResponse
	for _, r := range m.requests {
		var got []geminiResponse
		_, parts := geminiParts(r.Body)
		for _, p := range parts {
			fr, ok := p["functionResponse"].(map[string]any)
			if !ok {
				continue
			}
			name, _ := fr["name"].(string)
			resp, _ := fr["response"].(map[string]any)
			got = append(got, geminiResponse{Name: name, Response: resp})
		}
		if len(got) >= len(best) {
			best = got
		}
	}
	return best
}

// dump is every recorded request, for a failure message.
func (m *geminiMock) dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, r := range m.requests {
		data, _ := json.Marshal(r.Body)
		s := string(data)
		if len(s) > 3000 {
			s = s[len(s)-3000:]
		}
		fmt.Fprintf(&b, "%s: ...%s\n", r.Path, s)
	}
	return b.String()
}
