// Package webui is toolgate's approval page: the HTML, CSS and JavaScript
// modules a person keeps open beside their agent to answer permission
// requests, follow sessions live, search the audit log, see an overview of
// decisions and inspect and switch the policy. The files are embedded in
// the binary; there is no build step and nothing is fetched from elsewhere.
//
// The page talks only to the HTTP API of docs/api.md, on the origin it was
// served from: it redeems the login link's code (from the address's
// fragment, #login=CODE) with POST /v1/login for a session token, keeps
// the token in its origin's sessionStorage and sends it in the
// X-Toolgate-Session header on every request (never as a cookie, which
// other servers on the same host would receive), renews it with
// POST /v1/web-session, follows GET /v1/events as Server-Sent Events read
// with fetch, and answers approvals with POST /v1/approvals/{id}.
// Everything an agent supplies is inserted as text, never as markup.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"time"
)

//go:embed static
var static embed.FS

// FS holds the page's files: index.html at its root, the stylesheet, the
// icon and the JavaScript modules under js/.
var FS fs.FS = mustSub(static, "static")

// ContentSecurityPolicy is the policy [Handler] sends with every file: the
// page runs only its own scripts and styles, connects only to its own
// origin, and cannot be framed.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page: index.html at "/" and the files of [FS] by
// their paths. Directories and unknown paths are 404. Every response
// carries [ContentSecurityPolicy], nosniff, no referrer and an ETag of the
// file's content, so a browser revalidates cheaply.
func Handler() http.Handler {
	type file struct {
		body []byte
		etag string
	}
	files := map[string]file{}
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		files["/"+p] = file{b, `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		panic(err)
	}
	files["/"] = files["/index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := r.URL.Path
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if name == "/" {
			name = "/index.html"
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
