package hookinstall

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Codex runs hooks only with [features] hooks = true in its config.toml.
// The file is edited as text, one line added or removed, so its comments
// and layout survive (a TOML encoder would drop them).

var featuresHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*features[ \t]*\][ \t]*(#.*)?\r?\n`)
})

const hooksLine = "hooks = true\n"

func tomlError(path string, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("%s:%d:%d: %s", path, row, col, de.Error())
	}
	return fmt.Errorf("%s: %v", path, err)
}

// codexHooksSetting returns features.hooks as the file sets it (nil when
// unset).
func codexHooksSetting(path string, src []byte) (any, bool, error) {
	var m map[string]any
	if err := toml.Unmarshal(src, &m); err != nil {
		return nil, false, tomlError(path, err)
	}
	f, ok := m["features"]
	if !ok {
		return nil, false, nil
	}
	ft, ok := f.(map[string]any)
	if !ok {
		return nil, true, fmt.Errorf("%s: features is not a table", path)
	}
	return ft["hooks"], true, nil
}

// planCodexHooks returns config.toml's text with hooks enabled (nil when
// it needs no change), without writing anything.
func planCodexHooks(path string) (out []byte, mode os.FileMode, exists bool, err error) {
	src, mode, exists, err := readFile(path)
	if err != nil {
		return nil, 0, false, err
	}
	if !exists {
		return []byte("[features]\n" + hooksLine), 0o600, false, nil
	}
	v, hasFeatures, err := codexHooksSetting(path, src)
	if err != nil {
		return nil, 0, false, err
	}
	switch v {
	case true:
		return nil, mode, true, nil
	case nil:
	default:
		return nil, 0, false, fmt.Errorf("%s sets features.hooks = %v: set it to true (Codex runs no hooks otherwise)", path, v)
	}
	if loc := featuresHeader().FindIndex(src); loc != nil {
		out = splice(src, loc[1], loc[1], hooksLine)
	} else if hasFeatures {
		return nil, 0, false, fmt.Errorf("%s defines features other than as a [features] table: add hooks = true to it", path)
	} else {
		out = append([]byte{}, src...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, "[features]\n"+hooksLine...)
	}
	if v, _, err := codexHooksSetting(path, out); err != nil || v != true {
		return nil, 0, false, fmt.Errorf("%s: could not add [features] hooks = true (the file's layout is unusual): add it by hand", path)
	}
	return out, mode, true, nil
}

func enableCodexHooks(path string) (Change, error) {
	out, mode, exists, err := planCodexHooks(path)
	if err != nil {
		return Change{}, err
	}
	if out == nil {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	if !exists {
		if err := writeAtomicNew(path, out); err != nil {
			return Change{}, err
		}
		return Change{Path: path, Action: "created"}, nil
	}
	if err := writeAtomic(path, out, mode); err != nil {
		return Change{}, err
	}
	return Change{Path: path, Action: "updated"}, nil
}

// disableCodexHooks removes the line enableCodexHooks added, and the
// [features] table or the file when it added those too.
func disableCodexHooks(path string) (Change, error) {
	src, mode, exists, err := readFile(path)
	if err != nil || !exists {
		return Change{Path: path, Action: "unchanged"}, err
	}
	loc := featuresHeader().FindIndex(src)
	if loc == nil || !bytes.HasPrefix(src[loc[1]:], []byte(hooksLine)) {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	out := splice(src, loc[1], loc[1]+len(hooksLine), "")
	if string(out) == "[features]\n" {
		if err := os.Remove(path); err != nil {
			return Change{}, err
		}
		return Change{Path: path, Action: "removed"}, nil
	}
	if bytes.HasSuffix(out, []byte("\n\n[features]\n")) {
		out = out[:len(out)-len("\n[features]\n")]
	}
	if _, _, err := codexHooksSetting(path, out); err != nil {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	if err := writeAtomic(path, out, mode); err != nil {
		return Change{}, err
	}
	return Change{Path: path, Action: "updated"}, nil
}

// Codex lets the tool run when its PreToolUse hook exits with a code
// other than 0 or 2, is killed, cannot be started, outlives its timeout,
// or exits 0 with output that is not an allow or a deny (an "ask" too).
// So Codex's PreToolUse entry runs toolgate under a small sh program that
// passes toolgate's answer on only when it is one (its allow or deny
// JSON, keys in the order toolgate writes them, with exit 0; or exit 2,
// which toolgate gives with its reason on stderr), kills
// toolgate when it runs past a deadline shorter than the entry's timeout,
// and otherwise blocks the call itself with a reason on stderr and exit
// 2. The toolgate program is the program's $0, so its path needs no
// quoting inside it; the program holds no single quote or backslash, so
// the shell Codex runs the command with passes it to sh unchanged.
//
// The hook's stdin is kept as fd 3 for toolgate, which runs in the
// background (where sh would give it /dev/null) next to a watchdog that
// kills it at the deadline and is itself stopped, with its sleep, when
// toolgate ends first.
const codexGuardTemplate = `exec 3<&0; o=$("$0" hook codex <&3 3<&- & p=$!; (sleep %d & s=$!; trap "kill $s; exit" TERM; wait $s; kill -9 $p) >/dev/null 2>&1 <&- 3<&- & w=$!; wait $p; c=$?; kill $w 2>/dev/null; exit $c); c=$?; exec 3<&-; case "$c:$o" in 0:{?hookSpecificOutput?:{?hookEventName?:?PreToolUse?,?permissionDecision?:?allow?,*|0:{?hookSpecificOutput?:{?hookEventName?:?PreToolUse?,?permissionDecision?:?deny?,*) printf %%s "$o";; 2:*) printf %%s "$o"; exit 2;; *) echo "toolgate: the hook ended with status $c and no answer (it crashed, was killed, was not found or ran past its %ds), so the call is denied" >&2; exit 2;; esac`

// codexGuardMargin is how long before Codex's timeout the guard stops
// toolgate, so that its deny reaches Codex in time.
const codexGuardMargin = 10

// codexGuardScript returns the guard program with toolgate's deadline.
func codexGuardScript(deadline int) string {
	return fmt.Sprintf(codexGuardTemplate, deadline, deadline)
}

// codexGuardCommand returns the command of a Codex PreToolUse entry whose
// timeout is timeout seconds.
func codexGuardCommand(o Options, timeout int) string {
	return "/bin/sh -c '" + codexGuardScript(max(timeout-codexGuardMargin, 1)) + "' " + shellQuote(o.Command)
}

// codexGuardPattern matches a guard command of any deadline; its group is
// the toolgate program as the shell reads it.
var codexGuardPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(
		regexp.QuoteMeta("/bin/sh -c '"+codexGuardScript(987654321)+"' "), "987654321", "[0-9]+") + "(.+)$")
})

// codexGuarded returns the toolgate program a command written by
// [codexGuardCommand] runs, unquoted, and whether cmd is one.
func codexGuarded(cmd string) (string, bool) {
	m := codexGuardPattern().FindStringSubmatch(cmd)
	if m == nil {
		return "", false
	}
	rest := m[1]
	if strings.HasPrefix(rest, "'") {
		if len(rest) < 2 || !strings.HasSuffix(rest, "'") {
			return "", false
		}
		return strings.ReplaceAll(rest[1:len(rest)-1], `'\''`, "'"), true
	}
	if strings.ContainsAny(rest, " \t'\"") {
		return "", false
	}
	return rest, true
}

func writeAtomicNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data, 0o600)
}
