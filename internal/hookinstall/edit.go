package hookinstall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

func errAt(path string, src []byte, off int, format string, args ...any) error {
	p := &parser{src: src, file: path}
	return p.errorf(off, format, args...)
}

// lineIndent returns the whitespace that begins the line holding off.
func lineIndent(src []byte, off int) string {
	i := bytes.LastIndexByte(src[:off], '\n') + 1
	j := i
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return string(src[i:j])
}

// startsLine reports whether only whitespace precedes off on its line.
func startsLine(src []byte, off int) bool {
	i := bytes.LastIndexByte(src[:off], '\n') + 1
	return isSpace(src[i:off])
}

// indentUnit guesses the file's indentation step from its first indented
// line; two spaces when there is none.
func indentUnit(src []byte) string {
	for _, line := range bytes.Split(src, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) {
			return string(line[:len(line)-len(t)])
		}
	}
	return "  "
}

func render(v any, indent, unit string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, unit)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// childIndent is the indentation of the members or elements of n.
func childIndent(src []byte, n *node, unit string) string {
	first := -1
	if len(n.members) > 0 {
		first = n.members[0].keyStart
	} else if len(n.elems) > 0 {
		first = n.elems[0].start
	}
	if first >= 0 && startsLine(src, first) {
		return lineIndent(src, first)
	}
	return lineIndent(src, n.start) + unit
}

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// insertChild adds text (a member "k": v, or an element) as the last child
// of the object or array n. text is already indented for its position.
func insertChild(src []byte, n *node, text, ind string) []byte {
	// Lines end as the file's do.
	eol := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		eol = "\r\n"
		text = strings.ReplaceAll(text, "\n", eol)
	}
	var lastEnd = -1
	if len(n.members) > 0 {
		lastEnd = n.members[len(n.members)-1].val.end
	} else if len(n.elems) > 0 {
		lastEnd = n.elems[len(n.elems)-1].end
	}
	if lastEnd >= 0 {
		// A comment after the last child's trailing comma (JSONC) stays
		// with it.
		if j := skipBlanks(src, lastEnd); j < len(src) && src[j] == ',' {
			j = skipBlanks(src, j+1)
			if bytes.HasPrefix(src[j:], []byte("//")) {
				nl := j + lineEnd(src[j:])
				return splice(src, nl, nl, eol+ind+text)
			}
		}
		return splice(src, lastEnd, lastEnd, ","+eol+ind+text)
	}
	if isSpace(src[n.start+1 : n.end-1]) {
		return splice(src, n.start+1, n.end-1, eol+ind+text+eol+lineIndent(src, n.start))
	}
	// Only comments inside: put the child first and keep them.
	return splice(src, n.start+1, n.start+1, eol+ind+text)
}

func skipBlanks(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// lineEnd returns the offset of the end of b's first line, before any \r\n
// or \n.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return len(b)
	}
	if i > 0 && b[i-1] == '\r' {
		i--
	}
	return i
}

// removeCandidates returns the texts removing the i-th child of n may
// give back: the one for a child insertChild placed after a line comment
// first, then removeChild's.
func removeCandidates(src []byte, n *node, i int) [][]byte {
	var kids []int // start offsets
	var ends []int
	for _, m := range n.members {
		kids, ends = append(kids, m.keyStart), append(ends, m.val.end)
	}
	for _, e := range n.elems {
		kids, ends = append(kids, e.start), append(ends, e.end)
	}
	var c [][]byte
	if i > 0 {
		prev := ends[i-1]
		if j := skipBlanks(src, prev); j < len(src) && src[j] == ',' {
			j = skipBlanks(src, j+1)
			if bytes.HasPrefix(src[j:], []byte("//")) {
				if nl := j + lineEnd(src[j:]); nl < kids[i] && isSpace(src[nl:kids[i]]) {
					c = append(c, splice(src, nl, ends[i], ""))
				}
			}
		}
	}
	return append(c, removeChild(src, n, i))
}

// removeChild cuts the i-th member or element of n: exactly the text
// insertChild added, when it was the one that added it.
func removeChild(src []byte, n *node, i int) []byte {
	type span struct{ start, end int }
	var kids []span
	for _, m := range n.members {
		kids = append(kids, span{m.keyStart, m.val.end})
	}
	for _, e := range n.elems {
		kids = append(kids, span{e.start, e.end})
	}
	switch {
	case i > 0:
		return splice(src, kids[i-1].end, kids[i].end, "")
	case len(kids) > 1:
		return splice(src, kids[0].start, kids[1].start, "")
	}
	end := kids[0].end
	// A trailing comma (JSONC) after the only child goes with it.
	p := &parser{src: src, pos: end, comments: true}
	p.skip()
	if p.err == nil && p.pos < len(src) && src[p.pos] == ',' {
		end = p.pos + 1
	}
	out := splice(src, n.start+1, end, "")
	closeAt := n.end - (end - n.start - 1)
	if isSpace(out[n.start+1 : closeAt-1]) {
		out = splice(out, n.start+1, closeAt-1, "")
	}
	return out
}

type docRefs struct {
	root, hooks, arr *node
	hooksIdx, arrIdx int
}

func locate(path string, src []byte, strict bool, event string) (*docRefs, error) {
	root, err := parseJSON(path, src, !strict)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, errAt(path, src, root.start, "the settings must be a JSON object")
	}
	d := &docRefs{root: root}
	if d.hooks, d.hooksIdx, err = root.get("hooks"); err != nil {
		return nil, errAt(path, src, root.start, "%v", err)
	}
	if d.hooks == nil {
		return d, nil
	}
	if d.hooks.kind != '{' {
		return nil, errAt(path, src, d.hooks.start, `"hooks" must be an object`)
	}
	if d.arr, d.arrIdx, err = d.hooks.get(event); err != nil {
		return nil, errAt(path, src, d.hooks.start, "in \"hooks\": %v", err)
	}
	if d.arr != nil && d.arr.kind != '[' {
		return nil, errAt(path, src, d.arr.start, `"hooks.%s" must be an array`, event)
	}
	return d, nil
}

func installEvent(path string, src []byte, strict bool, event string, entry matcherEntry, o Options) ([]byte, error) {
	d, err := locate(path, src, strict, event)
	if err != nil {
		return nil, err
	}
	unit := indentUnit(src)
	switch {
	case d.hooks == nil:
		ind := childIndent(src, d.root, unit)
		v, err := render(map[string][]matcherEntry{event: {entry}}, ind, unit)
		if err != nil {
			return nil, err
		}
		return insertChild(src, d.root, `"hooks": `+v, ind), nil
	case d.arr == nil:
		ind := childIndent(src, d.hooks, unit)
		v, err := render([]matcherEntry{entry}, ind, unit)
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(event)
		return insertChild(src, d.hooks, string(k)+": "+v, ind), nil
	}
	for _, e := range d.arr.elems {
		if own, _ := ours(e, o); own > 0 {
			return src, nil // already installed
		}
	}
	ind := childIndent(src, d.arr, unit)
	v, err := render(entry, ind, unit)
	if err != nil {
		return nil, err
	}
	return insertChild(src, d.arr, v, ind), nil
}

// ours counts the toolgate hooks for o's client in a matcher entry, and
// how many hooks the entry has in all.
func ours(e *node, o Options) (own, all int) {
	hooks, _ := entryHooks(e)
	return len(toolgateCommands(e, o)), len(hooks)
}

// isToolgateCommand reports whether a hook command runs toolgate's hook
// for o's client: the command install writes, or any toolgate binary's.
func isToolgateCommand(cmd string, o Options) bool {
	if cmd == HookCommand(o) {
		return true
	}
	if g, prog, _, ok := parseGuarded(cmd); ok {
		return g.client == o.Client && (filepath.Base(prog) == "toolgate" || prog == o.Command)
	}
	f := strings.Fields(cmd)
	if len(f) != 3 || f[1] != "hook" || f[2] != string(o.Client) {
		return false
	}
	return filepath.Base(strings.Trim(f[0], `'"`)) == "toolgate"
}

func uninstallEvent(path string, src []byte, strict bool, event string, o Options) ([]byte, []string, error) {
	var notes []string
	for {
		d, err := locate(path, src, strict, event)
		if err != nil {
			return nil, nil, err
		}
		if d.arr == nil {
			return src, notes, nil
		}
		found := -1
		notes = notes[:0]
		for i, e := range d.arr.elems {
			own, all := ours(e, o)
			if own > 0 && own == all {
				found = i
				break
			}
			if own > 0 {
				notes = append(notes, fmt.Sprintf("%s: hooks.%s[%d] runs toolgate together with other hooks; it was left in place: remove the toolgate hook by hand", path, event, i))
			}
		}
		if found < 0 {
			return src, notes, nil
		}
		// Take the removal that install would turn back into this text:
		// for the only entry, install may have created the event's array
		// or the whole hooks object, or filled an empty array; the largest
		// comes first.
		var cands [][]byte
		if len(d.arr.elems) == 1 {
			if len(d.hooks.members) == 1 {
				cands = append(cands, removeCandidates(src, d.root, d.hooksIdx)...)
			}
			cands = append(cands, removeCandidates(src, d.hooks, d.arrIdx)...)
		}
		cands = append(cands, removeCandidates(src, d.arr, found)...)
		// Without a match (the file was edited since), the plain removal
		// at the largest level.
		var pick []byte
		switch {
		case len(d.arr.elems) > 1:
			pick = removeChild(src, d.arr, found)
		case len(d.hooks.members) == 1:
			pick = removeChild(src, d.root, d.hooksIdx)
		default:
			pick = removeChild(src, d.hooks, d.arrIdx)
		}
		for _, c := range cands {
			if again, err := installEvent(path, c, strict, event, entryFor(o, eventSpec(o.Client, event)), o); err == nil && bytes.Equal(again, src) {
				pick = c
				break
			}
		}
		src = pick
	}
}

func eventSpec(c Client, name string) hookEvent {
	for _, e := range specs[c].events {
		if e.name == name {
			return e
		}
	}
	return hookEvent{name: name}
}
