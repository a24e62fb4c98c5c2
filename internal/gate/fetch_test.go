package gate

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/webfetch"
	"github.com/toolgate/toolgate/policy"
)

// TestFetchRedirectChains fetches through real servers on loopback: the
// policy allows 127.0.0.1 by an explicit rule; every hop to anything else
// is refused before a connection is made to it.
func TestFetchRedirectChains(t *testing.T) {
	var forbidden atomic.Int32
	other, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			forbidden.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { other.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	base := "http://" + ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	redirect := func(path, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	redirect("/to-self", "/ok")
	redirect("/chain", "/to-self")
	redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
	redirect("/to-other", "http://"+other.Addr().String()+"/")
	redirect("/to-localhost", fmt.Sprintf("http://localhost:%d/ok", port))
	redirect("/to-decimal", fmt.Sprintf("http://2130706434:%d/", other.Addr().(*net.TCPAddr).Port))
	redirect("/to-mapped", fmt.Sprintf("http://[::ffff:127.0.0.2]:%d/", other.Addr().(*net.TCPAddr).Port))
	redirect("/to-file", "file:///etc/passwd")
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	cases := []struct {
		name, policy, url string
		want              string // body, or "error: <substring>"
	}{
		{"allowed host", "", base + "/ok", "hello"},
		{"redirect within the allowed host", "", base + "/to-self", "hello"},
		{"two redirects", "", base + "/chain", "hello"},
		{"redirect to cloud metadata", "", base + "/to-metadata", "error: hop 1"},
		{"redirect to another loopback address", "", base + "/to-other", "error: not allowed"},
		{"redirect to localhost by name", "", base + "/to-localhost", "error: not allowed"},
		{"redirect to a decimal address", "", base + "/to-decimal", "error: hop 1"},
		{"redirect to an IPv4-mapped address", "", base + "/to-mapped", "error: hop 1"},
		{"redirect to a file URL", "", base + "/to-file", "error: hop 1"},
		{"a name allowed by a rule does not unlock the address it resolves to", `allow = ["WebFetch(domain:localhost)"]`,
			fmt.Sprintf("http://localhost:%d/ok", port), "error: 127.0.0.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules := c.policy
			if rules == "" {
				rules = `allow = ["WebFetch(domain:127.0.0.1)"]`
			}
			fx := newFixtureWith(t, Options{}, "network = true\n[permissions]\n"+rules+"\n")
			req := fx.req("WebFetch", map[string]any{"url": c.url})
			before := forbidden.Load()
			d, res, err := fx.g.Run(context.Background(), req, "t1", fx.g.Fetch(req, webfetch.Options{}))
			if d.Decision != policy.Allow {
				t.Fatalf("the call itself was not allowed: %s %s", d.Reason, d.Message)
			}
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want one containing %q (body %q)", err, want, res.Stdout)
				}
			} else if err != nil || string(res.Stdout) != c.want {
				t.Fatalf("body %q, err %v; want %q", res.Stdout, err, c.want)
			}
			if err == nil {
				hops, _ := res.Detail["hops"].([]string)
				if len(hops) == 0 || hops[0] != c.url {
					t.Fatalf("hops %v, want the chain from %s", res.Detail["hops"], c.url)
				}
			}
			if n := forbidden.Load() - before; n != 0 {
				t.Fatalf("the forbidden server got %d connections", n)
			}
		})
	}
}
