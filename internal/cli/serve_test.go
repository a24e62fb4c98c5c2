package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

func TestCheckHandler(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	set, _ := policy.Merge()
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Home: filepath.Join(dir, "home")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(checkHandler(eng, "s3cret"))
	defer srv.Close()
	post := func(auth, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/check", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	good := `{"tool":"Bash","input":{"command":"ls && rm -rf /"},"cwd":"` + dir + `"}`
	if code, _ := post("", good); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := post("Bearer wrong", good); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	if code, out := post("Bearer s3cret", `{"tool":`); code != http.StatusBadRequest || out["error"] == nil {
		t.Errorf("bad JSON: %d %v", code, out)
	}
	code, out := post("Bearer s3cret", good)
	if code != http.StatusOK || out["decision"] != "deny" || out["reason"] != "sandbox_rejected" {
		t.Errorf("check: %d %v", code, out)
	}
	resp, err := http.Get(srv.URL + "/v1/check")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}
