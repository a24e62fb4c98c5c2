package gate

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/risk"
)

// minConfirm is the fewest characters a confirmation word has: a shorter
// one (y, x, .) is typed without reading.
const minConfirm = 3

// confirmTarget is what a person types to allow a destructive call
// (approval.Request.ConfirmTarget). It names what is lost, so that typing
// it is reading it:
//
//   - the paths the call deletes (or, when it deletes none, the paths its
//     destructive parts overwrite): the most significant one — credentials,
//     then protected paths, then paths outside the workspace, then the one
//     nearest the root — as the call spells it, or by its real path when
//     that spelling is shorter than three characters or a glob; with
//     "and N more" when there are others (".git and 3 more");
//   - else the destructive command's program and first operand ("git
//     reset", "shutdown now");
//   - else the call's argument.
//
// A word shorter than three characters or holding a glob is never the
// target: an agent could otherwise pick a target ("rm -rf y src .git")
// whose confirmation is a keystroke. When no word qualifies the target is
// a phrase with the count ("delete 2 paths"), or empty, which the
// approvers take as "yes".
func confirmTarget(call *engine.Call, arg string, red *Redactor) string {
	if call != nil {
		var deleted, overwritten []engine.PathFact
		seen := map[string]bool{}
		command := ""
		for _, u := range call.Units {
			if u.Risk != risk.Destructive {
				continue
			}
			for _, p := range u.Writes {
				key := cmp.Or(p.Real, p.Requested)
				if key == "" || seen[key] {
					continue
				}
				seen[key] = true
				if p.Delete {
					deleted = append(deleted, p)
				} else {
					overwritten = append(overwritten, p)
				}
			}
			if command == "" && u.Command != nil {
				command = commandWords(u.Command.Name, u.Command.Args)
			}
		}
		switch {
		case len(deleted) > 0:
			return namePaths(deleted, "delete")
		case len(overwritten) > 0:
			return namePaths(overwritten, "overwrite")
		case confirmable(command):
			return command
		}
	}
	if w := oneLine(red, arg, 80); confirmable(w) && !strings.HasSuffix(w, "…") {
		return w
	}
	return ""
}

// namePaths names the most significant of paths and how many others
// there are; verb says what happens to them, for the phrase used when no
// path has a name fit to be typed.
func namePaths(paths []engine.PathFact, verb string) string {
	best, name := -1, ""
	for i, p := range paths {
		n := pathName(p)
		if n == "" {
			continue
		}
		if best < 0 || moreSignificant(p, paths[best]) {
			best, name = i, n
		}
	}
	if best < 0 {
		if len(paths) == 1 {
			return verb + " 1 path"
		}
		return fmt.Sprintf("%s %d paths", verb, len(paths))
	}
	if len(paths) > 1 {
		return fmt.Sprintf("%s and %d more", name, len(paths)-1)
	}
	return name
}

// pathName is how a person types p: as the call spells it, else by its
// real path; "" when neither is fit to be typed.
func pathName(p engine.PathFact) string {
	for _, n := range []string{p.Requested, p.Real} {
		// ./y and y/ are y: the length that counts is the clean one.
		if confirmable(n) && confirmable(filepath.Clean(n)) {
			return n
		}
	}
	return ""
}

// moreSignificant reports whether losing a is worse than losing b:
// credentials, then protected paths, then paths outside the workspace,
// then the one nearer the root (which holds more).
func moreSignificant(a, b engine.PathFact) bool {
	if ra, rb := weight(a), weight(b); ra != rb {
		return ra < rb
	}
	return depth(a) < depth(b)
}

func weight(p engine.PathFact) int {
	switch {
	case p.Class == "credential":
		return 0
	case p.Class == "protected":
		return 1
	case !p.Inside:
		return 2
	}
	return 3
}

func depth(p engine.PathFact) int {
	return strings.Count(strings.TrimSuffix(cmp.Or(p.Real, p.Requested), "/"), "/")
}

// commandWords is a program and its first operand.
func commandWords(name string, args []string) string {
	t := name
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if confirmable(a) {
				t += " " + a
			}
			break
		}
	}
	return t
}

// confirmable reports whether s is fit to be typed as a confirmation: at
// least minConfirm characters, one line, no glob characters.
func confirmable(s string) bool {
	s = strings.TrimSpace(s)
	return utf8.RuneCountInString(s) >= minConfirm && !strings.ContainsAny(s, "*?[]{}") &&
		!strings.ContainsFunc(s, unicode.IsControl)
}
