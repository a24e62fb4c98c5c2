package hook

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

// Checks returns the requests toolgate judges before the call runs; the
// call may run only when every one of them is allowed, and any deny
// denies it. For most calls that is Request alone. Gemini CLI's web_fetch
// takes a prompt with the URLs in it rather than one URL, so it is judged
// as one WebFetch of each URL it fetches (see [geminiFetchURLs]); its
// grep_search is judged with its include_pattern as the search's file
// filter.
func (c *Call) Checks() []engine.Request {
	if len(c.checks) > 0 {
		return c.checks
	}
	return []engine.Request{c.Request}
}

// SetProject sets the project directory of the client's session (see
// [engine.Request.Project]) on Request and on each of the call's checks.
func (c *Call) SetProject(dir string) {
	c.Request.Project = dir
	for i := range c.checks {
		c.checks[i].Project = dir
	}
}

// geminiChecks returns the requests a Gemini CLI call is judged as, when
// they differ from req: see [Call.Checks].
func geminiChecks(req engine.Request) ([]engine.Request, error) {
	switch c, _ := policy.Canonical(req.Tool); c {
	case policy.ToolFetch:
		return geminiFetches(req)
	case policy.ToolSearch:
		// grep_search names the files it reads with include_pattern, a
		// glob the search judges as "include".
		v, ok := req.Input["include_pattern"]
		if !ok {
			return nil, nil
		}
		in := make(map[string]any, len(req.Input)+1)
		for k, x := range req.Input {
			in[k] = x
		}
		delete(in, "include_pattern")
		in["include"] = v
		return []engine.Request{{Tool: req.Tool, Input: in, Cwd: req.Cwd, Session: req.Session}}, nil
	}
	return nil, nil
}

// jsSpace holds the characters JavaScript's \s matches, which Gemini CLI
// splits a web_fetch prompt on.
const jsSpace = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// githubBlob is the GitHub path Gemini CLI rewrites to its raw form.
var githubBlob = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/([^/]+/[^/]+)/blob/`) })

// geminiFetches returns one WebFetch request per URL a Gemini CLI
// web_fetch call req fetches, with req's cwd and session.
func geminiFetches(req engine.Request) ([]engine.Request, error) {
	urls, err := geminiFetchURLs(req.Input)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Request, 0, len(urls))
	for _, u := range urls {
		out = append(out, engine.Request{Tool: "WebFetch", Input: map[string]any{"url": u}, Cwd: req.Cwd, Session: req.Session})
	}
	return out, nil
}

// geminiFetchURLs returns the URLs a Gemini CLI web_fetch call with input
// fetches: its url, when it has one (the direct form), and every word of
// its prompt that holds "://", split and picked as Gemini CLI does; for a
// github.com blob URL, the raw.githubusercontent.com URL Gemini CLI
// fetches instead as well. A word with "://" that is not an http or https
// URL with a host, one with characters that URL parsers read differently
// (a backslash, control or non-ASCII characters), and a call that names no
// URL at all are errors: toolgate cannot tell what would be fetched.
func geminiFetchURLs(input map[string]any) ([]string, error) {
	var words []string
	for _, key := range []string{"url", "prompt"} {
		v, ok := input[key]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("web_fetch's %q is not a string", key)
		}
		if key == "url" {
			words = append(words, strings.TrimSpace(s))
			continue
		}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(jsSpace, r) }) {
			if strings.Contains(w, "://") {
				words = append(words, w)
			}
		}
	}
	if len(words) == 0 {
		return nil, errors.New(`web_fetch names no URL (no word of its "prompt" holds "://"): toolgate cannot tell what it would fetch, so it is denied`)
	}
	var urls []string
	seen := map[string]bool{}
	add := func(u string) {
		if !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	for _, w := range words {
		for _, r := range w {
			if r <= ' ' || r > '~' || r == '\\' {
				return nil, fmt.Errorf("web_fetch URL %q holds %q, which URL parsers read differently, so it is denied", w, r)
			}
		}
		u, err := url.Parse(w)
		if err != nil {
			return nil, fmt.Errorf("web_fetch URL %q does not parse: %v", w, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.Opaque != "" {
			return nil, fmt.Errorf("web_fetch URL %q is not an http or https URL with a host", w)
		}
		if !strings.HasPrefix(u.Host, "[") {
			host, isIP, err := whatwgIPv4(u.Hostname())
			if err != nil {
				return nil, fmt.Errorf("web_fetch URL %q: %v", w, err)
			}
			if isIP {
				// Judge the address Gemini CLI connects to, not its spelling.
				if p := u.Port(); p != "" {
					host += ":" + p
				}
				u.Host = host
			}
		}
		add(u.String())
		if strings.EqualFold(u.Hostname(), "github.com") && githubBlob().MatchString(u.Path) {
			raw := *u
			raw.Host = "raw.githubusercontent.com"
			raw.Path = githubBlob().ReplaceAllString(u.Path, "/$1/")
			raw.RawPath = ""
			add(raw.String())
		}
	}
	return urls, nil
}

// whatwgIPv4 reads host as the URL Standard does, which is how Gemini CLI
// (Node's URL) reads it: a host whose last label is a number is an IPv4
// address, whose parts may be decimal, octal (leading 0) or hex (0x), and
// whose last part fills the remaining bytes, so 2130706433 and 0x7f.1 are
// both 127.0.0.1. It returns the dotted address and true for such a host,
// false for a name, and an error for one the URL Standard refuses.
func whatwgIPv4(host string) (string, bool, error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if !isDecimal(last) && !isHex0x(last) {
		return "", false, nil
	}
	if len(parts) > 4 {
		return "", false, fmt.Errorf("host %q ends in a number but has more than four parts", host)
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", false, fmt.Errorf("host %q ends in a number but %q is not a number", host, p)
		}
		nums = append(nums, n)
	}
	var addr uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", false, fmt.Errorf("host %q: part %d is over 255", host, i+1)
		}
		addr |= n << (8 * (3 - i))
	}
	lastN := nums[len(nums)-1]
	if lastN >= 1<<(8*(5-len(nums))) {
		return "", false, fmt.Errorf("host %q: its last part is too large", host)
	}
	addr |= lastN
	return fmt.Sprintf("%d.%d.%d.%d", addr>>24, addr>>16&255, addr>>8&255, addr&255), true, nil
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isHex0x(s string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	if !ok {
		return false
	}
	for _, r := range rest {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// ipv4Number reads one part of a URL Standard IPv4 address.
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base, digits := 10, p
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, digits = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil || n > 1<<32 {
		return 0, false
	}
	return n, true
}
