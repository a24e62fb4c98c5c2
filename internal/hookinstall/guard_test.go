package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/policy"
)

// fakeAnswer is what a stand-in for toolgate prints and exits with.
type fakeAnswer struct {
	name   string
	stdout string
	stderr string
	code   int
	script string // a program body instead; "-" for no program at all
}

// fakeAnswers returns the stand-ins for client: each answer toolgate's
// hook gives it (made by package hook, so a change of their shape shows
// here), and each way a hook can fail or answer wrongly.
func fakeAnswers(c Client) []fakeAnswer {
	allow := hook.Answer(c, hook.Verdict{Decision: policy.Allow, Reason: `ok "quoted" \ reason`, Input: map[string]any{"command": "toolgate sandbox -- ls"}})
	deny := hook.Answer(c, hook.Verdict{Decision: policy.Deny, Reason: "toolgate: deny (rule_deny)"})
	fail := hook.Fail(c, "policy.toml:1: bad")
	quiet := hook.AfterAnswer(c, nil)
	warn := hook.AfterAnswer(c, []string{"ignore_previous"})
	ask := strings.Replace(string(deny.Stdout), `"deny"`, `"ask"`, 1)
	return []fakeAnswer{
		{name: "allow", stdout: string(allow.Stdout)},
		{name: "deny", stdout: string(deny.Stdout)},
		{name: "failure", stdout: string(fail.Stdout), stderr: fail.Stderr, code: 2},
		{name: "after, nothing to add", stdout: string(quiet.Stdout)},
		{name: "after, a warning", stdout: string(warn.Stdout)},
		{name: "ask", stdout: ask},
		{name: "allow with exit 2", stdout: string(allow.Stdout), code: 2},
		{name: "deny with exit 1", stdout: string(deny.Stdout), code: 1},
		{name: "other JSON", stdout: `{"decision":"block"}` + "\n"},
		{name: "garbage", stdout: "not { json\n"},
		{name: "empty", stdout: ""},
		{name: "two answers", stdout: string(deny.Stdout) + string(allow.Stdout)},
		{name: "allow cut short", stdout: string(allow.Stdout[:len(allow.Stdout)/2])},
		{name: "crash", stderr: "panic: boom\n", code: 2},
		{name: "killed", script: "kill -KILL $$"},
		{name: "hangs", script: "exec sleep 30"},
		{name: "missing", script: "-"},
	}
}

// passes lists, per guarded event, the stand-ins whose answer the guard
// hands on unchanged; it refuses every other one.
var passes = map[string][]string{
	"codex PreToolUse":  {"allow", "deny", "failure"},
	"gemini BeforeTool": {"allow", "deny", "failure"},
	"gemini AfterTool":  {"after, nothing to add", "after, a warning", "failure"},
}

// TestGuardsPassOnlyToolgateAnswers runs the command install writes for
// each guarded event, with /bin/sh -c and bash -c (Gemini CLI uses bash,
// Codex the person's login shell), around stand-ins for toolgate at a
// path that needs quoting, and checks that each of toolgate's answers for
// the event is passed on as it is and everything else refused in the
// client's way: Codex's exit 2 with the reason on stderr, Gemini CLI's
// deny JSON with exit 2.
func TestGuardsPassOnlyToolgateAnswers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the guards are POSIX sh")
	}
	shells := []string{"/bin/sh"}
	if b, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, b)
	}
	if len(guards) != len(passes) {
		t.Fatalf("%d guards, %d expectations", len(guards), len(passes))
	}
	for i := range guards {
		g := &guards[i]
		key := string(g.client) + " " + g.event
		want, ok := passes[key]
		if !ok {
			t.Fatalf("no expectation for %s", key)
		}
		for _, fa := range fakeAnswers(g.client) {
			t.Run(key+"/"+fa.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "it's a dir")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				prog := fakeToolgate(t, dir, g.client, fa)
				o, p := opts(t, g.client)
				o.Command = prog
				if _, err := Install(o); err != nil {
					t.Fatal(err)
				}
				installed := installedCommand(t, read(t, p), g.event)
				timeout := map[Client]int{Codex: 600, Gemini: 600000}[g.client]
				if g.event == "AfterTool" {
					timeout = 60000
				}
				if installed != g.command(prog, timeout) {
					t.Fatalf("installed %q, want the guard", installed)
				}
				if got, ok := Program(installed); !isToolgateCommand(installed, o) || !ok || got != prog {
					t.Errorf("the installed guard is not read back as toolgate's hook: %q %v", got, ok)
				}
				cmd := installed
				if fa.name == "hangs" {
					cmd = g.commandSeconds(prog, 1)
				}
				input := `{"hook_event_name":"` + g.event + `","tool_name":"x"}`
				for _, sh := range shells {
					os.Remove(filepath.Join(dir, "stdin"))
					code, stdout, stderr, took := runGuard(t, sh, cmd, input)
					passed := slices.Contains(want, fa.name)
					switch {
					case took > 8*time.Second:
						t.Errorf("%s: took %s: the watchdog did not stop the hook", sh, took)
					case passed:
						if code != fa.code || stdout != strings.TrimSuffix(fa.stdout, "\n") {
							t.Errorf("%s: exit %d stdout %q, want toolgate's exit %d and %q passed on", sh, code, stdout, fa.code, fa.stdout)
						}
						if fa.stderr != "" && !strings.Contains(stderr, strings.TrimSpace(fa.stderr)) {
							t.Errorf("%s: stderr %q lacks toolgate's %q", sh, stderr, fa.stderr)
						}
					default:
						checkRefused(t, sh, g, fa, code, stdout, stderr)
					}
					if fa.script == "" {
						if b, err := os.ReadFile(filepath.Join(dir, "stdin")); err != nil || string(b) != input {
							t.Errorf("%s: toolgate read %q (%v), want the hook's input %q", sh, b, err, input)
						}
					}
				}
			})
		}
	}
}

// checkRefused checks that the guard refused a call in g's client's way.
func checkRefused(t *testing.T, sh string, g *guard, fa fakeAnswer, code int, stdout, stderr string) {
	t.Helper()
	status := map[string]string{"killed": "137", "hangs": "137", "missing": "127"}[fa.name]
	if status == "" {
		status = strconv.Itoa(fa.code)
	}
	if code != 2 {
		t.Errorf("%s: exit %d, want 2", sh, code)
	}
	reason := stderr
	if g.denyJSON != "" {
		var ans map[string]string
		if err := json.Unmarshal([]byte(stdout), &ans); err != nil || len(ans) != 2 || ans["decision"] != "deny" {
			t.Fatalf("%s: stdout %q is not a deny (%v)", sh, stdout, err)
		}
		reason = ans["reason"]
	} else if stdout != "" {
		t.Errorf("%s: stdout %q, want none", sh, stdout)
	}
	if !strings.Contains(reason, "no answer (status "+status+":") {
		t.Errorf("%s: reason %q does not give status %s", sh, reason, status)
	}
}

// fakeToolgate writes a program in dir that checks it is run as c's hook,
// saves its stdin and answers as fa says.
func fakeToolgate(t *testing.T, dir string, c Client, fa fakeAnswer) string {
	t.Helper()
	prog := filepath.Join(dir, "toolgate")
	switch fa.script {
	case "-":
		return prog
	case "":
		write(t, filepath.Join(dir, "out"), fa.stdout, 0o644)
		write(t, filepath.Join(dir, "err"), fa.stderr, 0o644)
		write(t, prog, `#!/bin/sh
[ "$*" = "hook `+string(c)+`" ] || exit 99
d=$(dirname "$0")
cat >"$d/stdin"
cat "$d/out"
cat "$d/err" >&2
exit `+strconv.Itoa(fa.code)+"\n", 0o755)
	default:
		write(t, prog, "#!/bin/sh\n"+fa.script+"\n", 0o755)
	}
	return prog
}

func runGuard(t *testing.T, sh, cmd, input string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	c := exec.Command(sh, "-c", cmd)
	c.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	took = time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String(), took
}

func installedCommand(t *testing.T, src, event string) string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(src), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Hooks[event]) != 1 || len(f.Hooks[event][0].Hooks) != 1 {
		t.Fatalf("hooks.%s: %s", event, src)
	}
	return f.Hooks[event][0].Hooks[0].Command
}

// The guards are Codex's PreToolUse entry and both of Gemini CLI's;
// install and uninstall treat them as toolgate's.
func TestGuardInstallUninstall(t *testing.T) {
	for _, tt := range []struct {
		client      Client
		pre, post   string
		preSeconds  int
		postSeconds int // 0: the entry runs toolgate plainly
	}{
		{Codex, "PreToolUse", "PostToolUse", 590, 0},
		{Gemini, "BeforeTool", "AfterTool", 595, 55},
	} {
		t.Run(string(tt.client), func(t *testing.T) {
			o, p := opts(t, tt.client)
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			first := read(t, p)
			for _, ev := range []struct {
				name    string
				seconds int
			}{{tt.pre, tt.preSeconds}, {tt.post, tt.postSeconds}} {
				cmd := installedCommand(t, first, ev.name)
				g, prog, seconds, ok := parseGuarded(cmd)
				switch {
				case ev.seconds == 0 && cmd != HookCommand(o):
					t.Errorf("%s runs %q, want %q", ev.name, cmd, HookCommand(o))
				case ev.seconds != 0 && (!ok || g.client != tt.client || g.event != ev.name || prog != bin || seconds != ev.seconds):
					t.Errorf("%s runs %q, read as %v %q %d %v", ev.name, cmd, g, prog, seconds, ok)
				}
			}
			res, err := Install(o)
			if err != nil {
				t.Fatal(err)
			}
			if read(t, p) != first || strings.Contains(strings.Join(res.Notes, "\n"), "already runs") {
				t.Errorf("a second install changed the file or noted another command: %q", res.Notes)
			}
			other := o
			other.Command = "/elsewhere/toolgate"
			if res, err = Install(other); err != nil {
				t.Fatal(err)
			}
			if read(t, p) != first || !strings.Contains(strings.Join(res.Notes, "\n"), "already runs") {
				t.Errorf("install with another toolgate: notes %q", res.Notes)
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("uninstall left %s: %v", p, err)
			}
		})
	}
}

// A command is read as a guard only when it is one install writes, for
// the client asked about: a guard edited to pass more, one of another
// client, or one running another program is not toolgate's.
func TestParseGuarded(t *testing.T) {
	codex, gemini := guardFor(Codex, "PreToolUse"), guardFor(Gemini, "BeforeTool")
	o := Options{Client: Codex, Command: "/x/toolgate"}
	for _, tt := range []struct {
		name string
		cmd  string
		prog string // "" when it is no guard
		ours bool
	}{
		{"codex's", codex.command("/x/toolgate", 600), "/x/toolgate", true},
		{"a quoted path", codex.command("/x/it's a/toolgate", 600), "/x/it's a/toolgate", true},
		{"another deadline", codex.commandSeconds("/x/toolgate", 7), "/x/toolgate", true},
		{"gemini's", gemini.command("/x/toolgate", 600000), "/x/toolgate", false},
		{"another program", codex.command("/x/evil", 600), "/x/evil", false},
		{"passes more", strings.Replace(codex.command("/x/toolgate", 600), `"2:{`, `"2:"*|"0:"*|"2:{`, 1), "", false},
		{"no quote argument", strings.TrimSuffix(codex.command("/x/toolgate", 600), ` '"'`), "", false},
		{"a plain command", "/x/toolgate hook codex", "", true},
		{"half-quoted path", strings.Replace(codex.command("/x/toolgate", 600), "' /x/toolgate '", "' '/x/toolgate '", 1), "", false},
	} {
		_, prog, _, ok := parseGuarded(tt.cmd)
		if ok != (tt.prog != "") || prog != tt.prog {
			t.Errorf("%s: parseGuarded = %q, %v; want %q", tt.name, prog, ok, tt.prog)
		}
		if got := isToolgateCommand(tt.cmd, o); got != tt.ours {
			t.Errorf("%s: isToolgateCommand = %v, want %v", tt.name, got, tt.ours)
		}
	}
}

// TestGeminiUninstallRemovesGuardedAndPlain checks that install reports the
// plain command an older install wrote, and uninstall removes it and the
// guarded one.
func TestGeminiUninstallRemovesGuardedAndPlain(t *testing.T) {
	o, p := opts(t, Gemini)
	write(t, p, `{"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": "/usr/bin/toolgate hook gemini", "timeout": 600000}]}]}}`+"\n", 0o644)
	res, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	// The older, unguarded entry is reported, with the command to run
	// instead.
	if n := strings.Join(res.Notes, "\n"); !strings.Contains(n, `already runs "/usr/bin/toolgate hook gemini"`) || !strings.Contains(n, "sleep 595") {
		t.Errorf("notes %q do not report the unguarded hook", res.Notes)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "toolgate") {
		t.Errorf("uninstall left a toolgate hook:\n%s", b)
	}
}

func TestGuardSeconds(t *testing.T) {
	for _, tt := range []struct {
		f       func(int) int
		timeout int
		want    int
	}{
		{geminiGuardSeconds, 600000, 595}, {geminiGuardSeconds, 60000, 55}, {geminiGuardSeconds, 6000, 3}, {geminiGuardSeconds, 500, 1},
		{codexGuardSeconds, 600, 590}, {codexGuardSeconds, 60, 50}, {codexGuardSeconds, 5, 1},
	} {
		if got := tt.f(tt.timeout); got != tt.want {
			t.Errorf("deadline under %d: %d, want %d", tt.timeout, got, tt.want)
		}
	}
}

// Budget is the time the installed entry gives the hook: the guard's
// deadline, else the entry's timeout.
func TestBudget(t *testing.T) {
	for _, tt := range []struct {
		c    Client
		p    hook.Phase
		want time.Duration
	}{
		{ClaudeCode, hook.Before, 600 * time.Second}, {ClaudeCode, hook.After, 60 * time.Second},
		{Codex, hook.Before, 590 * time.Second}, {Codex, hook.After, 60 * time.Second},
		{Gemini, hook.Before, 595 * time.Second}, {Gemini, hook.After, 55 * time.Second},
		{"other", hook.Before, 0}, {Codex, hook.Phase(7), 0},
	} {
		if runtime.GOOS == "windows" && tt.c == Gemini {
			tt.want += 5 * time.Second
		}
		if got := Budget(tt.c, tt.p); got != tt.want {
			t.Errorf("Budget(%s, %d) = %s, want %s", tt.c, tt.p, got, tt.want)
		}
	}
}
