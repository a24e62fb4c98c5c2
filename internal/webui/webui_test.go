package webui_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/webui"
)

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPage(t *testing.T) {
	h := webui.Handler()
	rec := get(t, h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET / Content-Type = %q, want text/html", ct)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); csp != webui.ContentSecurityPolicy {
		t.Errorf("GET / Content-Security-Policy = %q", csp)
	}
	for _, k := range []string{"X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options", "ETag"} {
		if rec.Header().Get(k) == "" {
			t.Errorf("GET / has no %s header", k)
		}
	}
	if !strings.Contains(rec.Body.String(), `<script type="module" src="/js/main.js">`) {
		t.Error("GET / does not load /js/main.js as a module")
	}
	index := get(t, h, http.MethodGet, "/index.html", nil)
	if index.Code != http.StatusOK || index.Body.String() != rec.Body.String() {
		t.Errorf("GET /index.html = %d, want the page", index.Code)
	}
}

func TestFilesAndTypes(t *testing.T) {
	h := webui.Handler()
	want := map[string]string{".js": "javascript", ".css": "text/css", ".svg": "image/svg+xml", ".html": "text/html"}
	n := 0
	err := fs.WalkDir(webui.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rec := get(t, h, http.MethodGet, "/"+p, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET /%s = %d", p, rec.Code)
			return nil
		}
		if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, want[path.Ext(p)]) {
			t.Errorf("GET /%s Content-Type = %q, want %s", p, ct, want[path.Ext(p)])
		}
		etag := rec.Header().Get("ETag")
		again := get(t, h, http.MethodGet, "/"+p, http.Header{"If-None-Match": {etag}})
		if again.Code != http.StatusNotModified {
			t.Errorf("GET /%s with If-None-Match: its ETag = %d, want 304", p, again.Code)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("FS holds %d files", n)
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	h := webui.Handler()
	for _, p := range []string{"/nope", "/js", "/js/", "/js/../index.html", "/static/index.html", "/v1/x"} {
		if rec := get(t, h, http.MethodGet, p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	rec := get(t, h, http.MethodPost, "/", nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") == "" {
		t.Errorf("POST / = %d (Allow %q), want 405 with Allow", rec.Code, rec.Header().Get("Allow"))
	}
	if rec := get(t, h, http.MethodHead, "/app.css", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD /app.css = %d with %d bytes, want 200 and no body", rec.Code, rec.Body.Len())
	}
}

// The page shows text an agent wrote (commands, paths, messages). It must
// never reach the DOM as markup: the scripts build nodes and set text, and
// use none of the APIs that parse HTML or run strings as code.
func TestScriptsParseNoMarkup(t *testing.T) {
	sinks := regexp.MustCompile(`\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|\beval\(|new Function\b|setAttribute\(\s*["']on|srcdoc|javascript:`)
	forEachFile(t, ".js", func(name, src string) {
		for i, line := range strings.Split(src, "\n") {
			if m := sinks.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s: insert text with text nodes instead", name, i+1, m)
			}
		}
	})
}

// The page is served from the binary alone: nothing is loaded from
// another origin.
func TestNoExternalResources(t *testing.T) {
	url := regexp.MustCompile(`(?i)\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[/\w.-]*`)
	forEachFile(t, "", func(name, src string) {
		for _, m := range url.FindAllString(src, -1) {
			if m == "http://www.w3.org/2000/svg" {
				continue
			}
			t.Errorf("%s refers to %s", name, m)
		}
	})
}

// Every module import and every file index.html names exists.
func TestReferencesResolve(t *testing.T) {
	imports := regexp.MustCompile(`(?m)^import\s[^;]*?from\s+"(\./[^"]+)"`)
	forEachFile(t, ".js", func(name, src string) {
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			target := path.Join(path.Dir(name), m[1])
			if _, err := fs.Stat(webui.FS, target); err != nil {
				t.Errorf("%s imports %s, which is not in FS", name, m[1])
			}
		}
	})
	refs := regexp.MustCompile(`(?:src|href)="/([^"#]+)"`)
	index, err := fs.ReadFile(webui.FS, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range refs.FindAllStringSubmatch(string(index), -1) {
		if _, err := fs.Stat(webui.FS, m[1]); err != nil {
			t.Errorf("index.html refers to /%s, which is not in FS", m[1])
		}
	}
}

func forEachFile(t *testing.T, ext string, f func(name, src string)) {
	t.Helper()
	err := fs.WalkDir(webui.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (ext != "" && path.Ext(p) != ext) {
			return err
		}
		b, err := fs.ReadFile(webui.FS, p)
		if err != nil {
			return err
		}
		f(p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
