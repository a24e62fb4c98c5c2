package engine

import (
	"context"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/shell"
)

// A shell line may hold a secret that only the words the shell makes of it
// show: AK{IA,}…, $'\x41KIA…', a nested bash -c '…'. The analysis judges
// those words; what is recorded of the line as written must not keep the
// secret in a form a reader could expand back. The functions here find
// such secrets and tell whether a text meant to stand for the line still
// gives them.

// wordSecret is the kind named when the words hold a secret no rule
// names alone (one the scan of the words joined finds only one way).
const wordSecret = "secret"

// extraWordsHoldSecret reports whether the words of cmd other than its
// arguments (which [redactAll] looks at) hold a secret: its program name,
// the values of its assignments and the targets of its redirections.
func extraWordsHoldSecret(cmd *shell.Command) bool {
	if cmd.Name != "" && secrets.Contains(cmd.Name) {
		return true
	}
	for _, a := range cmd.Assigns {
		if secrets.Contains(a.Value) {
			return true
		}
	}
	for _, r := range cmd.Redirects {
		if r.Target != "" && secrets.Contains(r.Target) {
			return true
		}
	}
	return cmd.Stdin != "" && secrets.Contains(cmd.Stdin)
}

// commandWords are the words of cmd a secret is looked for in: program,
// arguments, assigned values, redirection targets, the text the line
// gives it on its standard input and, for echo and printf, what they may
// print ([printedText]).
func commandWords(cmd *shell.Command) []string {
	words := make([]string, 0, 2+len(cmd.Args)+len(cmd.Assigns)+len(cmd.Redirects))
	words = append(words, cmd.Name)
	words = append(words, cmd.Args...)
	for _, a := range cmd.Assigns {
		words = append(words, a.Value)
	}
	for _, r := range cmd.Redirects {
		words = append(words, r.Target)
	}
	if cmd.Stdin != "" {
		words = append(words, cmd.Stdin)
	}
	if t, ok := printedText(cmd); ok {
		words = append(words, t)
	}
	return words
}

// commandHoldsSecret reports whether the words of cmd hold a secret: one
// alone, or one that the word before it names (--password S3cr…).
func commandHoldsSecret(cmd *shell.Command) bool {
	words := commandWords(cmd)
	return secrets.Contains(strings.Join(words, " ")) || secrets.Contains(strings.Join(words, "\n"))
}

// wordSecretKinds returns the kinds of the secrets in the words of cmd,
// which hold one: the rule ids, or [wordSecret] when no rule names one.
func wordSecretKinds(cmd *shell.Command) []string {
	words := commandWords(cmd)
	kinds := appendMissing(secretKinds(strings.Join(words, " ")), secretKinds(strings.Join(words, "\n"))...)
	if len(kinds) == 0 {
		kinds = []string{wordSecret}
	}
	return kinds
}

// appendMissing appends to s each of vs that s does not hold yet.
func appendMissing[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// lineSecretKinds returns the kinds of the secrets the words of any of
// cmds, the commands of src, hold, heredoc and here-string bodies as
// written included. A network command of the line may be handed any of
// them: piped through a filter or xargs, fed to a group or subshell it
// runs in, set in a variable a heredoc expands, or written in base64 and
// decoded on the way; so a line that reaches the network sends them all.
// src itself is read too, for a secret written where no command's word
// holds it (a for list, a case word). What the line's echo and printf
// commands print, and what its commands are given on standard input, are
// also read each as one text with all whitespace dropped, as a filter such
// as tr -d may join pieces printed apart, inside one word or by several
// commands; base64 split over lines is read joined, as base64 -d does; a
// variable the line sets is read in the words that expand it, with every
// value the line gives it joined ([expandSet]).
func lineSecretKinds(src string, cmds []shell.Command) []string {
	var kinds []string
	add := func(s string) { kinds = appendMissing(kinds, secretKinds(s)...) }
	add(src)
	if d, ok := base64Text(src); ok {
		add(d)
	}
	set := map[string]string{}
	for _, m := range forList().FindAllStringSubmatch(src, -1) {
		set[m[1]] += strings.Join(strings.Fields(strings.NewReplacer(`"`, "", "'", "").Replace(m[2])), "")
	}
	for i := range cmds {
		for _, a := range cmds[i].Assigns {
			v := a.Value
			if len(v) > 1 && v[0] == '(' && v[len(v)-1] == ')' {
				v = strings.Join(strings.Fields(v[1:len(v)-1]), "")
			}
			set[a.Name] += v
		}
		if cmds[i].Name == "" {
			for _, a := range cmds[i].Args {
				if m := psAssign().FindStringSubmatch(a); m != nil {
					set[m[1]] += m[2]
				}
			}
		}
	}
	// printed and stdin as written, and with the line's variables
	// expanded command by command (so $k and the text after it stay apart).
	var printed, stdin, printedX, stdinX strings.Builder
	for i := range cmds {
		words := commandWords(&cmds[i])
		for _, r := range cmds[i].Redirects {
			if r.Heredoc != "" {
				words = append(words, r.Heredoc)
			}
		}
		for _, w := range words {
			if d, ok := base64Text(w); ok {
				words = append(words, d)
			}
		}
		for _, sep := range []string{" ", "\n"} {
			j := strings.Join(words, sep)
			add(j)
			if x := expandSet(j, set); x != j {
				add(x)
			}
		}
		if t, ok := printedText(&cmds[i]); ok {
			printed.WriteString(t)
			printedX.WriteString(expandSet(t, set))
		}
		stdin.WriteString(cmds[i].Stdin)
		stdinX.WriteString(expandSet(cmds[i].Stdin, set))
	}
	texts := []string{printed.String(), stdin.String()}
	for k, x := range []string{printedX.String(), stdinX.String()} {
		if x != texts[k] {
			texts = append(texts, x)
		}
	}
	for _, t := range texts {
		joined := strings.Join(strings.Fields(t), "")
		if joined == "" {
			continue
		}
		add(joined)
		if d, ok := base64Text(joined); ok {
			add(d)
		}
	}
	return kinds
}

// setVarRef is a variable's expansion as written: $name, ${name}, ${name[@]}.
var setVarRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*0-9]*\])?\})`)
})

// forList is a for loop's variable and its list as written.
var forList = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([^;\n]*)`)
})

// echoSubst is a command substitution of a static echo or printf:
// $(echo X), `printf X`.
var echoSubst = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\\$\\((?:echo|printf)\\s+([^()`$]*)\\)|`(?:echo|printf)\\s+([^()`$]*)`")
})

// expandSet returns s with the expansions of the variables in set
// replaced by their values and a static echo or printf's command
// substitution by its words, quotes dropped; other expansions are kept as
// written.
func expandSet(s string, set map[string]string) string {
	if !strings.Contains(s, "$") && !strings.Contains(s, "`") {
		return s
	}
	s = echoSubst().ReplaceAllString(s, "$1$2")
	s = setVarRef().ReplaceAllStringFunc(s, func(ref string) string {
		m := setVarRef().FindStringSubmatch(ref)
		if v, ok := set[m[1]+m[2]]; ok {
			return v
		}
		return ref
	})
	return strings.NewReplacer(`"`, "", "'", "").Replace(s)
}

// base64Text returns the text a word (a heredoc's lines, one by one, and
// all of them joined) written in standard or URL-safe base64 decodes to,
// when that is printable text; it reports false for any other word.
func base64Text(w string) (string, bool) {
	var out []string
	fields := strings.Fields(w)
	if len(fields) > 1 {
		fields = append(fields, strings.Join(fields, ""))
	}
	for _, line := range fields {
		if len(line) < 16 {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			b, err := enc.DecodeString(line)
			if err == nil && utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' }) {
				out = append(out, string(b))
				break
			}
		}
	}
	return strings.Join(out, "\n"), len(out) > 0
}

// printfDirective is a printf conversion such as %s, %-8.3b or %c.
var printfDirective = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%[-+ #0-9.*]*[a-zA-Z]`) })

// printedText returns what an echo, printf or PowerShell Write-Output
// command, or a PowerShell expression, may print with the spaces between
// its words dropped (as a filter such as tr -d ' ' would): its operands
// joined, a printf format's directives taken out, escapes read. It reports
// false for any other command.
func printedText(cmd *shell.Command) (string, bool) {
	args := cmd.Args
	switch cmd.Name {
	case "echo":
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			args = args[1:]
		}
	case "printf":
		if len(args) > 1 && args[0] == "-v" {
			args = args[2:]
		}
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 0 {
			args = append([]string{strings.ReplaceAll(printfDirective().ReplaceAllString(args[0], ""), "%%", "%")}, args[1:]...)
		}
	case "":
		// A PowerShell expression writes its value: its operands, with
		// + and the commas of an array dropped; an assignment writes
		// nothing.
		var parts []string
		for _, a := range args {
			if a != "+" && psAssign().FindStringSubmatch(a) == nil {
				parts = append(parts, strings.ReplaceAll(a, ",", ""))
			}
		}
		args = parts
	default:
		if !strings.EqualFold(cmd.Name, "write-output") && !strings.EqualFold(cmd.Name, "write-host") {
			return "", false
		}
	}
	if len(args) == 0 {
		return "", false
	}
	return unescapeOutput(strings.Join(args, "")), true
}

// psAssign is a PowerShell assignment as a word: $name=value, $name+=value.
var psAssign = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^\$([A-Za-z_][A-Za-z0-9_]*)\s*\+?=\s*(.*)$`)
})

// unescapeOutput returns s with the backslash escapes echo -e and printf
// read turned into the characters they stand for: \xHH, \NNN and \0NNN in
// octal, \uHHHH and \UHHHHHHHH; any other backslash stands for itself.
func unescapeOutput(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		base, max, j := 0, 0, i+1
		switch c := s[i+1]; {
		case c == 'x':
			base, max, j = 16, 2, i+2
		case c == 'u':
			base, max, j = 16, 4, i+2
		case c == 'U':
			base, max, j = 16, 8, i+2
		case c == '0':
			base, max, j = 8, 4, i+1
		case c >= '1' && c <= '7':
			base, max = 8, 3
		}
		if base == 0 {
			b.WriteByte(s[i])
			continue
		}
		v, n := 0, 0
		for ; n < max && j+n < len(s); n++ {
			d := digitValue(s[j+n])
			if d < 0 || d >= base {
				break
			}
			v = v*base + d
		}
		if n == 0 || v > 0x10FFFF {
			b.WriteByte(s[i])
			continue
		}
		b.WriteRune(rune(v))
		i = j + n - 1
	}
	return b.String()
}

// digitValue returns the value of the hexadecimal digit c, or -1.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// lineHoldsSecret reports whether src, read as a line of dialect d, runs a
// command whose words hold a secret, or holds one the way a network line
// is read ([lineSecretKinds]: printed in pieces, written in base64). A
// line that cannot be read counts as holding one.
func (d dialect) lineHoldsSecret(src string) bool {
	res, err := d.analyze(context.Background(), src, &shell.Options{})
	if err != nil {
		return true
	}
	for i := range res.Commands {
		if commandHoldsSecret(&res.Commands[i]) {
			return true
		}
	}
	return len(lineSecretKinds(src, res.Commands)) > 0
}

// hiddenLabel returns the label of cmd, whose words hold secrets of kinds,
// as label (the command as written, its secrets redacted as written) when
// that label gives none of them back once read as a line of d; else the
// command as its words show it, redacted word by word, when that gives
// none back; else only markers naming the kinds.
func (d dialect) hiddenLabel(label string, cmd *shell.Command, args []string, kinds []string) string {
	if !d.lineHoldsSecret(label) {
		return label
	}
	if args == nil {
		args = cmd.Args
	}
	var words []string
	for _, a := range cmd.Assigns {
		words = append(words, a.Name+"="+secrets.Redact(a.Value))
	}
	if cmd.Name != "" {
		words = append(words, secrets.Redact(cmd.Name))
	}
	words = append(words, args...)
	if l := strings.Join(words, " "); !d.lineHoldsSecret(l) {
		return l
	}
	return markers(kinds)
}

// markers returns a redaction marker for each kind, as secrets.Redact
// writes them.
func markers(kinds []string) string {
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("[REDACTED:" + k + "]")
	}
	return b.String()
}

// WordSecrets returns the kinds of secret (the secrets package's rule
// ids) that the words of the call's commands hold as the shell hands them
// to the programs (after quote removal, brace expansion and ANSI-C
// escapes, in nested shells too), without repeats; nil when none does, as
// for a call that is no shell line.
func (c *Call) WordSecrets() []string {
	if c == nil {
		return nil
	}
	var kinds []string
	for _, u := range c.Units {
		kinds = appendMissing(kinds, u.wordSecrets...)
	}
	return kinds
}

// LineHoldsSecret reports whether command, the command of a shell tool's
// call as a request gives it (a string or an argv array), runs, read in
// the call's shell, a command whose words hold a secret. A command that
// cannot be read, or is neither a string nor an array of strings, counts
// as holding one.
func (c *Call) LineHoldsSecret(command any) bool {
	var d dialect
	if c != nil {
		d = c.dialect
	}
	var line string
	switch x := command.(type) {
	case string:
		line = x
	case []any:
		l, err := argvLine(x)
		if err != nil {
			return true
		}
		line = l
	default:
		return true
	}
	return d.lineHoldsSecret(line)
}

// SecretMarkers returns markers naming kinds, the secrets that the words
// of a command hold ("[REDACTED:aws-access-key-id]"): what is recorded in
// the command's place when [Call.LineHoldsSecret] reports that its text,
// redacted as written, still gives them.
func SecretMarkers(kinds []string) string {
	if len(kinds) == 0 {
		kinds = []string{wordSecret}
	}
	return markers(kinds)
}
