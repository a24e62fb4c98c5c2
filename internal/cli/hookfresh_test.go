package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runHookProcess runs `toolgate hook CLIENT` as a process of its own (the
// test binary, on PATH through TestMain) with payload on stdin.
func runHookProcess(t *testing.T, client, payload string, flags ...string) (int, string, string) {
	t.Helper()
	bin, err := exec.LookPath("toolgate")
	if err != nil {
		t.Fatalf("no toolgate on PATH: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"hook", client}, flags...)...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestHookFreshProcessRedactsSecrets: a hook process decides one call and
// exits, so the secret rules it runs are compiled in it for the first
// time; the command's secret (an AWS key id, a private key block) must
// still be redacted in the event it writes: neither the log's database
// nor its write-ahead log holds it, and the event holds the rule's marker.
func TestHookFreshProcessRedactsSecrets(t *testing.T) {
	key := func(n int) string {
		var lines []string
		seed := []byte("toolgate")
		for i := range n {
			sum := sha256.Sum256(append(seed, byte(i)))
			seed = sum[:]
			lines = append(lines, base64.StdEncoding.EncodeToString(append(sum[:], sum[:16]...)))
		}
		return strings.Join(lines, "\n")
	}(4)
	begin, end := "-----BEGIN RSA "+"PRIVATE KEY-----", "-----END RSA "+"PRIVATE KEY-----"
	value := func() string {
		sum := sha256.Sum256([]byte("toolgate value"))
		return base64.RawURLEncoding.EncodeToString(sum[:])
	}()
	for _, tc := range []struct {
		name, command, secret, rule string
	}{
		{"aws key id", "aws configure set aws_access_key_id AKIAGNPHMFJS2V6FYPL1", "AKIAGNPHMFJS2V6FYPL1", "aws-access-key-id"},
		{"private key block", "printf '%s\\n' '" + begin + "\n" + key + "\n" + end + "' > id_rsa", key[:40], "private-key"},
		// A keyword written with the Kelvin sign, which the rule's
		// case-insensitive regex matches as k.
		{"token with a Kelvin sign", "TO\u212aEN=" + value + " make build", value, "generic-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newHookEnv(t)
			db := filepath.Join(t.TempDir(), "events.db")
			payload := payloadFor("claude-code", "Bash", env.project, map[string]any{"command": tc.command}, map[string]any{"session_id": "fresh"})
			code, out, stderr := runHookProcess(t, "claude-code", payload, append(env.flags, "--db", db, "--no-sandbox-wrap")...)
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, out, stderr)
			}
			for _, f := range []string{db, db + "-wal"} {
				data, err := os.ReadFile(f)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if bytes.Contains(data, []byte(tc.secret)) || bytes.Contains(data, []byte(strings.ReplaceAll(tc.secret, "/", `\/`))) {
					t.Errorf("%s holds the secret", filepath.Base(f))
				}
			}
			calls := loggedCalls(t, db, "fresh")
			if len(calls) != 1 {
				t.Fatalf("%d calls in the log, want 1", len(calls))
			}
			in, _ := calls[0].requested["input"].(map[string]any)
			cmd, _ := in["command"].(string)
			if !strings.Contains(cmd, "[REDACTED:"+tc.rule+"]") || strings.Contains(cmd, tc.secret) {
				t.Errorf("logged command %q, want the secret replaced by [REDACTED:%s]", cmd, tc.rule)
			}
		})
	}
}

// TestHookFollowsSwappedLink: a file reached through a link the agent
// swaps between two hook runs is judged at the link's target of the
// moment, in one process and in processes of their own: a write through
// the link is allowed (acceptEdits) while it points into the workspace,
// and not once it points outside.
func TestHookFollowsSwappedLink(t *testing.T) {
	env := newHookEnv(t)
	inside := filepath.Join(env.project, "real")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(env.project, "sub")
	point := func(target string) {
		t.Helper()
		tmp := link + ".new"
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	payload := payloadFor("claude-code", "Write", env.project, map[string]any{"file_path": filepath.Join(link, "f.txt"), "content": "x"}, nil)
	flags := append(env.flags, "--mode", "acceptEdits", "--db", filepath.Join(t.TempDir(), "events.db"))
	for _, run := range []struct {
		name string
		hook func(t *testing.T, client, payload string, flags ...string) (int, string, string)
	}{{"in process", runHookCLI}, {"own process", runHookProcess}} {
		t.Run(run.name, func(t *testing.T) {
			for i, target := range []string{inside, outside, inside, outside} {
				point(target)
				_, out, stderr := run.hook(t, "claude-code", payload, flags...)
				answer, why := hookDecision(t, "claude-code", out)
				if wantAllow := target == inside; (answer == "allow") != wantAllow {
					t.Fatalf("run %d, link to %s: %s (%s) %s", i, target, answer, why, stderr)
				}
			}
		})
	}
}
