package gate

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/webfetch"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/secrets"
)

// Fetch returns the [Exec] of an allowed WebFetch call req: it fetches
// req's "url" and returns the body as stdout. The fetch goes no further
// than the policy allows: every redirect target is decided by the engine
// as a WebFetch call of its own (same session, agent and cwd) and must be
// allowed outright — a hop that would ask or deny ends the fetch — and a
// connection that reaches a private, loopback or metadata address is made
// only when the policy allows that address by an explicit rule, so DNS
// cannot lead the fetch where the URL's host name does not. opts.Check and
// opts.AllowPrivate are set by Fetch; the rest of opts is used as given.
// The hops followed are recorded in tool.completed.
func (g *Gate) Fetch(req *engine.Request, opts webfetch.Options) Exec {
	return func(ctx context.Context) (Result, error) {
		raw, _ := req.Input["url"].(string)
		hop := func(u *url.URL) *engine.Request {
			r := *req
			r.Tool = "WebFetch"
			r.Input = map[string]any{"url": u.String()}
			return &r
		}
		opts.Check = func(ctx context.Context, u *url.URL) error {
			if u.String() == raw {
				return nil // the call itself, already allowed
			}
			d := g.engine.Check(ctx, hop(u))
			if d.Decision != policy.Allow {
				return fmt.Errorf("the redirect target is not allowed (%s, %s): %s", d.Decision, d.Reason, d.Message)
			}
			return nil
		}
		opts.AllowPrivate = func(host string, addr netip.AddrPort) bool {
			u := &url.URL{Scheme: "http", Host: addr.String()}
			d := g.engine.Check(ctx, hop(u))
			return d.Decision == policy.Allow && d.Source == engine.SourceRule
		}
		f := webfetch.New(opts)
		defer f.Close()
		resp, err := f.Get(ctx, raw, nil)
		if err != nil {
			return Result{ExitCode: 1}, err
		}
		hops := make([]string, len(resp.Hops))
		for i, h := range resp.Hops {
			hops[i] = secrets.Redact(h.URL.Redacted())
		}
		res := Result{Stdout: resp.Body, Detail: map[string]any{"hops": hops, "status": resp.Status, "truncated": resp.Truncated}}
		if resp.Status >= 400 {
			res.ExitCode = 1
			res.Stderr = fmt.Appendf(nil, "HTTP status %d from %s", resp.Status, resp.URL)
		}
		return res, nil
	}
}
