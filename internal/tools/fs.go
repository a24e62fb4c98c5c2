package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/pathres"
)

// sniffBytes is how much of a file decides whether it is binary.
const sniffBytes = 8 << 10

// isBinary reports whether head, the start of a file, looks binary: a NUL
// byte, or bytes that are not UTF-8 (a rune cut at the end is allowed).
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// statRegular returns the info of the regular file p, with an error that
// says what p is instead.
func statRegular(field, shown, p string) (fs.FileInfo, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("input.%s: %s does not exist", field, shown)
	}
	if err != nil {
		return nil, fmt.Errorf("input.%s: %w", field, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("input.%s: %s is a directory (use list)", field, shown)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("input.%s: %s is not a regular file", field, shown)
	}
	return fi, nil
}

func runRead(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	shown := c.str("path")
	p, err := c.resolve("path", shown)
	if err != nil {
		return gate.Result{}, err
	}
	if _, err := statRegular("path", shown, p); err != nil {
		return gate.Result{}, err
	}
	f, err := openWithin(c.root, p)
	if err != nil {
		return gate.Result{}, fmt.Errorf("input.path: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return gate.Result{}, fmt.Errorf("input.path: %s is not a regular file", shown)
	}
	out, detail, err := readLines(f, shown, c.num("offset", 1), c.num("limit", 0), MaxOutput, fi.Size())
	if err != nil {
		return gate.Result{}, err
	}
	return gate.Result{Stdout: out, Detail: detail}, nil
}

// readLines returns lines offset.. (1-based) of r, at most limit of them
// (0: all) and at most max bytes, with a note at the end when cut.
func readLines(r io.Reader, shown string, offset, limit, maxOut int, size int64) ([]byte, map[string]any, error) {
	br := bufio.NewReaderSize(r, int(min(max(size+1, 4<<10), 64<<10)))
	head, _ := br.Peek(sniffBytes)
	if isBinary(head) {
		return nil, nil, fmt.Errorf("input.path: %s is a binary file: not read as text", shown)
	}
	var out bytes.Buffer
	out.Grow(int(min(size+1, int64(maxOut)+256)))
	line, shownLines := 0, 0
	cut := false
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 || err == nil {
			// a line longer than the buffer arrives in pieces
			whole := b
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = br.ReadSlice('\n')
				whole = append(append([]byte(nil), whole...), more...)
			}
			line++
			if line >= offset {
				if limit > 0 && shownLines >= limit {
					break
				}
				if out.Len()+len(whole) > maxOut {
					out.Write(whole[:maxOut-out.Len()])
					cut = true
					break
				}
				out.Write(whole)
				shownLines++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", shown, err)
		}
	}
	if line < offset && offset > 1 {
		return nil, nil, fmt.Errorf("input.offset: %s has %d lines, fewer than offset %d", shown, line, offset)
	}
	detail := map[string]any{"firstLine": offset, "lines": shownLines}
	if cut {
		detail["truncated"] = true
		fmt.Fprintf(&out, "\n[output cut at %d bytes, in line %d: read on with offset=%d]\n", maxOut, line, line)
	}
	return out.Bytes(), detail, nil
}

// readWithin reads the regular file p through [openWithin].
func readWithin(root, p string) ([]byte, error) {
	f, err := openWithin(root, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(f)
}

func runWrite(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	shown := c.str("path")
	p, err := c.resolve("path", shown)
	if err != nil {
		return gate.Result{}, err
	}
	if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
		return gate.Result{}, fmt.Errorf("input.path: %s is not a regular file", shown)
	}
	content := []byte(c.str("content"))
	if err := x.apply(c, []change{{path: p, shown: shown, after: content, write: true}}); err != nil {
		return gate.Result{}, err
	}
	return gate.Result{Stdout: fmt.Appendf(nil, "wrote %d bytes to %s\n", len(content), shown)}, nil
}

func runEdit(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	shown := c.str("path")
	p, err := c.resolve("path", shown)
	if err != nil {
		return gate.Result{}, err
	}
	if _, err := statRegular("path", shown, p); err != nil {
		return gate.Result{}, err
	}
	data, err := readWithin(c.root, p)
	if err != nil {
		return gate.Result{}, fmt.Errorf("input.path: %w", err)
	}
	if isBinary(data[:min(len(data), sniffBytes)]) {
		return gate.Result{}, fmt.Errorf("input.path: %s is a binary file: not edited", shown)
	}
	type edit struct {
		field, old, repl string
		all              bool
	}
	var edits []edit
	if list, ok := c.args["edits"].([]any); ok {
		for i, v := range list {
			m := v.(map[string]any)
			o, _ := m["old_string"].(string)
			r, _ := m["new_string"].(string)
			a, _ := m["replace_all"].(bool)
			edits = append(edits, edit{fmt.Sprintf("edits[%d]", i), o, r, a})
		}
	} else {
		edits = []edit{{"", c.str("old_string"), c.str("new_string"), c.flag("replace_all")}}
	}
	after := string(data)
	n := 0
	for _, e := range edits {
		field := "input."
		if e.field != "" {
			field += e.field + "."
		}
		if e.old == e.repl {
			return gate.Result{}, fmt.Errorf("%snew_string: is the same as old_string: nothing changed", field)
		}
		k := strings.Count(after, e.old)
		switch {
		case k == 0:
			return gate.Result{}, fmt.Errorf("%sold_string: not found in %s: nothing changed", field, shown)
		case k > 1 && !e.all:
			return gate.Result{}, fmt.Errorf("%sold_string: occurs %d times in %s: give more context to make it unique, or replace_all: nothing changed", field, k, shown)
		}
		if e.all {
			after = strings.ReplaceAll(after, e.old, e.repl)
		} else {
			after = strings.Replace(after, e.old, e.repl, 1)
		}
		n += k
	}
	if err := x.apply(c, []change{{path: p, shown: shown, after: []byte(after), write: true}}); err != nil {
		return gate.Result{}, err
	}
	return gate.Result{Stdout: fmt.Appendf(nil, "replaced %d occurrence(s) in %s\n", n, shown)}, nil
}

// maxList is the most entries list returns.
const maxList = 1000

func runList(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	shown, dir, fi, err := c.statDir()
	if err != nil {
		return gate.Result{}, err
	}
	if !fi.IsDir() {
		return gate.Result{}, fmt.Errorf("input.path: %s is not a directory", shown)
	}
	var names []string
	cut := false
	if pat := c.args["pattern"]; pat != nil {
		pattern := pat.(string)
		if !doublestar.ValidatePattern(pattern) {
			return gate.Result{}, fmt.Errorf("input.pattern: %q is not a valid glob", pattern)
		}
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(dir, p)
			if rel == "." {
				return nil
			}
			if ok, _ := doublestar.Match(pattern, filepath.ToSlash(rel)); ok {
				if len(names) >= maxList {
					cut = true
					return filepath.SkipAll
				}
				if d.IsDir() {
					rel += "/"
				}
				names = append(names, rel)
			}
			return nil
		})
		if err != nil {
			return gate.Result{}, err
		}
	} else {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return gate.Result{}, fmt.Errorf("input.path: %w", err)
		}
		for _, e := range entries {
			if len(names) >= maxList {
				cut = true
				break
			}
			n := e.Name()
			if e.IsDir() {
				n += "/"
			} else if e.Type()&fs.ModeSymlink != 0 {
				n += "@"
			}
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, n := range names {
		out.WriteString(n)
		out.WriteByte('\n')
	}
	detail := map[string]any{"entries": len(names)}
	if cut {
		detail["truncated"] = true
		fmt.Fprintf(&out, "[listing cut at %d entries]\n", maxList)
	}
	return gate.Result{Stdout: out.Bytes(), Detail: detail}, nil
}

func runFetchDirect(context.Context, *Executor, *call) (gate.Result, error) {
	return gate.Result{}, errors.New("fetch runs only through the gate (Executor.Run), which checks every redirect")
}

func runShell(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	if x.opts.Shell == nil {
		return gate.Result{}, errors.New("no shell runner is configured")
	}
	dir := c.cwd
	if w := c.str("workdir"); w != "" {
		var err error
		if dir, err = c.resolve("workdir", w); err != nil {
			return gate.Result{}, err
		}
	} else if c.root == "" || !pathres.Within(c.root, dir) {
		return gate.Result{}, fmt.Errorf("cwd %s is outside the workspace %s", c.Cwd, c.root)
	}
	return x.opts.Shell(ctx, c.str("command"), dir, x.opts.Env)
}

// statDir resolves the optional "path" argument (the workspace's "." when
// absent) and stats it: the path as the call gave it, its resolved form,
// and what it is. A path that does not exist is an error naming it.
func (c *call) statDir() (shown, path string, fi fs.FileInfo, err error) {
	shown = c.str("path")
	if shown == "" {
		shown = "."
	}
	if path, err = c.resolve("path", shown); err != nil {
		return "", "", nil, err
	}
	fi, err = os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil, fmt.Errorf("input.path: %s does not exist", shown)
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("input.path: %w", err)
	}
	return shown, path, fi, nil
}
