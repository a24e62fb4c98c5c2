package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

// Remote decides calls through a running `toolgate serve`: POST /v1/check
// with wait, so that a call the server asks a person about returns when the
// person answers or the server's timeout denies it. The server records the
// decision in its own log and judges the call by its own policy: the proxy's
// --trusted does not reach it, only the server policy's trusted_mcp_servers.
type Remote struct {
	// URL is the server's base URL.
	URL string
	// Token is an agent token of the server.
	Token string
	// HTTP is the client; default http.DefaultClient.
	HTTP *http.Client
}

// Decide implements [Decider]. Any failure is an error, which the proxy
// turns into a deny.
func (r *Remote) Decide(ctx context.Context, req *engine.Request) (*engine.Decision, error) {
	body, err := json.Marshal(struct {
		*engine.Request
		Wait bool `json:"wait"`
	}{req, true})
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.URL, "/")+"/v1/check", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+r.Token)
	c := r.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return nil, fmt.Errorf("POST /v1/check: %s: %s", resp.Status, e.Error)
	}
	var d engine.Decision
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("POST /v1/check: %w", err)
	}
	switch d.Decision {
	case policy.Allow, policy.Deny:
		return &d, nil
	}
	// A question still open is no allow.
	d.Decision = policy.Deny
	d.Message = "the server did not settle the call: " + d.Message
	return &d, nil
}
