package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/toolgate/toolgate/internal/fslock"
)

// Change describes what [AddRule] did to a policy file.
type Change struct {
	// File is the file written: the path given, or the file it links to
	// when it is a symbolic link.
	File  string
	Layer Layer
	// Decision names the list the rule is in: allow, ask or deny.
	Decision Decision
	// Rule is the rule text as stored (surrounding blanks removed).
	Rule string
	// Line is the line of File, counting from 1, on which the rule is
	// written.
	Line int
	// Created is set when the file did not exist and was created.
	Created bool
	// Existed is set when the rule was already in the list: the file was
	// not written and Line is where the rule already stands.
	Existed bool
}

// String describes the change in one line, e.g.
// `added allow rule "Bash(ls)" at /p/.toolgate/policy.toml:7`.
func (c *Change) String() string {
	verb := "added"
	if c.Existed {
		verb = "already had"
	}
	return fmt.Sprintf("%s %s rule %q at %s", verb, c.Decision, c.Rule, Position{File: c.File, Line: c.Line})
}

// File modes of the policy files and directories AddRule creates. The user
// policy and the personal local file are private to their owner; the
// committed project file is world-readable. The permissions of an existing
// file are kept.
const (
	userDirMode     fs.FileMode = 0o700
	userFileMode    fs.FileMode = 0o600
	projectDirMode  fs.FileMode = 0o755
	projectFileMode fs.FileMode = 0o644
	localFileMode   fs.FileMode = 0o600
)

// AddRule writes rule to the allow, ask or deny list (as d says) of the
// [permissions] table of the policy file at path, which holds layer: the
// local, project or user layer. It is what remembering an approval "for
// this project" or "for me" does. Callers may rely on the following.
//
//   - The rule is parsed first; a rule that does not parse gives an error
//     naming the rule and the problem, and no file is touched. The rule is
//     stored without surrounding blanks.
//   - A rule already in the list (the same text, ignoring surrounding
//     blanks) is not added again: the Change has Existed set and the file
//     is not written.
//   - A missing file is created with a [permissions] table, together with
//     its missing parent directories: mode 0600 in 0700 directories for
//     the user layer, 0600 for the local file and 0644 in 0755
//     directories for the project file. An existing file keeps its mode.
//   - An existing file is edited as text: the rule is appended to the
//     list, wherever and however it is written (a [permissions] table,
//     dotted permissions.allow keys, an inline permissions = {...} table;
//     single- or multi-line arrays, with or without a trailing comma,
//     with comments). The list, or the [permissions] table, is added when
//     missing. Every other byte of the file is kept.
//   - The file is never left corrupt: the edited text is parsed as the
//     loader parses it, and is written only if it parses, holds every
//     rule it held before plus the new one, and is otherwise the same
//     document. A file that does not parse is refused, untouched; the
//     error carries the file:line:col of the problem.
//   - The file is replaced atomically (a temporary file in the same
//     directory, synced, then renamed over it). Writers in several
//     processes are serialized by an advisory lock (flock) on the file's
//     directory, so concurrent calls all land; on systems without flock
//     only the writers of one process are serialized.
//   - The loader reads through symbolic links, and so does AddRule: a
//     user file that is a link is edited where it points, and the link is
//     kept. A project or local file is written only if it is not a link
//     to a file outside its own directory and that directory is not
//     itself a link, so a checked-out repository cannot point a grant for
//     the project at another policy file. A link to a missing file is
//     refused.
//   - The managed layer, and the layers that have no file (cli,
//     session), are never written.
//
// Errors name the file and the rule.
func AddRule(path string, layer Layer, d Decision, rule string) (*Change, error) {
	switch layer {
	case LayerLocal, LayerProject, LayerUser:
	case LayerManaged:
		return nil, fmt.Errorf("policy: not adding %s rule %q to %s: the managed policy is the administrator's and is never written", d, rule, path)
	default:
		return nil, fmt.Errorf("policy: not adding %s rule %q to %s: the %s layer has no policy file; rules are written to the local, project or user layer", d, rule, path, layer)
	}
	if d > Deny {
		return nil, fmt.Errorf("policy: not adding rule %q to %s: invalid decision %d", rule, path, d)
	}
	r, err := ParseRule(rule, d, Position{Line: 1, Column: 1})
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("policy: %s rule %q is not valid (column %d): %s; %s left unchanged", d, rule, pe.Pos.Column, pe.Msg, path)
		}
		return nil, fmt.Errorf("policy: %s rule %q is not valid: %w; %s left unchanged", d, rule, err, path)
	}
	if !utf8.ValidString(r.Text) {
		return nil, fmt.Errorf("policy: %s rule %q is not valid UTF-8; %s left unchanged", d, rule, path)
	}
	target, err := writeTarget(path, layer)
	if err != nil {
		return nil, err
	}
	dirMode, fileMode := projectDirMode, projectFileMode
	switch layer {
	case LayerUser:
		dirMode, fileMode = userDirMode, userFileMode
	case LayerLocal:
		fileMode = localFileMode
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("policy: adding %s rule %q to %s: %w", d, r.Text, path, err)
	}
	unlock, err := fslock.Dir(dir)
	if err != nil {
		return nil, fmt.Errorf("policy: adding %s rule %q to %s: locking %s: %w", d, r.Text, path, dir, err)
	}
	defer unlock()

	// A writer that does not take the lock (a person's editor) may
	// replace the file while it is edited here: start over if so.
	for attempt := 0; ; attempt++ {
		src, before, err := readPolicy(target)
		if err != nil {
			return nil, fmt.Errorf("policy: adding %s rule %q to %s: %w", d, r.Text, path, err)
		}
		out, line, existed, err := insertRule(path, src, layer, d, r.Text)
		if err != nil {
			return nil, err
		}
		ch := &Change{File: target, Layer: layer, Decision: d, Rule: r.Text, Line: line, Created: before == nil, Existed: existed}
		if existed {
			return ch, nil
		}
		mode := fileMode
		if before != nil {
			mode = before.Mode().Perm()
		}
		err = replaceFile(target, out, mode, before)
		if errors.Is(err, errFileMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("policy: adding %s rule %q to %s: %w", d, r.Text, path, err)
		}
		return ch, nil
	}
}

// errFileMoved reports that the file changed while it was being edited.
var errFileMoved = errors.New("the file changed while it was being edited")

// writeTarget applies AddRule's symbolic link rules and returns the file
// to write.
func writeTarget(path string, layer Layer) (string, error) {
	dir := filepath.Dir(path)
	if layer != LayerUser {
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("policy: not writing %s: its directory %s is a symbolic link; edit the policy by hand", path, dir)
		}
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", fmt.Errorf("policy: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("policy: not writing %s: not a regular file", path)
		}
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("policy: not writing %s: it is a symbolic link that does not lead to a file (%v)", path, err)
	}
	if layer != LayerUser {
		realDir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", fmt.Errorf("policy: %w", err)
		}
		if filepath.Dir(real) != realDir {
			return "", fmt.Errorf("policy: not writing %s: it is a symbolic link to %s, outside its directory; edit that file by hand", path, real)
		}
	}
	fi, err = os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("policy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("policy: not writing %s: %s is not a regular file", path, real)
	}
	return real, nil
}

// readPolicy reads the file, giving (nil, nil, nil) when it is missing.
func readPolicy(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), fi, nil
}

// replaceFile atomically replaces path with data. before is what was read
// (nil for a missing file); if path no longer is that file, nothing is
// written and the error is errFileMoved.
func replaceFile(path string, data []byte, mode fs.FileMode, before fs.FileInfo) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if before != nil {
		keepOwner(tmp, before)
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	now, statErr := os.Stat(path)
	switch {
	case before == nil && statErr == nil:
		return errFileMoved
	case before != nil && (statErr != nil || !os.SameFile(before, now) || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime())):
		return errFileMoved
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// insertRule returns src with text added to the d list of its
// [permissions] table, and the line the rule is on. existed reports that
// the rule was already there (out is then src). filename is used in
// errors. The result has been checked as AddRule documents.
func insertRule(filename string, src []byte, layer Layer, d Decision, text string) (out []byte, line int, existed bool, err error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("policy: adding %s rule %q to %s: %s; the file was left unchanged", d, text, filename, fmt.Sprintf(format, args...))
	}
	old, err := ParseFile(filename, src, layer)
	if err != nil {
		return nil, 0, false, fmt.Errorf("policy: not adding %s rule %q: %w; the file was left unchanged", d, text, err)
	}
	for _, r := range old.Rules {
		if r.Effect == d && r.Text == text {
			line := r.Pos.Line
			if line == 0 {
				// The loader records no positions inside inline tables.
				if l, err := scanLayout(src, d.String()); err == nil && l.list != nil {
					for i, v := range l.list.values {
						if strings.Trim(v, " \t") == text {
							line = bytes.Count(src[:l.list.elems[i].start], []byte("\n")) + 1
							break
						}
					}
				}
			}
			return src, line, true, nil
		}
	}
	ops, err := planInsert(src, d.String(), tomlString(text))
	if err != nil {
		return nil, 0, false, fail("%v", err)
	}
	out, at := applyEdits(src, ops)
	line, err = checkEdit(filename, src, out, old, layer, d, text)
	if err != nil {
		return nil, 0, false, fail("%v", err)
	}
	if at >= 0 {
		if l := bytes.Count(out[:at], []byte("\n")) + 1; line == 0 {
			line = l
		} else if l != line {
			return nil, 0, false, fail("the rule would be on line %d, not %d", line, l)
		}
	}
	return out, line, false, nil
}

// checkEdit verifies that after is before with text appended to the d list
// and nothing else changed, and returns the line of the new rule.
func checkEdit(filename string, before, after []byte, old *File, layer Layer, d Decision, text string) (int, error) {
	nf, err := ParseFile(filename, after, layer)
	if err != nil {
		return 0, fmt.Errorf("the edited file would not parse (%v)", err)
	}
	type key struct {
		eff  Decision
		text string
	}
	count := map[key]int{{d, text}: 1}
	for _, r := range old.Rules {
		count[key{r.Effect, r.Text}]++
	}
	line := 0
	for _, r := range nf.Rules {
		k := key{r.Effect, r.Text}
		count[k]--
		if k == (key{d, text}) {
			line = r.Pos.Line
		}
	}
	for k, n := range count {
		if n != 0 {
			return 0, fmt.Errorf("the edited file would not hold the same rules: %s rule %q", k.eff, k.text)
		}
	}
	var was, is map[string]any
	if err := toml.Unmarshal(before, &was); err != nil {
		return 0, fmt.Errorf("reading the file as TOML: %v", err)
	}
	if err := toml.Unmarshal(after, &is); err != nil {
		return 0, fmt.Errorf("the edited file would not parse (%v)", err)
	}
	if was == nil {
		was = map[string]any{}
	}
	if !stripRule(was, is, d.String(), text) {
		return 0, fmt.Errorf("the rule would not end the %s list", d)
	}
	if !reflect.DeepEqual(was, is) {
		return 0, errors.New("the edit would change more than the rule list")
	}
	return line, nil
}

// stripRule removes from the decoded document is the rule text that ends
// its permissions list key (either matched ignoring case, as the loader
// does), so that is can be compared with the document was before the
// edit. It reports whether it found the rule.
func stripRule(was, is map[string]any, key, text string) bool {
	for pk, pv := range is {
		perm, ok := pv.(map[string]any)
		if !ok || !strings.EqualFold(pk, "permissions") {
			continue
		}
		wasPerm, hadPerm := was[pk].(map[string]any)
		for lk, lv := range perm {
			list, ok := lv.([]any)
			if !ok || !strings.EqualFold(lk, key) || len(list) == 0 || list[len(list)-1] != text {
				continue
			}
			wasList, hadList := wasPerm[lk].([]any)
			if len(wasList) != len(list)-1 {
				continue
			}
			if hadList {
				perm[lk] = list[:len(list)-1]
			} else {
				delete(perm, lk)
			}
			if !hadPerm && len(perm) == 0 {
				delete(is, pk)
			}
			return true
		}
	}
	return false
}

// edit replaces src[at:end] by text. The edit that writes the rule has
// lit set to the rule's offset in text, others -1.
type edit struct {
	at, end int
	text    string
	lit     int
}

// applyEdits applies non-overlapping edits and returns the result and the
// offset of the rule in it (-1 if no edit wrote it).
func applyEdits(src []byte, ops []edit) ([]byte, int) {
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].at < ops[j].at })
	var b bytes.Buffer
	prev, lit := 0, -1
	for _, op := range ops {
		b.Write(src[prev:op.at])
		if op.lit >= 0 {
			lit = b.Len() + op.lit
		}
		b.WriteString(op.text)
		prev = op.end
	}
	b.Write(src[prev:])
	return b.Bytes(), lit
}

// span is a byte range of the source.
type span struct{ start, end int }

// arrayLoc locates a string array: its brackets and elements.
type arrayLoc struct {
	open, close int // offsets of '[' and ']'
	elems       []span
	values      []string // the elements' values
}

// permLayout is where the parts of the permissions table are written.
type permLayout struct {
	// header is the offset of the [permissions] header, -1 if none.
	header int
	// lastKey is the last key/value pair of the [permissions] table.
	lastKey *span
	// dotted is the last top-level permissions.* pair.
	dotted *span
	// inline is the top-level permissions = {...} table: its '{' offset
	// and the last pair in it.
	inline     *span
	inlineLast *span
	// list is the array to add to, if it exists.
	list *arrayLoc
}

// scanLayout finds where the permissions table and its key list are.
func scanLayout(src []byte, key string) (*permLayout, error) {
	l := &permLayout{header: -1}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	isArrayTable := false
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var first *unstable.Node
			table, first = keyParts(e.Key())
			isArrayTable = e.Kind == unstable.ArrayTable
			if !isArrayTable && isKey(table, "permissions") && first != nil {
				l.header = int(first.Raw.Offset)
			}
		case unstable.KeyValue:
			parts, _ := keyParts(e.Key())
			kv := span{int(e.Raw.Offset), int(e.Raw.Offset + e.Raw.Length)}
			switch {
			case !isArrayTable && isKey(table, "permissions"):
				l.lastKey = &kv
				if isKey(parts, key) {
					a, err := locateArray(src, e)
					if err != nil {
						return nil, err
					}
					l.list = a
				}
			case len(table) == 0 && len(parts) == 2 && strings.EqualFold(parts[0], "permissions"):
				l.dotted = &kv
				if strings.EqualFold(parts[1], key) {
					a, err := locateArray(src, e)
					if err != nil {
						return nil, err
					}
					l.list = a
				}
			case len(table) == 0 && isKey(parts, "permissions"):
				v := e.Value()
				if v.Kind != unstable.InlineTable {
					return nil, errors.New("permissions is not a table")
				}
				l.inline = &span{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
				ch := v.Children()
				for ch.Next() {
					n := ch.Node()
					if n.Kind != unstable.KeyValue {
						continue
					}
					l.inlineLast = &span{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length)}
					if ps, _ := keyParts(n.Key()); isKey(ps, key) {
						a, err := locateArray(src, n)
						if err != nil {
							return nil, err
						}
						l.list = a
					}
				}
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return l, nil
}

// isKey reports whether the dotted key parts are the one-part key name.
// Keys are matched ignoring case, as the loader's decoder matches them.
func isKey(parts []string, name string) bool {
	return len(parts) == 1 && strings.EqualFold(parts[0], name)
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		if first == nil {
			first = it.Node()
		}
		parts = append(parts, string(it.Node().Data))
	}
	return parts, first
}

// locateArray finds the brackets and elements of the array value of the
// key/value node kv.
func locateArray(src []byte, kv *unstable.Node) (*arrayLoc, error) {
	v := kv.Value()
	if v.Kind != unstable.Array {
		return nil, fmt.Errorf("the list is a %s, not an array", v.Kind)
	}
	a := &arrayLoc{close: int(kv.Raw.Offset+kv.Raw.Length) - 1}
	it := kv.Key()
	i := -1
	for it.Next() {
		i = int(it.Node().Raw.Offset + it.Node().Raw.Length)
	}
	i = skipBlanks(src, i)
	if i < len(src) && src[i] == '=' {
		i = skipBlanks(src, i+1)
	}
	if i < 0 || i >= len(src) || src[i] != '[' || a.close < i || src[a.close] != ']' {
		return nil, errors.New("cannot find the brackets of the list")
	}
	a.open = i
	ch := v.Children()
	for ch.Next() {
		n := ch.Node()
		if n.Kind == unstable.Comment {
			continue
		}
		a.elems = append(a.elems, span{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length)})
		a.values = append(a.values, string(n.Data))
	}
	return a, nil
}

// planInsert returns the edits that add the TOML string lit to the key
// list of the permissions table.
func planInsert(src []byte, key, lit string) ([]edit, error) {
	l, err := scanLayout(src, key)
	if err != nil {
		return nil, err
	}
	nl := "\n"
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		nl = "\r\n"
	}
	entry := key + " = ["
	// newLine inserts "prefix = [lit]" on a line of its own after the
	// line on which offset off lies.
	newLine := func(off int, prefix string) edit {
		at := lineEnd(src, off)
		if at == len(src) && len(src) > 0 && src[len(src)-1] != '\n' {
			prefix = nl + prefix
		}
		return withLit(at, at, prefix+entry, lit, "]"+nl)
	}
	switch {
	case l.list != nil:
		return insertElem(src, l.list, lit, nl), nil
	case l.header >= 0 && l.lastKey != nil:
		return []edit{newLine(l.lastKey.end, lineIndent(src, l.lastKey.start))}, nil
	case l.header >= 0:
		return []edit{newLine(l.header, "")}, nil
	case l.dotted != nil:
		return []edit{newLine(l.dotted.end, lineIndent(src, l.dotted.start)+"permissions.")}, nil
	case l.inline != nil && l.inlineLast != nil:
		return []edit{withLit(l.inlineLast.end, l.inlineLast.end, ", "+entry, lit, "]")}, nil
	case l.inline != nil:
		return []edit{withLit(l.inline.end, l.inline.end, entry, lit, "]")}, nil
	}
	var b strings.Builder
	switch {
	case len(src) == 0:
	case src[len(src)-1] != '\n':
		b.WriteString(nl + nl)
	case !bytes.HasSuffix(src, []byte(nl+nl)) && len(bytes.TrimSpace(src)) > 0:
		b.WriteString(nl)
	}
	b.WriteString("[permissions]" + nl + entry)
	return []edit{withLit(len(src), len(src), b.String(), lit, "]"+nl)}, nil
}

// withLit returns the edit replacing src[at:end] by prefix+lit+suffix.
func withLit(at, end int, prefix, lit, suffix string) edit {
	return edit{at, end, prefix + lit + suffix, len(prefix)}
}

// insertElem appends lit to the array a, following its layout: a new line
// before the closing bracket of an array that ends on a line of its own,
// else after the last element on its line.
func insertElem(src []byte, a *arrayLoc, lit, nl string) []edit {
	vertical := startsLine(src, a.close) && bytes.ContainsAny(src[a.open:a.close], "\n")
	if !vertical {
		if len(a.elems) == 0 {
			return []edit{withLit(a.open+1, a.close, "", lit, "")}
		}
		last := a.elems[len(a.elems)-1]
		return []edit{withLit(last.end, last.end, ", ", lit, "")}
	}
	// The new line is indented like the last element when it starts its
	// line, else like the line above the closing bracket, else one step
	// more than the bracket.
	at := lineStart(src, a.close)
	indent := ""
	prev := bytes.TrimRight(src[:at], " \t\r\n")
	switch {
	case len(a.elems) > 0 && startsLine(src, a.elems[len(a.elems)-1].start):
		indent = lineIndent(src, a.elems[len(a.elems)-1].start)
	case len(prev) > a.open+1 && lineStart(src, len(prev)) > a.open:
		indent = lineIndent(src, len(prev)-1)
	default:
		indent = lineIndent(src, a.close)
		if strings.Contains(indent, "\t") {
			indent += "\t"
		} else {
			indent += "  "
		}
	}
	if len(a.elems) == 0 {
		return []edit{withLit(at, at, indent, lit, ","+nl)}
	}
	last := a.elems[len(a.elems)-1]
	if hasCommaAfter(src, last.end, a.close) {
		return []edit{withLit(at, at, indent, lit, ","+nl)}
	}
	return []edit{{last.end, last.end, ",", -1}, withLit(at, at, indent, lit, nl)}
}

// hasCommaAfter reports whether a comma follows offset i (past blanks,
// newlines and comments) before offset end.
func hasCommaAfter(src []byte, i, end int) bool {
	for i < end {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
			i++
		case '#':
			for i < end && src[i] != '\n' {
				i++
			}
		case ',':
			return true
		default:
			return false
		}
	}
	return false
}

func skipBlanks(src []byte, i int) int {
	for i >= 0 && i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lineEnd returns the offset just past the newline ending the line that
// holds off, or len(src).
func lineEnd(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(src)
}

// startsLine reports whether only blanks precede off on its line.
func startsLine(src []byte, off int) bool {
	return len(bytes.Trim(src[lineStart(src, off):off], " \t")) == 0
}

// lineIndent returns the blanks that start the line holding off, up to
// off.
func lineIndent(src []byte, off int) string {
	s := src[lineStart(src, off):off]
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return string(s[:n])
}

// tomlString quotes s as a TOML string: a literal string when that avoids
// escapes, else a basic string.
func tomlString(s string) string {
	literal := strings.ContainsAny(s, `"\`) && !strings.ContainsRune(s, '\'')
	basic := false
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			literal, basic = false, true
		}
	}
	if literal {
		return "'" + s + "'"
	}
	if !basic && !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
