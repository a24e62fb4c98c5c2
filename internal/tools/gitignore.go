package tools

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	base     string // directory of the .gitignore, slash-separated, relative to the walk root ("" for the root)
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool // matched against the path relative to base; else against any trailing name
}

// parseGitignore reads the rules of a .gitignore whose directory is base.
// The syntax is git's: # comments, ! negation, a trailing / for
// directories only, a / at the start or in the middle anchors the pattern
// to base, * ? [..] within a name, ** across directories, \ escapes.
func parseGitignore(data []byte, base string) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// trailing spaces are ignored unless escaped
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// match reports whether the rule matches rel (slash-separated, relative
// to the walk root).
func (r *ignoreRule) match(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.base != "" {
		if !strings.HasPrefix(rel, r.base+"/") {
			return false
		}
		rel = rel[len(r.base)+1:]
	}
	if !r.anchored {
		ok, _ := doublestar.Match(r.pattern, path.Base(rel))
		return ok
	}
	ok, _ := doublestar.Match(r.pattern, rel)
	return ok
}

// ignorer is the .gitignore rules in force at a point of a walk.
type ignorer struct {
	rules []ignoreRule
}

// load adds the rules of dir/.gitignore (rel is dir relative to the walk
// root, "" for the root). It returns the number of rules before, to undo
// with truncate when the walk leaves dir.
func (ig *ignorer) load(dir, rel string) int {
	n := len(ig.rules)
	data, err := os.ReadFile(dir + "/.gitignore")
	if err == nil {
		ig.rules = append(ig.rules, parseGitignore(data, rel)...)
	}
	return n
}

// ignored reports whether rel is ignored: the last rule that matches
// decides. (A file below an ignored directory is never reached, since the
// walk does not enter it, as in git.)
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	for i := len(ig.rules) - 1; i >= 0; i-- {
		if ig.rules[i].match(rel, isDir) {
			return !ig.rules[i].negate
		}
	}
	return false
}
