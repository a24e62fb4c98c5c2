package hookinstall

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

func writeAtomicNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data, 0o600)
}
