package engine

import (
	"strconv"
	"strings"
	"testing"
)

// sysCall is one finished system call of an `strace -f -y` log.
type sysCall struct {
	pid  int
	name string
	// args are the call's arguments as strace printed them, split at the
	// top level: a string is still quoted, a file descriptor carries its
	// path as 3</path>.
	args []string
	// ret is what follows " = ": "0", "3</path>", "-1 ENOENT (…)", "?".
	ret string
}

// failed reports whether the call returned an error or nothing.
func (c sysCall) failed() bool {
	return c.ret == "" || strings.HasPrefix(c.ret, "-") || strings.HasPrefix(c.ret, "?")
}

// arg returns argument i, or "" when there are fewer.
func (c sysCall) arg(i int) string {
	if i < len(c.args) {
		return c.args[i]
	}
	return ""
}

// straceParser joins the lines of an `strace -f` log into calls: a call
// another process interrupted is printed as "NAME(ARGS <unfinished ...>"
// and finished later as "<... NAME resumed>REST".
type straceParser struct {
	pending map[int]string // pid -> the unfinished start of its call
}

// line parses one log line. It returns false for lines that are not a
// finished call: signals, exits, unfinished starts, anything unreadable.
func (p *straceParser) line(ln string) (sysCall, bool) {
	ln = strings.TrimRight(ln, "\r\n")
	sp := strings.IndexByte(ln, ' ')
	if sp <= 0 {
		return sysCall{}, false
	}
	pid, err := strconv.Atoi(ln[:sp])
	if err != nil {
		return sysCall{}, false
	}
	rest := strings.TrimLeft(ln[sp:], " ")
	if p.pending == nil {
		p.pending = map[int]string{}
	}
	if strings.HasPrefix(rest, "<... ") {
		i := strings.Index(rest, " resumed>")
		start, ok := p.pending[pid]
		if i < 0 || !ok {
			return sysCall{}, false
		}
		delete(p.pending, pid)
		rest = start + strings.TrimPrefix(rest[i+len(" resumed>"):], " ")
	} else if strings.HasSuffix(rest, " <unfinished ...>") {
		p.pending[pid] = strings.TrimSuffix(rest, " <unfinished ...>")
		return sysCall{}, false
	}
	c, ok := parseCall(rest)
	c.pid = pid
	return c, ok
}

// parseCall parses "NAME(ARG, ARG) = RET".
func parseCall(s string) (sysCall, bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 || !isName(s[:open]) {
		return sysCall{}, false
	}
	c := sysCall{name: s[:open]}
	depth, start := 0, open+1
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"':
			end := skipString(s, i)
			if end < 0 {
				return sysCall{}, false
			}
			i = end - 1
		case '(', '[', '{':
			depth++
		case ']', '}':
			depth--
		case ')':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" || len(c.args) > 0 {
					c.args = append(c.args, a)
				}
				tail := strings.TrimSpace(s[i+1:])
				if !strings.HasPrefix(tail, "=") {
					return sysCall{}, false
				}
				c.ret = strings.TrimSpace(tail[1:])
				return c, true
			}
		case ',':
			if depth == 1 {
				c.args = append(c.args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
		if depth < 0 {
			return sysCall{}, false
		}
	}
	return sysCall{}, false
}

func isName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// skipString returns the index just after the quoted string starting at
// s[i] (and after a "..." that marks it cut short), or -1 if it does not end.
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			j++
			if strings.HasPrefix(s[j:], "...") {
				j += 3
			}
			return j
		}
	}
	return -1
}

// unquote decodes a quoted strace string with C escapes. It fails for an
// argument that is not a whole string or a string strace cut short.
func unquote(a string) (string, bool) {
	if len(a) < 2 || a[0] != '"' || skipString(a, 0) != len(a) || strings.HasSuffix(a, `"...`) {
		return "", false
	}
	return unescape(a[1 : len(a)-1])
}

// unescape decodes C escapes (\n \t \" \\ \xHH \OOO) as strace writes them.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'x':
			if i+2 >= len(s) {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, err := strconv.ParseUint(s[i:j], 8, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// fdPath returns the path strace -y printed for a descriptor: "/p" of
// "3</p>" or "AT_FDCWD</p>".
func fdPath(a string) (string, bool) {
	i := strings.IndexByte(a, '<')
	if i <= 0 || !strings.HasSuffix(a, ">") {
		return "", false
	}
	p := a[i+1 : len(a)-1]
	if !strings.HasPrefix(p, "/") {
		return "", false // socket:[123], pipe:[45], anon_inode:…
	}
	return unescape(p)
}

var straceLines = []struct {
	in       []string // log lines, in order
	name     string   // the last call's; "" when no call comes out
	pid      int
	args     []string
	ret      string
	unquoted string // the unquoted second argument, when set
}{
	{in: []string{`7452  openat(AT_FDCWD</tmp/sx>, "h", O_RDONLY) = 3</etc/hostname>`},
		name: "openat", pid: 7452, args: []string{"AT_FDCWD</tmp/sx>", `"h"`, "O_RDONLY"}, ret: "3</etc/hostname>", unquoted: "h"},
	{in: []string{`12 execve("/usr/bin/cat", ["cat", "a, b)"], 0x7ffd /* 9 vars */) = 0`},
		name: "execve", pid: 12, args: []string{`"/usr/bin/cat"`, `["cat", "a, b)"]`, "0x7ffd /* 9 vars */"}, ret: "0"},
	{in: []string{`5 openat(AT_FDCWD</w>, "a \"q\"\\\n\x41\101", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)`},
		name: "openat", pid: 5, args: []string{"AT_FDCWD</w>", `"a \"q\"\\\n\x41\101"`, "O_WRONLY|O_CREAT|O_TRUNC", "0666"}, ret: "-1 EROFS (Read-only file system)", unquoted: "a \"q\"\\\nAA"},
	{in: []string{`9 read(3</x>, <unfinished ...>`, `8 close(3) = 0`, `9 <... read resumed>"ab"..., 4096) = 4096`},
		name: "read", pid: 9, args: []string{"3</x>", `"ab"...`, "4096"}, ret: "4096"},
	{in: []string{`9 clone3({flags=CLONE_VM, exit_signal=SIGCHLD}, 88 <unfinished ...>`, `9 <... clone3 resumed>) = 10`},
		name: "clone3", pid: 9, args: []string{"{flags=CLONE_VM, exit_signal=SIGCHLD}", "88"}, ret: "10"},
	{in: []string{`3 connect(4<socket:[77]>, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("10.0.0.1")}, 16) = -1 ENETUNREACH (Network is unreachable)`},
		name: "connect", pid: 3, args: []string{"4<socket:[77]>", `{sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("10.0.0.1")}`, "16"}, ret: "-1 ENETUNREACH (Network is unreachable)"},
	{in: []string{`4 getpid() = 4`}, name: "getpid", pid: 4, ret: "4"},
	{in: []string{`4 exit_group(0) = ?`}, name: "exit_group", pid: 4, args: []string{"0"}, ret: "?"},
	{in: []string{`4 +++ exited with 0 +++`}},
	{in: []string{`4 --- SIGCHLD {si_signo=SIGCHLD} ---`}},
	{in: []string{`4 <... read resumed>) = 1`}},              // never started
	{in: []string{`4 openat(AT_FDCWD, "unterminated) = 3`}},  // a string that does not end
	{in: []string{`x openat(AT_FDCWD, "a", O_RDONLY) = 3`}},  // no pid
	{in: []string{`4 openat(AT_FDCWD, "a", O_RDONLY)`}},      // no result
	{in: []string{`4 openat(AT_FDCWD, "a", O_RDONLY)) = 3`}}, // unbalanced
	{in: []string{`4 Open(AT_FDCWD, "a", O_RDONLY) = 3`}},    // not a call name
	{in: []string{`4 openat(AT_FDCWD, "a\x4", O_RDONLY) = 3`}, name: "openat", pid: 4, args: []string{"AT_FDCWD", `"a\x4"`, "O_RDONLY"}, ret: "3"},
}

func TestStraceParser(t *testing.T) {
	for _, tc := range straceLines {
		t.Run(strings.Join(tc.in, "|"), func(t *testing.T) {
			var p straceParser
			var got []sysCall
			for _, ln := range tc.in {
				if c, ok := p.line(ln); ok {
					got = append(got, c)
				}
			}
			if tc.name == "" {
				if len(got) != 0 {
					t.Fatalf("got %+v, want no call", got)
				}
				return
			}
			if len(got) == 0 {
				t.Fatal("got no call")
			}
			c := got[len(got)-1] // the case's call comes last

			if c.name != tc.name || c.pid != tc.pid || c.ret != tc.ret || strings.Join(c.args, "¦") != strings.Join(tc.args, "¦") {
				t.Fatalf("got %d %s(%q) = %q\nwant %d %s(%q) = %q", c.pid, c.name, c.args, c.ret, tc.pid, tc.name, tc.args, tc.ret)
			}
			if tc.unquoted != "" {
				if s, ok := unquote(c.arg(1)); !ok || s != tc.unquoted {
					t.Fatalf("unquote(%s) = %q, %v; want %q", c.arg(1), s, ok, tc.unquoted)
				}
			}
		})
	}
	for _, tc := range []struct {
		in   string
		path string
		ok   bool
	}{
		{"3</etc/hostname>", "/etc/hostname", true},
		{"AT_FDCWD</a b/c>", "/a b/c", true},
		{`3</a\x3eb>`, "/a>b", true},
		{"4<socket:[77]>", "", false},
		{"AT_FDCWD", "", false},
		{"3</x", "", false},
	} {
		if p, ok := fdPath(tc.in); p != tc.path || ok != tc.ok {
			t.Errorf("fdPath(%q) = %q, %v; want %q, %v", tc.in, p, ok, tc.path, tc.ok)
		}
	}
	if _, ok := unquote(`"cut"...`); ok {
		t.Error(`unquote accepted a string strace cut short`)
	}
}

func FuzzStraceLine(f *testing.F) {
	for _, tc := range straceLines {
		f.Add(strings.Join(tc.in, "\n"))
	}
	f.Fuzz(func(t *testing.T, log string) {
		var p straceParser
		for _, ln := range strings.Split(log, "\n") {
			c, ok := p.line(ln)
			if !ok {
				continue
			}
			if c.name == "" || !isName(c.name) {
				t.Fatalf("call without a name from %q", ln)
			}
			for _, a := range c.args {
				unquote(a)
				fdPath(a)
			}
			fdPath(c.ret)
		}
		observe(strings.NewReader(log), "/w")
	})
}

// TestObserve reads made-up logs: the first program is the line's own
// shell, children inherit the directory their parent had, chdir and
// AT_FDCWD move it, and a call's result decides what it is.
func TestObserve(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name                          string
		log                           string
		execs, reads, writes, connect []string // paths (the program for connect)
	}{
		{name: "the shell itself is left out",
			log:   "1 execve(\"/bin/bash\", [\"bash\"], 0x1) = 0\n1 execve(\"/bin/cat\", [\"cat\"], 0x1) = 0\n",
			execs: []string{"/bin/cat"}},
		{name: "a failed exec is none",
			log:   "1 execve(\"/bin/bash\", [], 0x1) = 0\n1 execve(\"/x/cat\", [], 0x1) = -1 ENOENT (No such file or directory)\n",
			execs: nil},
		{name: "a child inherits the directory its parent moved to",
			log: "1 execve(\"/bin/bash\", [], 0x1) = 0\n1 chdir(\"sub\") = 0\n2 mkdir(\"d\", 0777) = 0\n" +
				"1 clone(child_stack=NULL, flags=SIGCHLD) = 2\n",
			writes: []string{dir + "/sub/d"}},
		{name: "AT_FDCWD tells the directory",
			log:    "1 execve(\"/bin/bash\", [], 0x1) = 0\n1 openat(AT_FDCWD</elsewhere>, \"f\", O_RDONLY) = -1 ENOENT (x)\n1 unlink(\"g\") = 0\n",
			reads:  []string{"/elsewhere/f"},
			writes: []string{"/elsewhere/g"}},
		{name: "the descriptor's path is the real one",
			log:   "1 openat(AT_FDCWD</w>, \"link\", O_RDONLY|O_CLOEXEC) = 3</real/key>\n",
			reads: []string{"/real/key"}},
		{name: "open flags make a write",
			log: "1 openat(AT_FDCWD</w>, \"a\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/a>\n1 open(\"/w/b\", O_RDWR) = 3</w/b>\n" +
				"1 creat(\"/w/c\", 0644) = 3</w/c>\n1 openat(AT_FDCWD</w>, \"d\", O_RDONLY) = 3</w/d>\n",
			reads:  []string{"/w/d"},
			writes: []string{"/w/a", "/w/b", "/w/c"}},
		{name: "renames write both names, links the new one",
			log: "1 renameat2(AT_FDCWD</w>, \"a\", AT_FDCWD</v>, \"b\", RENAME_NOREPLACE) = 0\n1 linkat(AT_FDCWD</w>, \"c\", AT_FDCWD</w>, \"d\", 0) = 0\n" +
				"1 symlinkat(\"/t\", AT_FDCWD</w>, \"e\") = 0\n1 rename(\"/w/f\", \"/w/g\") = 0\n",
			writes: []string{"/w/a", "/v/b", "/w/d", "/w/e", "/w/f", "/w/g"}},
		{name: "an interrupted open",
			log:   "1 openat(AT_FDCWD</w>, \"a\", O_RDONLY <unfinished ...>\n2 getpid() = 2\n1 <... openat resumed>) = 3</w/a>\n",
			reads: []string{"/w/a"}},
		{name: "inet connects count, unix ones do not",
			log: "1 execve(\"/bin/bash\", [], 0x1) = 0\n1 execve(\"/usr/bin/curl\", [], 0x1) = 0\n" +
				"1 connect(3<socket:[1]>, {sa_family=AF_UNIX, sun_path=\"/run/x\"}, 110) = 0\n" +
				"1 connect(3<socket:[2]>, {sa_family=AF_INET6, sin6_port=htons(443)}, 28) = -1 ENETUNREACH (x)\n" +
				"1 sendto(4<socket:[3]>, \"q\", 1, 0, {sa_family=AF_INET, sin_port=htons(53)}, 16) = 1\n",
			execs:   []string{"/usr/bin/curl"},
			connect: []string{"curl", "curl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := observe(strings.NewReader(tc.log), dir)
			paths := func(as []access) []string {
				var out []string
				for _, a := range as {
					out = append(out, a.path)
				}
				return out
			}
			var progs []string
			for _, a := range o.connects {
				progs = append(progs, a.prog)
			}
			for _, x := range []struct {
				what      string
				got, want []string
			}{{"execs", paths(o.execs), tc.execs}, {"reads", paths(o.reads), tc.reads}, {"writes", paths(o.writes), tc.writes}, {"connects", progs, tc.connect}} {
				if strings.Join(x.got, " ") != strings.Join(x.want, " ") {
					t.Errorf("%s: got %q, want %q", x.what, x.got, x.want)
				}
			}
		})
	}
}
