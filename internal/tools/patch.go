package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
)

// filePatch is what a patch does to one file.
type filePatch struct {
	op     string // "add", "update", "delete"
	path   string
	moveTo string
	add    string // content of an added file
	hunks  []hunk
}

// hunk is one change to a file's lines.
type hunk struct {
	anchor string // envelope "@@ text": a line to find first
	at     int    // unified diff: the old start line (1-based), 0 unknown
	old    []string
	new    []string
	eof    bool // the hunk is at the end of the file
	// noNewline* record "\ No newline at end of file" for the old and new side.
	oldNoEOL, newNoEOL bool
	header             string
}

// parsePatch parses a '*** Begin Patch' envelope or a unified diff.
func parsePatch(text string) ([]filePatch, error) {
	if strings.HasPrefix(strings.TrimSpace(text), "*** Begin Patch") {
		return parseEnvelope(text)
	}
	return parseUnified(text)
}

// patchPaths returns the paths a patch touches, as written, after checking
// that the patch parses and that the engine judges every one of them.
func patchPaths(text string) ([]string, error) {
	fps, err := parsePatch(text)
	if err != nil {
		return nil, err
	}
	judged := map[string]bool{}
	for _, p := range engine.PatchPaths(text) {
		judged[p] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, fp := range fps {
		for _, p := range []string{fp.path, fp.moveTo} {
			if p == "" || seen[p] {
				continue
			}
			if !judged[p] {
				return nil, fmt.Errorf("input.patch: touches %s, which its file headers do not name as the gate reads them", p)
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

func parseEnvelope(text string) ([]filePatch, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i >= len(lines) || strings.TrimSpace(lines[i]) != "*** Begin Patch" {
		return nil, errors.New("input.patch: does not start with *** Begin Patch")
	}
	if strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, errors.New("input.patch: does not end with *** End Patch")
	}
	lines = lines[i+1 : len(lines)-1]
	var fps []filePatch
	bad := func(n int, msg string) error {
		return fmt.Errorf("input.patch: line %d: %s", n+i+2, msg)
	}
	for n := 0; n < len(lines); {
		l := lines[n]
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			fp := filePatch{op: "add", path: strings.TrimSpace(strings.TrimPrefix(l, "*** Add File: "))}
			n++
			var body []string
			for n < len(lines) && !strings.HasPrefix(lines[n], "*** ") {
				if !strings.HasPrefix(lines[n], "+") {
					return nil, bad(n, "a line of an added file must start with +")
				}
				body = append(body, lines[n][1:])
				n++
			}
			if len(body) > 0 {
				fp.add = strings.Join(body, "\n") + "\n"
			}
			fps = append(fps, fp)
		case strings.HasPrefix(l, "*** Delete File: "):
			fps = append(fps, filePatch{op: "delete", path: strings.TrimSpace(strings.TrimPrefix(l, "*** Delete File: "))})
			n++
		case strings.HasPrefix(l, "*** Update File: "):
			fp := filePatch{op: "update", path: strings.TrimSpace(strings.TrimPrefix(l, "*** Update File: "))}
			n++
			if n < len(lines) && strings.HasPrefix(lines[n], "*** Move to: ") {
				fp.moveTo = strings.TrimSpace(strings.TrimPrefix(lines[n], "*** Move to: "))
				n++
			}
			var cur *hunk
			for n < len(lines) {
				l := lines[n]
				if l == "*** End of File" {
					if cur == nil {
						return nil, bad(n, "*** End of File outside a hunk")
					}
					cur.eof = true
					n++
					continue
				}
				if strings.HasPrefix(l, "*** ") {
					break
				}
				if strings.HasPrefix(l, "@@") {
					fp.hunks = append(fp.hunks, hunk{anchor: strings.TrimSpace(strings.TrimPrefix(l, "@@")), header: l})
					cur = &fp.hunks[len(fp.hunks)-1]
					n++
					continue
				}
				if cur == nil {
					fp.hunks = append(fp.hunks, hunk{header: "(first hunk)"})
					cur = &fp.hunks[len(fp.hunks)-1]
				}
				switch {
				case l == "":
					cur.old = append(cur.old, "")
					cur.new = append(cur.new, "")
				case l[0] == ' ':
					cur.old = append(cur.old, l[1:])
					cur.new = append(cur.new, l[1:])
				case l[0] == '-':
					cur.old = append(cur.old, l[1:])
				case l[0] == '+':
					cur.new = append(cur.new, l[1:])
				default:
					return nil, bad(n, fmt.Sprintf("%q: a hunk line must start with ' ', '-' or '+'", l))
				}
				n++
			}
			if len(fp.hunks) == 0 && fp.moveTo == "" {
				return nil, bad(n-1, "*** Update File: "+fp.path+" has no hunk")
			}
			fps = append(fps, fp)
		case strings.TrimSpace(l) == "":
			n++
		default:
			return nil, bad(n, fmt.Sprintf("%q: expected *** Add File, *** Update File or *** Delete File", l))
		}
	}
	if len(fps) == 0 {
		return nil, errors.New("input.patch: changes no file")
	}
	return fps, nil
}

var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`) })

func parseUnified(text string) ([]filePatch, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var fps []filePatch
	for n := 0; n < len(lines); {
		if !strings.HasPrefix(lines[n], "--- ") || n+1 >= len(lines) || !strings.HasPrefix(lines[n+1], "+++ ") {
			n++
			continue
		}
		oldName, oldFile := engine.DiffName(lines[n][4:])
		newName, newFile := engine.DiffName(lines[n+1][4:])
		fp := filePatch{}
		switch {
		case !oldFile && !newFile:
			return nil, fmt.Errorf("input.patch: line %d: both sides are /dev/null", n+1)
		case !oldFile:
			fp.op, fp.path = "add", newName
		case !newFile:
			fp.op, fp.path = "delete", oldName
		default:
			fp.op, fp.path = "update", oldName
			if newName != oldName {
				fp.moveTo = newName
			}
		}
		n += 2
		for n < len(lines) && strings.HasPrefix(lines[n], "@@") {
			m := hunkHeader().FindStringSubmatch(lines[n])
			if m == nil {
				return nil, fmt.Errorf("input.patch: line %d: %q is not a hunk header (@@ -l,s +l,s @@)", n+1, lines[n])
			}
			h := hunk{header: lines[n]}
			h.at, _ = strconv.Atoi(m[1])
			oldCount, newCount := 1, 1
			if m[2] != "" {
				oldCount, _ = strconv.Atoi(m[2])
			}
			if m[4] != "" {
				newCount, _ = strconv.Atoi(m[4])
			}
			if oldCount == 0 {
				h.at++ // "-l,0" is the line after which the lines go
			}
			n++
			for (len(h.old) < oldCount || len(h.new) < newCount) && n < len(lines) {
				l := lines[n]
				switch {
				case l == "":
					h.old, h.new = append(h.old, ""), append(h.new, "")
				case l[0] == ' ':
					h.old, h.new = append(h.old, l[1:]), append(h.new, l[1:])
				case l[0] == '-':
					h.old = append(h.old, l[1:])
				case l[0] == '+':
					h.new = append(h.new, l[1:])
				case l[0] == '\\':
					n++
					continue
				default:
					return nil, fmt.Errorf("input.patch: line %d: %q: a hunk line must start with ' ', '-' or '+'", n+1, l)
				}
				n++
			}
			if len(h.old) != oldCount || len(h.new) != newCount {
				return nil, fmt.Errorf("input.patch: %s: hunk %q is shorter than its header says", fp.path, h.header)
			}
			// "\ No newline at end of file" markers after the hunk's lines
			for n < len(lines) && strings.HasPrefix(lines[n], `\`) {
				prev := lines[n-1]
				if strings.HasPrefix(prev, "-") {
					h.oldNoEOL = true
				} else if strings.HasPrefix(prev, "+") {
					h.newNoEOL = true
				} else {
					h.oldNoEOL, h.newNoEOL = true, true
				}
				n++
			}
			fp.hunks = append(fp.hunks, h)
		}
		if fp.op == "add" {
			var body []string
			noEOL := false
			for _, h := range fp.hunks {
				body = append(body, h.new...)
				noEOL = h.newNoEOL
			}
			if len(body) > 0 {
				fp.add = strings.Join(body, "\n")
				if !noEOL {
					fp.add += "\n"
				}
			}
			fp.hunks = nil
		}
		if fp.op == "update" && len(fp.hunks) == 0 && fp.moveTo == "" {
			return nil, fmt.Errorf("input.patch: %s has no hunk", fp.path)
		}
		fps = append(fps, fp)
	}
	if len(fps) == 0 {
		return nil, errors.New("input.patch: names no file: expected '*** Begin Patch' or ---/+++ headers")
	}
	return fps, nil
}

// fileText is a file as lines, and whether its last line ends in a newline.
type fileText struct {
	lines []string
	eol   bool
}

func toText(data string) fileText {
	if data == "" {
		return fileText{eol: true}
	}
	return fileText{lines: strings.Split(strings.TrimSuffix(data, "\n"), "\n"), eol: strings.HasSuffix(data, "\n")}
}

func (t fileText) String() string {
	if len(t.lines) == 0 {
		return ""
	}
	s := strings.Join(t.lines, "\n")
	if t.eol {
		s += "\n"
	}
	return s
}

// find returns where old occurs in lines at or after from, preferring the
// occurrence nearest want (when want >= 0); -1 if nowhere. Lines are
// compared exactly, then ignoring trailing white space.
func find(lines, old []string, from, want int) int {
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") },
	} {
		best := -1
		for i := from; i+len(old) <= len(lines); i++ {
			ok := true
			for j := range old {
				if !eq(lines[i+j], old[j]) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if want < 0 {
				return i
			}
			if best < 0 || abs(i-want) < abs(best-want) {
				best = i
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// applyHunks applies fp's hunks to data.
func applyHunks(fp *filePatch, data string) (string, error) {
	t := toText(data)
	cursor, delta := 0, 0
	for k, h := range fp.hunks {
		pos := cursor
		if h.anchor != "" {
			idx := find(t.lines, []string{h.anchor}, cursor, -1)
			if idx < 0 {
				return "", fmt.Errorf("%s: hunk %d: context line %q not found", fp.path, k+1, h.anchor)
			}
			pos = idx + 1
		}
		var at int
		switch {
		case len(h.old) == 0 && h.at > 0:
			at = min(max(h.at-1+delta, 0), len(t.lines))
		case len(h.old) == 0 && (h.eof || h.anchor == ""):
			at = len(t.lines)
		case len(h.old) == 0:
			at = pos
		default:
			want := -1
			if h.at > 0 {
				want = h.at - 1 + delta
			}
			if h.eof {
				want = len(t.lines) - len(h.old)
			}
			at = find(t.lines, h.old, pos, want)
			if at < 0 {
				return "", fmt.Errorf("%s: hunk %d (%s) does not apply: its lines %q are not in the file", fp.path, k+1, h.header, strings.Join(h.old[:min(len(h.old), 3)], `\n`))
			}
		}
		lines := append([]string{}, t.lines[:at]...)
		lines = append(lines, h.new...)
		lines = append(lines, t.lines[at+len(h.old):]...)
		if at+len(h.old) == len(t.lines) {
			if h.newNoEOL {
				t.eol = false
			} else if h.oldNoEOL || len(h.new) > 0 {
				t.eol = true
			}
		}
		t.lines = lines
		cursor = at + len(h.new)
		delta += len(h.new) - len(h.old)
	}
	return t.String(), nil
}

func runPatch(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	text := c.str("patch")
	if _, err := patchPaths(text); err != nil {
		return gate.Result{}, err
	}
	fps, err := parsePatch(text)
	if err != nil {
		return gate.Result{}, err
	}
	// Apply everything in memory first: the tree is changed only when
	// every file's patch applies.
	type state struct {
		shown  string
		data   string
		exists bool
	}
	files := map[string]*state{}
	var order []string
	get := func(shown string) (string, *state, error) {
		p, err := c.resolve("patch", shown)
		if err != nil {
			return "", nil, err
		}
		if st, ok := files[p]; ok {
			return p, st, nil
		}
		pr, err := readPrior(p)
		if err != nil {
			return "", nil, fmt.Errorf("input.patch: %s: %w", shown, err)
		}
		if pr.exists && isBinary(pr.data[:min(len(pr.data), sniffBytes)]) {
			return "", nil, fmt.Errorf("input.patch: %s is a binary file: not patched", shown)
		}
		st := &state{shown: shown, data: string(pr.data), exists: pr.exists}
		files[p] = st
		order = append(order, p)
		return p, st, nil
	}
	var summary strings.Builder
	for i := range fps {
		fp := &fps[i]
		_, st, err := get(fp.path)
		if err != nil {
			return gate.Result{}, err
		}
		switch fp.op {
		case "add":
			if st.exists {
				return gate.Result{}, fmt.Errorf("input.patch: cannot add %s: it exists (nothing changed)", fp.path)
			}
			st.data, st.exists = fp.add, true
			fmt.Fprintf(&summary, "A %s\n", fp.path)
		case "delete":
			if !st.exists {
				return gate.Result{}, fmt.Errorf("input.patch: cannot delete %s: it does not exist (nothing changed)", fp.path)
			}
			st.data, st.exists = "", false
			fmt.Fprintf(&summary, "D %s\n", fp.path)
		case "update":
			if !st.exists {
				return gate.Result{}, fmt.Errorf("input.patch: cannot update %s: it does not exist (nothing changed)", fp.path)
			}
			out, err := applyHunks(fp, st.data)
			if err != nil {
				return gate.Result{}, fmt.Errorf("input.patch: %w (nothing changed)", err)
			}
			st.data = out
			if fp.moveTo != "" {
				_, dst, err := get(fp.moveTo)
				if err != nil {
					return gate.Result{}, err
				}
				if dst.exists && dst != st {
					return gate.Result{}, fmt.Errorf("input.patch: cannot move %s to %s: it exists (nothing changed)", fp.path, fp.moveTo)
				}
				dst.data, dst.exists = out, true
				if dst != st {
					st.data, st.exists = "", false
				}
				fmt.Fprintf(&summary, "R %s -> %s\n", fp.path, fp.moveTo)
			} else {
				fmt.Fprintf(&summary, "M %s\n", fp.path)
			}
		}
	}
	var changes []change
	for _, p := range order {
		st := files[p]
		pr, err := readPrior(p)
		if err != nil {
			return gate.Result{}, err
		}
		if pr.exists == st.exists && string(pr.data) == st.data {
			continue
		}
		if !st.exists {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				return gate.Result{}, fmt.Errorf("input.patch: %s is a directory", st.shown)
			}
		}
		changes = append(changes, change{path: p, shown: st.shown, after: []byte(st.data), write: st.exists})
	}
	if len(changes) > 0 {
		if err := x.apply(c, changes); err != nil {
			return gate.Result{}, err
		}
	}
	return gate.Result{Stdout: []byte(summary.String()), Detail: map[string]any{"files": len(changes)}}, nil
}
