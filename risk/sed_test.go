package risk

import (
	"testing"
)

var sedCases = []progCase{
	{src: `p`},
	{src: `1,5p`},
	{src: `s/a/b/g`},
	{src: "s/a/b/\n/^#/d"},
	{src: `/wow/p;3,5d;$q`},
	{src: `1!G;h;$!d`},
	{src: `s|a/b|c|2p`},
	{src: `s,x\,y,z,I`},
	{src: `\%^/usr%d`},
	{src: `0,/re/s//x/`},
	{src: `1~2d;5,+3p;/a/,~4d`},
	{src: `/x/{p;d}`},
	{src: `/x/ { s/a/b/ ; p }`},
	{src: `:a;N;$!ba;s/\n/ /g`},
	{src: `/start/,/end/{/end/!{$!{N;ba}}}`},
	{src: "$a\\\nappended text with e id and w file"},
	{src: `1i inserted; e id`},
	{src: "#n\np"},
	{src: `p # e id`},
	{src: `y/abc/xyz/`},
	{src: `s/[[:digit:]]\+/N/g`},
	{src: `s/[]x]/y/`},
	{src: `F;=;l 40;q5`},
	{src: `s/x/\
/g`},

	{src: `e id`, kind: "exec"},
	{src: `1e id`, kind: "exec"},
	{src: `s/x/id/e`, kind: "exec"},
	{src: `s/x/id/ge`, kind: "exec"},
	{src: `/x/{e id
}`, kind: "exec"},
	{src: `b end; e id`, kind: "exec"},
	{src: `:a;e id`, kind: "exec"},
	{src: `$!{p};e`, kind: "exec"},

	{src: `w .bashrc`, writes: []string{".bashrc"}},
	{src: `1W out.txt`, writes: []string{"out.txt"}},
	{src: `s/x/y/w out; p`, writes: []string{"out; p"}},
	{src: "s/x/y/gw out\np", writes: []string{"out"}},
	{src: `w /dev/stdout`},
	{src: `1r .env`, reads: []string{".env"}},
	{src: `$R ~/.ssh/id_rsa`, reads: []string{"~/.ssh/id_rsa"}},

	{src: `s/a/b`, kind: "unknown"},
	{src: `s/[/]/x/`, kind: "unknown"},
	{src: `\|a[|]|p`, kind: "unknown"},
	{src: `k`, kind: "unknown"},
	{src: `p x`, kind: "unknown"},
	{src: `{p`, kind: "unknown"},
	{src: `p}`, kind: "unknown"},
	{src: `1,`, kind: "unknown"},
	{src: `w`, kind: "unknown"},
	{src: `s/x/y/q`, kind: "unknown"},
	{src: "s/a\n/b/", kind: "unknown"},
}

func TestSedScript(t *testing.T) {
	for _, tc := range sedCases {
		checkProgram(t, "sed", SedScript(tc.src), tc)
	}
}

func TestSedCommand(t *testing.T) {
	for _, tc := range []cmdCase{
		{line: []string{"sed", "-n", "1,5p", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"sed", "s/a/b/g", "f", "g"}, level: Read, reads: []string{"f", "g"}},
		{line: []string{"sed", "-e", "s/a/b/", "-e", "/^#/d", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"sed", "-ne", "s/a/b/p", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"sed", "--expression=p", ".env"}, level: Read, reads: []string{".env"}},
		{line: []string{"sed", "s/a/b/", "f", "-E"}, level: Read, reads: []string{"f"}},
		{line: []string{"sed", "-i", "s/a/b/", "f"}, level: Write, writes: []string{"f"}},
		// The suffix of -i names the backup, which may be anywhere: it is
		// checked as a file written.
		{line: []string{"sed", "-i.bak", "s/a/b/", "f"}, level: Write, writes: []string{"f", ".bak"}},
		{line: []string{"sed", "--in-place=.bak", "-e", "s/a/b/", "f"}, level: Write, writes: []string{"f", ".bak"}},
		{line: []string{"sed", "s/a/b/", "-i", "f"}, level: Write, writes: []string{"f"}},
		{line: []string{"sed", "-e", "a\\", "-e", "e id", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"sed", "-e", "p", "-e", "e id", "f"}, level: Execute, reads: []string{"f"}, exec: true},
		{line: []string{"sed", "s/x/id/e", "f"}, level: Execute, reads: []string{"f"}, exec: true},
		{line: []string{"sed", "-n", "w .bashrc", "x"}, level: Write, reads: []string{"x"}, writes: []string{".bashrc"}},
		{line: []string{"sed", "-n", "1r .env", "f"}, level: Read, reads: []string{"f", ".env"}},
		{line: []string{"sed", "-f", "script.sed", "f"}, level: Execute, reads: []string{"f", "script.sed"}, exec: true},
		{line: []string{"sed", "--fi=script.sed", "f"}, level: Execute, reads: []string{"f", "script.sed"}, exec: true},
		{line: []string{"sed", "--frobnicate", "p", "f"}, level: Execute, reads: []string{"f"}, exec: true},
		{line: []string{"sed"}, level: Execute, exec: true},
		{line: []string{"sed", "-i", "", "s/a/b/", "f"}, level: Write, writes: []string{"s/a/b/", "f"}},
		{line: []string{"sed", "-i", "", "w .bashrc", "f"}, level: Write, writes: []string{"w .bashrc", "f", ".bashrc"}},
	} {
		checkCommand(t, tc, nil)
	}
	checkCommand(t, cmdCase{line: []string{"sed", "$S", "f"}, level: Execute, reads: []string{"f"}, exec: true, unknown: true}, []bool{true, false})
	checkCommand(t, cmdCase{line: []string{"sed", "p", "$F"}, level: Execute, exec: true, unknown: true}, []bool{false, true})
}

func FuzzSedScript(f *testing.F) {
	for _, tc := range sedCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p := SedScript(src)
		if p.ReadOnly() && (p.Exec != "" || p.Unknown != "") {
			t.Fatalf("read-only with a reason: %+v", p)
		}
		// After a complete line that is not text for a, i or c, a line
		// that runs a command is seen.
		if p.Unknown == "" && !endsInText(src) {
			if q := SedScript(src + "\ne id"); q.Exec == "" && q.Unknown == "" {
				t.Fatalf("%q hides an e command after it: %+v", src, q)
			}
		}
	})
}

// endsInText reports whether a sed script's last line goes on into the
// next: text of a, i or c ending in a backslash.
func endsInText(src string) bool {
	n := 0
	for i := len(src) - 1; i >= 0 && src[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}
