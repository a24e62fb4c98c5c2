package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// projectKind is one kind of project init recognized at a project root:
// what it found, and the commands it lets run without asking.
type projectKind struct {
	// Name is the language or tool ("go", "node", "rust", "python",
	// "make"), Found what it was recognized by.
	Name, Found string
	// Test is the command that runs the project's tests.
	Test string
	// Rules are the allow rules, each with the comment written above it.
	Rules []initRule
}

type initRule struct{ Rule, Why string }

// detectProject recognizes the kinds of project at root from its build
// files. It reads only those files; it runs nothing.
func detectProject(root string) []projectKind {
	var kinds []projectKind
	for _, d := range []func(string) *projectKind{detectGo, detectNode, detectRust, detectPython, detectMake} {
		if k := d(root); k != nil {
			kinds = append(kinds, *k)
		}
	}
	return kinds
}

func hasFile(root, name string) bool {
	_, err := os.Stat(filepath.Join(root, name))
	return err == nil
}

func detectGo(root string) *projectKind {
	if !hasFile(root, "go.mod") {
		return nil
	}
	return &projectKind{Name: "go", Found: "go.mod", Test: "go test ./...", Rules: []initRule{
		{"Bash(go test:*)", "run the tests"},
		{"Bash(go build:*)", "build"},
		{"Bash(go vet:*)", "the vet checks"},
		{"Bash(gofmt -l .)", "list unformatted files (exactly this line: gofmt -l -w would rewrite them)"},
	}}
}

// nodeScripts are the package.json scripts init allows: those that test,
// build or check. Others (start, deploy, release, prepare…) may do
// anything and keep asking.
var nodeScripts = []string{"test", "build", "lint", "typecheck", "check", "format:check"}

func detectNode(root string) *projectKind {
	src, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return nil
	}
	var pkg struct {
		Scripts        map[string]any `json:"scripts"`
		PackageManager string         `json:"packageManager"`
	}
	// A package.json that does not parse still says node; it has no
	// scripts to allow.
	_ = json.Unmarshal(src, &pkg)
	pm, lock := "npm", "package-lock.json"
	switch {
	case hasFile(root, "pnpm-lock.yaml"):
		pm, lock = "pnpm", "pnpm-lock.yaml"
	case hasFile(root, "yarn.lock"):
		pm, lock = "yarn", "yarn.lock"
	case hasFile(root, "bun.lock"):
		pm, lock = "bun", "bun.lock"
	case hasFile(root, "bun.lockb"):
		pm, lock = "bun", "bun.lockb"
	case !hasFile(root, "package-lock.json"):
		lock = ""
		// Without a lockfile, the packageManager field (corepack) names it.
		name, _, _ := strings.Cut(pkg.PackageManager, "@")
		if slices.Contains([]string{"npm", "pnpm", "yarn", "bun"}, name) {
			pm, lock = name, "packageManager "+name
		}
	}
	k := &projectKind{Name: "node", Found: "package.json"}
	if lock != "" {
		k.Found += " and " + lock
	}
	for _, s := range nodeScripts {
		if _, ok := pkg.Scripts[s]; !ok {
			continue
		}
		if k.Test == "" && s == "test" {
			k.Test = pm + " test"
		}
		why := "the package.json script " + strings.TrimSpace(s)
		k.Rules = append(k.Rules, initRule{"Bash(" + pm + " run " + s + ":*)", why})
		if s == "test" {
			// npm test, pnpm test and yarn test run the script too.
			k.Rules = append(k.Rules, initRule{"Bash(" + pm + " test:*)", why})
		}
	}
	return k
}

func detectRust(root string) *projectKind {
	if !hasFile(root, "Cargo.toml") {
		return nil
	}
	return &projectKind{Name: "rust", Found: "Cargo.toml", Test: "cargo test", Rules: []initRule{
		{"Bash(cargo test:*)", "run the tests"},
		{"Bash(cargo build:*)", "build"},
		{"Bash(cargo check:*)", "type-check"},
		{"Bash(cargo clippy:*)", "lint"},
		{"Bash(cargo fmt --check)", "check formatting (exactly this line: cargo fmt alone rewrites files)"},
	}}
}

func detectPython(root string) *projectKind {
	var found []string
	for _, f := range []string{"pyproject.toml", "requirements.txt", "requirements-dev.txt", "setup.py", "uv.lock"} {
		if hasFile(root, f) {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil
	}
	var doc struct {
		Tool map[string]any `toml:"tool"`
	}
	if src, err := os.ReadFile(filepath.Join(root, "pyproject.toml")); err == nil {
		_ = toml.Unmarshal(src, &doc) // a pyproject.toml that does not parse names no tools
	}
	uv := slices.Contains(found, "uv.lock") || doc.Tool["uv"] != nil
	run := ""
	if uv {
		run = "uv run "
	}
	k := &projectKind{Name: "python", Found: strings.Join(found, " and "), Test: run + "pytest"}
	k.Rules = append(k.Rules, initRule{"Bash(" + run + "pytest:*)", "run the tests"})
	if uv {
		k.Rules = append(k.Rules, initRule{"Bash(uv run python -m pytest:*)", "run the tests"})
	} else {
		k.Rules = append(k.Rules, initRule{"Bash(python -m pytest:*)", "run the tests"}, initRule{"Bash(python3 -m pytest:*)", "run the tests"})
	}
	if doc.Tool["ruff"] != nil {
		k.Rules = append(k.Rules, initRule{"Bash(" + run + "ruff check:*)", "lint (this covers ruff check --fix too, which rewrites files in the project)"})
	}
	if doc.Tool["mypy"] != nil {
		k.Rules = append(k.Rules, initRule{"Bash(" + run + "mypy:*)", "type-check"})
	}
	return k
}

// makeTargets are the Makefile targets init allows.
var makeTargets = []string{"test", "check", "build", "lint", "vet"}

var makeTarget = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*:([^=]|$)`) })

func detectMake(root string) *projectKind {
	var src []byte
	var name string
	for _, n := range []string{"GNUmakefile", "Makefile", "makefile"} {
		if b, err := os.ReadFile(filepath.Join(root, n)); err == nil {
			src, name = b, n
			break
		}
	}
	if name == "" {
		return nil
	}
	have := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		if m := makeTarget().FindStringSubmatch(sc.Text()); m != nil {
			have[m[1]] = true
		}
	}
	k := &projectKind{Name: "make", Found: name}
	for _, t := range makeTargets {
		if !have[t] {
			continue
		}
		if k.Test == "" && (t == "test" || t == "check") {
			k.Test = "make " + t
		}
		k.Rules = append(k.Rules, initRule{"Bash(make " + t + ")", "the " + name + " target " + t})
	}
	if len(k.Rules) == 0 {
		return nil
	}
	return k
}
