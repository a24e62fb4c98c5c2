// Package injection finds text in tool output that tries to steer the
// model reading it: instructions to ignore earlier instructions, forged
// role headers and closing tags, requests to reveal or send secrets,
// hidden (invisible or reordered) text, and markdown images or links whose
// addresses carry data out.
//
// [Scan] is pure, bounded and linear: it reads at most [MaxScan] bytes of
// any input and never fails. A finding is a reason to distrust the output,
// not proof of an attack; callers record it and may [Wrap] the output so
// the model treats it as data.
package injection

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Class names a kind of injection. The values are stable: they are
// recorded in events.
type Class string

// The classes [Scan] reports.
const (
	// IgnoreInstructions: text telling the reader to ignore, disregard or
	// forget its previous instructions, or to take new ones.
	IgnoreInstructions Class = "ignore-instructions"
	// RoleHeader: a forged chat role header (system:, <|im_start|>system,
	// ### System, [INST], <system>, Assistant:) or a closing tag that
	// tries to end the tool output early.
	RoleHeader Class = "role-header"
	// SecretExfiltration: a request to print or send keys, tokens,
	// passwords, .env files or SSH keys, or a command that does so.
	SecretExfiltration Class = "secret-exfiltration"
	// HiddenText: Unicode tag characters, or zero-width characters inside
	// words beyond [ZeroWidthThreshold].
	HiddenText Class = "hidden-text"
	// DataURL: a markdown image or link whose address carries data: a
	// long base64 or hex value, or a template such as {secret}.
	DataURL Class = "data-url"
	// BidiOverride: bidirectional-text controls that reorder what is
	// shown.
	BidiOverride Class = "bidi-override"
)

// Classes lists every class in the order findings are reported.
var Classes = []Class{IgnoreInstructions, RoleHeader, SecretExfiltration, HiddenText, DataURL, BidiOverride}

const (
	// MaxScan is the most bytes of one input Scan reads: the first
	// MaxScan-TailScan bytes and the last TailScan bytes.
	MaxScan = 1 << 20
	// TailScan is how much of the end of a longer input is scanned, so
	// that padding cannot push an instruction out of reach at the end.
	TailScan = 64 << 10
	// MaxPerClass bounds the findings of one class in one input.
	MaxPerClass = 16
	// ExcerptBytes bounds the text of an excerpt before escaping.
	ExcerptBytes = 120
	// ZeroWidthThreshold is how many words may hold zero-width
	// characters before the text counts as hidden.
	ZeroWidthThreshold = 2
)

// Span is a byte range [Start, End) of the scanned input.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Finding is one match: its class, where it is in the input, and an
// excerpt of the input around it of at most about [ExcerptBytes] bytes
// with control, format and invisible characters escaped (\u200b), so it
// is safe to show and to log.
type Finding struct {
	Class   Class  `json:"class"`
	Span    Span   `json:"span"`
	Excerpt string `json:"excerpt"`
}

// rule is a pattern run on windows of the normalized text around each
// occurrence of one of its keys: from back bytes before to fwd bytes after
// the key. Matching only near keys keeps the work linear and fast: Go's
// regexp runs its backtracker on short windows.
type rule struct {
	class     Class
	keys      []string
	back, fwd int
	// lineStart rules begin with (?m)^: a match at the window's start
	// counts only when the window starts a line.
	lineStart bool
	// also, when set, is a cheap test before the pattern: the window
	// must hold one of these too.
	also []string
	// stop, when set, ends the window at the first of these bytes after
	// the key.
	stop string
	re   *regexp.Regexp
	// check, when set, must accept the submatches for a match to count.
	check func(text []byte, m []int) bool
}

// Patterns run on normalized text: lower case, accents dropped, white
// space collapsed (a run holding a line break becomes "\n").
const (
	sp = `[ \n]`
	// instruction-like start of a sentence after a role prefix.
	imperative  = `(?:you\b|ignore\b|disregard\b|forget\b|from now on|new (?:instructions|rules|task)|do not\b|don'?t\b|always\b|never\b|must\b|please\b|your\b|reveal\b|print\b|send\b|run\b|execute\b|override\b|the user\b|important\b|act as\b|pretend\b|output\b)`
	verbsIgnore = `(?:ignore|ignoring|disregard|disregarding|forget|forgetting|skip|override|overriding|bypass|neglect|abandon|discard|drop)`
	earlier     = `(?:previous|previously given|prior|above|earlier|preceding|foregoing|former|original|initial|old|existing|system|developer|all)`
	orders      = `(?:instructions?|directions?|prompts?|rules|guidelines|directives?|commands?|context|messages?|guidance|orders|constraints|restrictions|programming|safeguards)`
	secretNoun  = `(?:api[ _-]?keys?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|bearer tokens?|secret[ _-]?keys?|tokens|passwords?|passwd|\.env(?: file)?|env(?:ironment)? (?:variables|vars)|ssh[ _-](?:private[ _-])?keys?|private[ _-]keys?|id_rsa|id_ed25519|id_ecdsa|credentials|secrets|\.aws/credentials|aws_secret_access_key|github_token|openai_api_key|anthropic_api_key)`
)

var (
	ordersKeys = []string{"instruction", "direction", "prompt", "rule", "guid", "directive", "command", "context", "message", "order", "constraint", "restriction", "programming", "safeguard"}
	sendKeys   = []string{"send", "post", "upload", "exfiltrate", "leak", "transmit", "forward", "mail", "submit", "beacon", "pipe"}
	showKeys   = []string{"print", "reveal", "show", "display", "output", "dump", "tell me", "give me", "list", "share", "paste", "include", "echo", "write out", "repeat", "disclose", "expose", "read out"}
	netKeys    = []string{"curl", "wget", "nc ", "ncat", "netcat", "fetch", "invoke-webrequest", "http"}
	secretKeys = []string{"api", "token", "key", "password", "passwd", ".env", "env", "ssh", "id_rsa", "id_ed25519", "id_ecdsa", "credentials", "secrets"}
	fileKeys   = []string{".ssh", "id_rsa", "id_ed25519", ".env", ".aws", "credentials", "token", "secret", "passwd", "shadow", ".netrc", ".npmrc", ".pypirc", ".git-credentials", "key"}
)

// rules are the patterns, compiled at first use, not when the program
// starts.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// (1) ignore previous instructions, and paraphrases.
		{class: IgnoreInstructions, keys: []string{"ignor", "disregard", "forget", "skip", "overrid", "bypass", "neglect", "abandon", "discard", "drop"}, back: 1, fwd: 220, also: ordersKeys, re: regexp.MustCompile(`\b` + verbsIgnore + sp + `(?:(?:all|any|each|every|of|the|your|my|these|those|that|its|everything|what|you|were|was|have|been|told|given|said|to|about|in)` + sp + `){0,4}` + earlier + sp + `(?:(?:given|stated|received|above|provided|set|and|or|previous|prior|earlier|system|developer|user)` + sp + `){0,3}` + orders + `\b`)},
		{class: IgnoreInstructions, keys: []string{"ignore", "disregard", "forget"}, back: 1, fwd: 140, re: regexp.MustCompile(`\b(?:ignore|disregard|forget)` + sp + `(?:all|everything)` + sp + `(?:(?:that|you|were|was|i|have|told|said|written|stated)` + sp + `){1,4}(?:above|before|earlier|previously|so far|until now)\b`)},
		{class: IgnoreInstructions, keys: []string{"ignore", "disregard", "forget"}, back: 1, fwd: 40, re: regexp.MustCompile(`\b(?:ignore|disregard|forget)` + sp + `(?:the|everything|all)` + sp + `above\b`)},
		{class: IgnoreInstructions, keys: []string{"follow", "obey"}, back: 20, fwd: 160, also: ordersKeys, re: regexp.MustCompile(`\b(?:do not|don'?t|stop)` + sp + `(?:follow|obey|following|obeying)(?:ing)?` + sp + `(?:your|the|any|all)` + sp + `(?:(?:previous|prior|original|earlier|system|developer|above)` + sp + `){1,2}` + orders + `\b`)},
		{class: IgnoreInstructions, keys: []string{"pay no attention", "set aside", "no longer apply", "no longer valid", "void", "obsolete", "outdated", "cancel", "superseded", "revoked"}, back: 80, fwd: 100, also: ordersKeys, re: regexp.MustCompile(`\b(?:pay no attention to|set aside)` + sp + `(?:(?:all|any|the|your|my|these|those)` + sp + `){0,2}` + earlier + sp + `(?:(?:system|developer|user)` + sp + `)?` + orders + `\b|\b` + earlier + sp + `(?:(?:system|developer)` + sp + `)?` + orders + sp + `(?:are|is|were|have been|has been)` + sp + `(?:now` + sp + `)?(?:void|null and void|obsolete|outdated|cancell?ed|superseded|revoked|no longer (?:valid|apply|applicable|in effect))\b`)},
		{class: IgnoreInstructions, keys: []string{"instructions"}, back: 40, fwd: 4, re: regexp.MustCompile(`(?m)(?:^|[.!:] )(?:new|updated|revised|real|actual|true) (?:system )?instructions ?:`)},
		{class: IgnoreInstructions, keys: []string{"you are now"}, back: 1, fwd: 60, re: regexp.MustCompile(`\byou are now (?:in )?(?:dan\b|developer mode|an? (?:unrestricted|unfiltered|jailbroken|different)|jailbroken|free of|root\b|admin|administrator|god mode|in charge)`)},
		{class: IgnoreInstructions, keys: []string{"ignor", "olvid", "descarta", "oubli", "vergiss", "vergessen", "esquec", "dimentica"}, back: 1, fwd: 160, re: regexp.MustCompile(`\b(?:ignora|ignore|olvida|olvide|descarta|ignorez|oubliez|oublie|ignoriere|ignorieren sie|vergiss|vergessen sie|ignore as|esqueca|ignori|dimentica)` + sp + `(?:(?:todas|todos|las|los|toutes|tous|les|alle|die|as|os|tutte|le)` + sp + `){0,2}(?:instrucciones|instructions|anweisungen|instruktionen|instrucoes|istruzioni|regles|regeln|reglas)` + sp + `(?:anteriores|precedentes|previas|vorherigen|bisherigen|obigen|precedenti)\b`)},
		{class: IgnoreInstructions, keys: []string{"ignor", "olvid", "oubli", "vergiss"}, back: 1, fwd: 100, re: regexp.MustCompile(`\b(?:ignoriere|vergiss|ignora|olvida|ignorez|oubliez)` + sp + `(?:alle|todas|toutes)` + sp + `(?:(?:vorherigen|bisherigen|obigen|las|les)` + sp + `)?(?:anweisungen|instrucciones|instructions)\b`)},
		{class: IgnoreInstructions, keys: []string{"忽略", "无视", "忘记", "忽视", "忘掉", "無視"}, back: 40, fwd: 80, re: regexp.MustCompile(`(?:忽略|无视|忘记|忽视|忘掉)(?:掉)?(?:你)?(?:之前|以上|上面|先前|前面|此前|所有|全部|一切)(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|规则|提示|命令)|(?:以前|前)の(?:指示|命令)を(?:すべて)?無視`)},

		// (2) forged role headers and closing tags.
		{class: RoleHeader, keys: []string{"<|"}, back: 0, fwd: 40, re: regexp.MustCompile(`<\|(?:im_start|im_end|im_sep|endoftext|eot_id|start_header_id|end_header_id|system|assistant|user)\|>`)},
		{class: RoleHeader, keys: []string{"inst]", "sys>>"}, back: 4, fwd: 1, re: regexp.MustCompile(`\[/?inst\]|<<(?:/)?sys>>`)},
		{class: RoleHeader, keys: []string{"<system", "</system", "<assistant", "</assistant", "<developer", "</developer", "<instruction", "</instruction", "<admin", "</admin"}, back: 0, fwd: 30, re: regexp.MustCompile(`</?(?:system|system[-_]?prompt|system[-_]?message|system-reminder|assistant|developer|instructions?|admin)>`)},
		{class: RoleHeader, keys: []string{"</"}, back: 0, fwd: 60, re: regexp.MustCompile(`</(?:tool[_-]?(?:result|output|response|call|use)s?|function[_-]?(?:results?|calls?|response)|untrusted[-_]tool[-_]output|observation|context|document|search[_-]results?|antml:[a-z_]+)>`)},
		{class: RoleHeader, keys: []string{"system", "assistant", "developer", "admin"}, back: 20, fwd: 100, lineStart: true, also: []string{":"}, re: regexp.MustCompile(`(?m)^[ >*_\-]*(?:\*\*)?(?:system|assistant|developer|admin)(?: (?:message|prompt|note|override|instruction|instructions))?(?:\*\*)? ?(?:\*\*)?:(?:\*\*)? ?` + imperative)},
		{class: RoleHeader, keys: []string{"system", "assistant", "developer"}, back: 20, fwd: 140, lineStart: true, also: []string{"#"}, re: regexp.MustCompile(`(?m)^#{1,6} ?(?:\*\*)?(?:system|assistant|developer)(?: (?:prompt|message|instructions?|override))?(?:\*\*)? ?:?(?:\*\*)? ?\n[ >*\-]*` + imperative)},
		{class: RoleHeader, keys: []string{"assistant", "human", "user", "ai:", "ai :"}, back: 0, fwd: 40, lineStart: true, also: []string{":"}, re: regexp.MustCompile(`(?m)^(?:assistant|ai|human|user) ?: ?(?:sure|ok|okay|of course|certainly|i will|i'll|understood|yes|no problem|here)\b`)},

		// (3) requests to reveal or send secrets.
		{class: SecretExfiltration, keys: secretKeys, back: 100, fwd: 110, also: sendKeys, re: regexp.MustCompile(`\b(?:send|post|upload|exfiltrate|leak|transmit|forward|e-?mail|submit|beacon|pipe)\b[^.\n]{0,60}?\b(?:` + secretNoun + `|token)\b[^.\n]{0,60}?\b(?:to|at|into|via)\b ?(?:https?://|[\w.+-]+@|[\w-]+\.[a-z]{2,}|the (?:url|server|endpoint|webhook|address))`)},
		{class: SecretExfiltration, keys: secretKeys, back: 110, fwd: 10, also: showKeys, re: regexp.MustCompile(`\b(?:print|reveal|show|display|output|dump|tell me|give me|share|paste|include|echo|write out|repeat|disclose|read out)` + sp + `(?:(?:me|us|all|the|your|any|of|every|full|complete|contents|content|user's|users'|stored|saved|current|raw|values?|available)` + sp + `){0,4}` + secretNoun + `\b`), check: notNarrative},
		{class: SecretExfiltration, keys: netKeys, back: 0, fwd: 320, also: []string{"$(", "`"}, re: regexp.MustCompile(`\b(?:curl|wget|nc|ncat|netcat|fetch|invoke-webrequest|http)\b[^\n]{0,200}?(?:\$\(|` + "`" + `)(?:cat|base64|env|printenv|head|tail|xxd|gzip -c|tar)\b[^\n]{0,80}?(?:\.ssh|id_rsa|id_ed25519|\.env\b|\.aws|credentials|token|secret|passwd|shadow|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\bkey)`)},
		{class: SecretExfiltration, keys: []string{"curl", "wget"}, back: 0, fwd: 300, also: fileKeys, re: regexp.MustCompile(`\b(?:curl|wget)\b[^\n]{0,200}?(?:-d|--data(?:-binary|-raw|-urlencode)?|-f|--form|-t|--upload-file|--post-file)[ =]?['"]?@?[^\s'"]*(?:\.ssh/|id_rsa|id_ed25519|\.env\b|\.aws/|\.netrc|\.git-credentials|/etc/shadow)`)},
		{class: SecretExfiltration, keys: []string{"|"}, back: 200, fwd: 30, also: []string{"curl", "wget", "nc", "ssh"}, re: regexp.MustCompile(`\b(?:cat|base64|tar|gzip)\b[^\n|]{0,120}?(?:\.ssh/id_|id_rsa|id_ed25519|\.aws/credentials|\.env\b|\.netrc|\.git-credentials|/etc/shadow)[^\n]{0,60}?\| ?(?:curl|wget|nc|ncat|netcat|openssl s_client|ssh)\b`)},

		// (5) markdown images and links whose address carries data.
		{class: DataURL, keys: []string{"]("}, back: 205, fwd: 2100, stop: " \n)", re: regexp.MustCompile(`(!?)\[[^\]\n]{0,200}\]\( ?<?((?:https?:)?//[^\s)]+)`), check: carriesData},
		{class: DataURL, keys: []string{"<img"}, back: 0, fwd: 2300, stop: ">", re: regexp.MustCompile(`<img\b[^>]{0,200}?\bsrc ?= ?["']?()((?:https?:)?//[^\s"'>]+)`), check: carriesData},
	}
})

var (
	// template placeholders in an address: {secret}, {{token}}, ${KEY},
	// $API_KEY, <secret>, [data].
	templateRe = lazyRegexp(`\{\{?[^}/]{1,40}\}\}?|\$\{?[a-z_][a-z0-9_]{2,}|%7b%7b|%7b[a-z_]{2,40}%7d|<[a-z_ ]{2,40}>|\[(?:secret|data|token|key|password|conversation|chat|history|env)[a-z_ ]{0,30}\]`)
	// a long run of base64 or hex.
	blobRe = lazyRegexp(`[a-z0-9+/=_-]{40,}`)
)

// isBlob reports whether b looks like encoded data rather than words: it
// mixes many letters and digits, with few hyphens and slashes.
func isBlob(b string) bool {
	var letters, digits int
	for _, c := range []byte(b) {
		switch {
		case 'a' <= c && c <= 'z':
			letters++
		case '0' <= c && c <= '9':
			digits++
		}
	}
	return letters >= 8 && digits >= 6 && strings.Count(b, "-") <= 2 && strings.Count(b, "/") <= 1
}

// notNarrative rejects a match that follows "to", "not", "never" or
// "can": a sentence about printing secrets ("how to print env vars",
// "never print the password") rather than a request to.
func notNarrative(text []byte, m []int) bool {
	before := string(text[max(m[0]-8, 0):m[0]])
	for _, w := range []string{" to ", " not ", "never ", " can ", "n't "} {
		if strings.HasSuffix(before, w) || before == strings.TrimPrefix(w, " ") {
			return false
		}
	}
	return true
}

// carriesData reports whether the address of a markdown image (m[2:4]
// non-empty "!") or link carries data: a template placeholder anywhere
// after the host, or, in an image's path or query or a link's query, a
// run of 40 or more base64 or hex characters that mixes letters and
// digits.
func carriesData(text []byte, m []int) bool {
	image := m[2] >= 0 && m[3] > m[2]
	u := text[m[4]:m[5]]
	// Strip the scheme and host.
	rest := u
	if i := strings.Index(string(rest), "//"); i >= 0 {
		rest = rest[i+2:]
	}
	slash := strings.IndexAny(string(rest), "/?#")
	if slash < 0 {
		return false
	}
	rest = rest[slash:]
	if templateRe().Match(rest) {
		return true
	}
	where := rest
	if !image {
		q := strings.IndexByte(string(rest), '?')
		if q < 0 {
			return false
		}
		where = rest[q:]
	}
	for _, loc := range blobRe().FindAllIndex(where, -1) {
		b := string(where[loc[0]:loc[1]])
		if isBlob(b) {
			return true
		}
		for seg := range strings.SplitSeq(b, "/") {
			if len(seg) >= 32 && isBlob(seg) {
				return true
			}
		}
	}
	return false
}

// keyHit is an occurrence of a rule's key: at offset at, n bytes long.
type keyHit struct{ at, n int }

// keyTable finds the keys of every rule in one pass: by the key's first
// two bytes (or one, for one-byte keys).
type keyIndex struct {
	two    map[uint16][]keyRef
	hasTwo [1 << 16]bool
	one    [256][]int
}

var keyTable = sync.OnceValue(func() *keyIndex {
	t := &keyIndex{two: map[uint16][]keyRef{}}
	for ri, r := range rules() {
		for _, k := range r.keys {
			if len(k) == 1 {
				t.one[k[0]] = append(t.one[k[0]], ri)
				continue
			}
			p := uint16(k[0])<<8 | uint16(k[1])
			t.two[p] = append(t.two[p], keyRef{key: k, rule: ri})
			t.hasTwo[p] = true
		}
	}
	return t
})

type keyRef struct {
	key  string
	rule int
}

// findKeys returns, for each rule, the occurrences of its keys in text in
// order, at most one per offset.
func findKeys(text []byte) [][]keyHit {
	kt := keyTable()
	hits := make([][]keyHit, len(rules()))
	last := make([]int, len(hits))
	for i := range last {
		last[i] = -1
	}
	for i, c := range text {
		for _, ri := range kt.one[c] {
			hits[ri] = append(hits[ri], keyHit{i, 1})
			last[ri] = i
		}
		if i+1 >= len(text) {
			break
		}
		p := uint16(c)<<8 | uint16(text[i+1])
		if !kt.hasTwo[p] {
			continue
		}
		for _, k := range kt.two[p] {
			if last[k.rule] != i && bytes.HasPrefix(text[i:], []byte(k.key)) {
				hits[k.rule] = append(hits[k.rule], keyHit{i, len(k.key)})
				last[k.rule] = i
			}
		}
	}
	return hits
}

// nearLineStart reports whether only a few markup characters (quote,
// list, emphasis and heading marks, white space) stand between the start
// of the line and i.
func nearLineStart(text []byte, i int) bool {
	for j := i - 1; j >= 0 && j >= i-20; j-- {
		switch text[j] {
		case '\n':
			return true
		case ' ', '>', '*', '_', '-', '#':
		default:
			return false
		}
	}
	return i <= 20
}

// containsAny reports whether b holds one of keys; true when keys is
// empty.
func containsAny(b []byte, keys []string) bool {
	for _, k := range keys {
		if bytes.Contains(b, []byte(k)) {
			return true
		}
	}
	return len(keys) == 0
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

// Scan returns what in text looks like prompt injection, ordered by class
// (in the order of [Classes]) and then by position; nil when nothing does.
// It reads at most [MaxScan] bytes and its work is linear in them.
func Scan(text []byte) []Finding {
	if len(text) <= MaxScan {
		return scanWindow(text, text, 0)
	}
	head := cutRune(text, MaxScan-TailScan)
	tail := len(text) - TailScan
	for tail < len(text) && !utf8.RuneStart(text[tail]) {
		tail++
	}
	fs := append(scanWindow(text, text[:head], 0), scanWindow(text, text[tail:], tail)...)
	sortFindings(fs)
	return fs
}

// cutRune returns the largest n' <= n that does not split a rune of b.
func cutRune(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	// No further back than a character reaches: stray continuation
	// bytes are characters of their own.
	for back := 0; back < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(b[n]); back++ {
		n--
	}
	return n
}

func scanWindow(orig, src []byte, base int) []Finding {
	n := normalize(src, base)
	var fs []Finding
	count := map[Class]int{}
	add := func(c Class, s Span) {
		if count[c] >= MaxPerClass {
			return
		}
		// Overlapping matches of one class are one finding.
		for i := range fs {
			if fs[i].Class == c && s.Start < fs[i].Span.End && fs[i].Span.Start < s.End {
				if s.End > fs[i].Span.End {
					fs[i].Span.End = s.End
				}
				fs[i].Excerpt = excerpt(orig, fs[i].Span)
				return
			}
		}
		count[c]++
		fs = append(fs, Finding{Class: c, Span: s, Excerpt: excerpt(orig, s)})
	}
	text := n.text
	hits := findKeys(text)
	rs := rules()
	for ri := range rs {
		r := &rs[ri]
		for _, h := range hits[ri] {
			if count[r.class] >= MaxPerClass {
				break
			}
			hit, from := h.at, h.at+h.n
			if r.lineStart && !nearLineStart(text, hit) {
				continue
			}
			ws := max(hit-r.back, 0)
			we := min(from+r.fwd, len(text))
			for stop := min(we+64, len(text)); we < stop && isWordByte(text[we]); we++ {
			}
			if r.stop != "" {
				if k := bytes.IndexAny(text[from:we], r.stop); k >= 0 {
					we = from + k + 1
				}
			}
			if !containsAny(text[ws:we], r.also) {
				continue
			}
			for _, m := range r.re.FindAllSubmatchIndex(text[ws:we], -1) {
				if m[0] == 0 && ws > 0 && (isWordByte(text[ws-1]) && isWordByte(text[ws]) || r.lineStart && text[ws-1] != '\n') {
					continue // the window, not the text, starts here
				}
				for j := range m {
					if m[j] >= 0 {
						m[j] += ws
					}
				}
				if r.check != nil && !r.check(text, m) {
					continue
				}
				add(r.class, n.span(m[0], m[1]))
			}
		}
	}
	if len(n.tags) > 0 {
		for _, s := range n.tags {
			add(HiddenText, s)
		}
	}
	if len(n.hidden) > ZeroWidthThreshold {
		for _, s := range n.hidden {
			add(HiddenText, s)
		}
	}
	for _, s := range n.bidi {
		add(BidiOverride, s)
	}
	sortFindings(fs)
	return fs
}

func sortFindings(fs []Finding) {
	rank := func(c Class) int {
		for i, k := range Classes {
			if k == c {
				return i
			}
		}
		return len(Classes)
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if a, b := rank(fs[i].Class), rank(fs[j].Class); a != b {
			return a < b
		}
		return fs[i].Span.Start < fs[j].Span.Start
	})
}

// excerpt returns about ExcerptBytes of orig around s, escaped.
func excerpt(orig []byte, s Span) string {
	start, end := s.Start, s.End
	if end-start > ExcerptBytes {
		end = start + ExcerptBytes
	} else {
		pad := (ExcerptBytes - (end - start)) / 4
		start -= pad
		end += pad
	}
	start = max(start, 0)
	end = min(end, len(orig))
	// Back to the start of a character, but no further than one can
	// reach: a run of stray continuation bytes is not one character.
	for back := 0; back < utf8.UTFMax-1 && start > 0 && !utf8.RuneStart(orig[start]); back++ {
		start--
	}
	end = cutRune(orig, end)
	return Escape(orig[start:end])
}

// Escape returns b as text safe to show: printable characters as they
// are, everything else (control, format, zero-width, bidirectional and tag
// characters, invalid UTF-8) as a \uXXXX, \UXXXXXXXX or \xXX escape, and
// line breaks and tabs as \n, \r and \t.
func Escape(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			sb.WriteString(`\x`)
			sb.WriteByte("0123456789abcdef"[b[i]>>4])
			sb.WriteByte("0123456789abcdef"[b[i]&15])
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)):
			sb.WriteRune(r)
		case r > 0xFFFF:
			sb.WriteString(`\U`)
			writeHex(&sb, uint32(r), 8)
		default:
			sb.WriteString(`\u`)
			writeHex(&sb, uint32(r), 4)
		}
		i += size
	}
	return sb.String()
}

func writeHex(sb *strings.Builder, v uint32, digits int) {
	for d := digits - 1; d >= 0; d-- {
		sb.WriteByte("0123456789abcdef"[(v>>(4*d))&15])
	}
}

// lazyRegexp compiles expr at its first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
