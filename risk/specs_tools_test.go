package risk

import (
	"slices"
	"strings"
	"testing"
)

// TestToolSpecs reads ordinary and hostile command lines of the tools with
// specs in specs_tools.go through Command: ordinary lines are known reads,
// an option the spec does not list makes the line unknown, and options
// that run programs, give code or name files are typed so that the
// command asks or what they name is checked.
func TestToolSpecs(t *testing.T) {
	for _, tc := range []struct {
		line    string
		unknown string // the option the spec does not know
		level   Level
		known   bool     // a known program whose words show what it does
		reads   []string // among the reads
		writes  []string // among the writes
	}{
		// ripgrep
		{line: "rg -n --hidden -g *.go foo src", level: Read, known: true, reads: []string{"src"}},
		{line: "rg -tgo -l foo", level: Read, known: true, reads: []string{"."}},
		{line: "rg -uu -S --max-depth 3 -C2 --json foo", level: Read, known: true},
		{line: "rg --files --sort path -0", level: Read, known: true},
		{line: "rg -f pats.txt src", level: Read, known: true, reads: []string{"src", "pats.txt"}},
		{line: "rg --ignore-file other.txt KEY", level: Read, known: true, reads: []string{"other.txt"}},
		{line: "rg --no-config -z KEY logs", level: Read, known: true},
		{line: "rg --pre=sh x", level: Execute},
		{line: "rg --pre-glob=* --pre sh x", level: Execute},
		{line: "rg --hostname-bin ./h --hyperlink-format default x", level: Execute},
		{line: "rg --hid x", unknown: "--hid", level: Execute},
		{line: "rg --some-new-option 3 KEY", unknown: "--some-new-option", level: Execute},
		// ag and ack
		{line: "ag -i --go foo src", level: Read, known: true, reads: []string{"src"}},
		{line: "ag --ignore-dir vendor -A 3 foo", level: Read, known: true},
		{line: "ag --pager sh foo", level: Execute},
		{line: "ag -p .agignore foo", level: Read, known: true, reads: []string{".agignore"}},
		{line: "ack -i --python --nojs foo src", level: Read, known: true, reads: []string{"src"}},
		{line: "ack -C 3 KEY .env", level: Read, known: true, reads: []string{".env"}},
		{line: "ack --pager=less foo", level: Execute},
		{line: "ack --output=$1 foo", level: Execute},
		{line: "ack --ackrc=evil foo", unknown: "--ackrc", level: Execute},
		{line: "ack --files-from=list foo", unknown: "--files-from", level: Execute},
		{line: "ack -x foo", unknown: "-x", level: Execute},
		// fd
		{line: "fd -e go -t f", level: Read, known: true},
		{line: "fd -H -I --max-depth 2 pattern src", level: Read, known: true},
		{line: "fd --search-path ~/.ssh id", level: Read, known: true, reads: []string{"~/.ssh"}},
		{line: "fd -e go -x gofmt -l", level: Execute},
		{line: "fd -X rm", level: Execute},
		{line: "fd --hid x", unknown: "--hid", level: Execute},
		// tree, eza, exa
		{line: "tree -L 2 -a", level: Read, known: true},
		{line: "tree -L 2 --gitignore -I node_modules src", level: Read, known: true, reads: []string{"src"}},
		{line: "tree -o out.txt src", level: Write, known: true, writes: []string{"out.txt"}},
		{line: "tree -H . --hintro ~/.ssh/id_rsa", level: Read, known: true, reads: []string{"~/.ssh/id_rsa"}},
		{line: "tree -R -L 1 -H .", unknown: "-R", level: Execute},
		{line: "eza -la --git", level: Read, known: true},
		{line: "eza --tree --level=2 -I target src", level: Read, known: true, reads: []string{"src"}},
		{line: "exa -l --sort=modified", level: Read, known: true},
		{line: "eza --stdin", unknown: "--stdin", level: Execute},
		// bat, less, more
		{line: "bat --style=plain -n f", level: Read, known: true, reads: []string{"f"}},
		{line: "bat -pp -r 10:20 --paging=never f", level: Read, known: true, reads: []string{"f"}},
		{line: "bat '--pager=sh -c id' f", level: Execute},
		{line: "bat --lessopen f", unknown: "--lessopen", level: Execute},
		{line: "bat cache --build", unknown: "--build", level: Execute},
		{line: "less -R f", level: Read, known: true, reads: []string{"f"}},
		{line: "less -N +G -S f", level: Read, known: true, reads: []string{"f"}},
		{line: "less +/TODO f", level: Read, known: true, reads: []string{"f"}},
		{line: "less +!id f", unknown: "+!id", level: Execute},
		{line: "less --lesskey-src=f g", level: Execute},
		{line: "less -k keys g", level: Execute},
		{line: "less -o copy f", level: Write, known: true, writes: []string{"copy"}},
		{line: "less -t main", unknown: "-t", level: Execute},
		{line: "more -10 +20 f", level: Read, known: true, reads: []string{"f"}},
		{line: "more +!id f", unknown: "+!id", level: Execute},
		// jq, yq
		{line: "jq -r .a f", level: Read, known: true, reads: []string{"f"}},
		{line: "jq --arg x 1 -n $x", level: Read, known: true},
		{line: "jq -nr --argjson v {} $v", level: Read, known: true},
		{line: "jq --rawfile k .env -n $k", level: Read, known: true, reads: []string{".env"}},
		{line: "jq --slurpfile k ~/.aws/credentials -n $k", level: Read, known: true, reads: []string{"~/.aws/credentials"}},
		{line: "jq -f prog.jq data.json", level: Execute},
		{line: "jq --nul .", unknown: "--nul", level: Execute},
		{line: "yq -i .a=1 f.yaml", level: Write, known: true, writes: []string{"f.yaml"}},
		{line: "yq -o json -P .spec f.yaml", level: Read, known: true, reads: []string{"f.yaml"}},
		{line: "yq --from-file x.yq f.yaml", level: Execute},
		{line: "yq -s .name f.yaml", unknown: "-s", level: Execute},
		// awk, sed
		{line: "awk -F: -v OFS=, {print $1} f", level: Read, known: true, reads: []string{"f"}},
		{line: "gawk --posix -v n=3 NR<=n f", level: Read, known: true, reads: []string{"f"}},
		{line: "awk -f prog.awk f", level: Execute},
		{line: "gawk -l ./evil.so BEGIN{}", level: Execute},
		{line: "gawk --load=x BEGIN{}", level: Execute},
		{line: "gawk -i inc.awk BEGIN{}", level: Execute},
		{line: "gawk -e BEGIN{} f", level: Read, known: true, reads: []string{"f"}},
		{line: "gawk -e BEGIN{system(\"id\")} f", level: Execute},
		{line: "gawk -W exec=x", unknown: "-W", level: Execute},
		{line: "gawk -o BEGIN{}", unknown: "-o", level: Execute},
		{line: "gawk -D BEGIN{}", unknown: "-D", level: Execute},
		// Given no file, -d and --profile write one of their own.
		{line: "gawk -d/tmp/vars BEGIN{}", unknown: "-d", level: Execute},
		{line: "gawk --profile {print} f", unknown: "--profile", level: Execute},
		{line: "sed -n 1,5p f", level: Read, known: true, reads: []string{"f"}},
		{line: "sed -i.bak s/a/b/ f", level: Write, known: true, writes: []string{"f", ".bak"}},
		{line: "sed -E -s -z s/a/b/g f", level: Read, known: true, reads: []string{"f"}},
		{line: "sed --in-place=/tmp/x/* s/a/b/ f", level: Write, known: true, writes: []string{"f", "/tmp/x/*"}},
		{line: "sed --file=x f", level: Execute},
		{line: "sed -ne 1eid p", level: Execute},
		{line: "sed --expr=1eid p", level: Execute},
		{line: "sed --nope s/a/b/ f", unknown: "--nope", level: Execute},
		// find
		{line: "find . -name *.go -type f -not -path ./vendor/*", level: Read, known: true, reads: []string{"."}},
		{line: "find . -maxdepth 2 -type d -print0", level: Read, known: true, reads: []string{"."}},
		{line: "find src ( -name *.c -o -name *.h ) ! -empty -mtime -7", level: Read, known: true, reads: []string{"src"}},
		{line: "find -L . -xtype l -follow -O3", level: Read, known: true, reads: []string{"."}},
		{line: "find . -newer stamp -size +1M -ls", level: Read, known: true, reads: []string{".", "stamp"}},
		{line: "find . -samefile ~/.ssh/id_rsa", level: Read, known: true, reads: []string{"~/.ssh/id_rsa"}},
		{line: "find . -newermt 2024-01-01 -printf %p\\n", level: Read, known: true},
		{line: "find . -name *.go -exec grep -l TODO {} +", level: Read, known: true, reads: []string{"."}},
		{line: "find . -type f -exec wc -l {} ; -print", level: Read, known: true},
		{line: "find . -fprint .bashrc", level: Write, known: true, writes: []string{".bashrc"}},
		{line: "find . -fprintf out %p -quit", level: Write, known: true, writes: []string{"out"}},
		{line: "find . -fls /tmp/x", level: Write, known: true, writes: []string{"/tmp/x"}},
		{line: "find . -name *.o -delete", level: Destructive, known: true},
		{line: "find . -files0-from list", unknown: "-files0-from", level: Execute},
		{line: "find . -nam x", unknown: "-nam", level: Execute},
		// ps, top, lsof
		{line: "ps aux", level: Credential, known: true},
		{line: "ps -o pid,comm -p 1", level: Read, known: true},
		{line: "ps eww", level: Credential, known: true},
		// With a dash, e is UNIX "every process"; only a dashed cluster
		// that procps reads as BSD options (x in it) shows environments,
		// and the full format (-f) the command lines.
		{line: "ps -ef", level: Credential, known: true},
		{line: "ps --sort=-%mem -eo pid,args", level: Credential, known: true},
		{line: "ps --sort=-%mem -eo pid,comm,%mem", level: Read, known: true},
		{line: "ps -auxe", level: Credential, known: true},
		{line: "top -b -n 1", level: Read, known: true},
		{line: "top -bn1 -o %MEM", level: Read, known: true},
		{line: "lsof -i :8080", level: Read, known: true},
		{line: "lsof -nP +D /tmp -p 1", level: Read, known: true},
		{line: "lsof --help", unknown: "--help", level: Execute},
		// man, whatis, apropos
		{line: "man ls", level: Read, known: true},
		{line: "man 3 printf", level: Read, known: true},
		{line: "man -k socket", level: Read, known: true},
		{line: "man -P 'sh -c id' ls", level: Execute},
		{line: "man --pager=cat ls", level: Execute},
		{line: "man -H ls", level: Execute},
		{line: "man -C evil.conf ls", level: Execute},
		{line: "whatis -r ^ls", level: Read, known: true},
		{line: "apropos -a file copy", level: Read, known: true},
		// tokei, cloc
		{line: "tokei -o json src", level: Read, known: true, reads: []string{"src"}},
		{line: "tokei --exclude vendor -s code", level: Read, known: true},
		{line: "cloc --vcs=sh x", level: Execute},
		{line: "cloc --extract-with=sh x", level: Execute},
		{line: "cloc --config c src", unknown: "--config", level: Execute},
		{line: "cloc --list-file=l", unknown: "--list-file", level: Execute},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != tc.unknown {
			t.Errorf("%s: unknown option %q, want %q", tc.line, e.UnknownOption, tc.unknown)
			continue
		}
		if e.Level != tc.level || e.Known != tc.known {
			t.Errorf("%s: level %s known %v (%s), want %s known %v", tc.line, e.Level, e.Known, e.Exec, tc.level, tc.known)
		}
		if tc.level == Execute && tc.unknown == "" && e.Exec == "" {
			t.Errorf("%s: runs code, and says not why", tc.line)
		}
		for _, r := range tc.reads {
			if !slices.Contains(e.Reads, r) {
				t.Errorf("%s: reads %q, want %q among them", tc.line, e.Reads, r)
			}
		}
		for _, wr := range tc.writes {
			if !slices.Contains(e.Writes, wr) {
				t.Errorf("%s: writes %q, want %q among them", tc.line, e.Writes, wr)
			}
		}
	}
}

// TestToolSpecsEveryReadProgram checks that every program the knowledge
// base classes a read, among those whose specs live here, has a spec.
func TestToolSpecsEveryReadProgram(t *testing.T) {
	for _, n := range []string{"rg", "ag", "ack", "fd", "fdfind", "tree", "eza", "exa", "bat", "batcat", "less",
		"more", "jq", "yq", "awk", "gawk", "sed", "find", "ps", "top", "lsof", "man", "whatis", "apropos",
		"tokei", "cloc"} {
		if Lookup(n) == nil {
			t.Errorf("no spec for %s", n)
		}
	}
}

// words splits a test line at spaces, keeping '…' together.
func words(line string) []string {
	var out []string
	for i, part := range strings.Split(line, "'") {
		if i%2 == 1 {
			out = append(out, part)
			continue
		}
		out = append(out, strings.Fields(part)...)
	}
	return out
}
