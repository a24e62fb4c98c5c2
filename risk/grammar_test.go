package risk

import (
	"slices"
	"strings"
	"testing"
)

// progCase is one program text and what its analysis must find. kind names
// the reason that must be set ("exec", "secret", "unknown"), "" for none.
type progCase struct {
	src                  string
	kind                 string
	reads, writes, hosts []string
}

func checkProgram(t *testing.T, lang string, got ProgramEffect, w progCase) {
	t.Helper()
	kinds := map[string]string{"exec": got.Exec, "secret": got.Secret, "unknown": got.Unknown}
	for k, why := range kinds {
		if (k == w.kind) != (why != "") {
			t.Errorf("%s %q: %s reason = %q, want it set: %v (effect %+v)", lang, w.src, k, why, k == w.kind, got)
		}
	}
	if !slices.Equal(got.Reads, w.reads) || !slices.Equal(got.Writes, w.writes) || !slices.Equal(got.Hosts, w.hosts) {
		t.Errorf("%s %q: reads %q writes %q hosts %q, want %q %q %q", lang, w.src, got.Reads, got.Writes, got.Hosts, w.reads, w.writes, w.hosts)
	}
	if ro := w.kind == "" && len(w.writes) == 0 && len(w.hosts) == 0; got.ReadOnly() != ro {
		t.Errorf("%s %q: ReadOnly = %v, want %v", lang, w.src, got.ReadOnly(), ro)
	}
}

// cmdCase is one command line and the effect it must have.
type cmdCase struct {
	line          []string
	level         Level
	reads, writes []string
	exec          bool // Exec set and Known false
	secret        bool
	unknown       bool // a file operand not known statically
}

func checkCommand(t *testing.T, tc cmdCase, dyn []bool) {
	t.Helper()
	e := Command(tc.line[0], tc.line[1:], dyn)
	if e.Level != tc.level || !slices.Equal(e.Reads, tc.reads) || !slices.Equal(e.Writes, tc.writes) ||
		(e.Exec != "") != tc.exec || e.Known == tc.exec || (e.Secret != "") != tc.secret || e.Unknown != tc.unknown {
		t.Errorf("%q: got level=%s reads=%q writes=%q exec=%q known=%v secret=%q unknown=%v, want %+v",
			tc.line, e.Level, e.Reads, e.Writes, e.Exec, e.Known, e.Secret, e.Unknown, tc)
	}
}

func TestScanOpts(t *testing.T) {
	// sed permutes its options as GNU getopt does; awk's end at the
	// program, its first operand.
	for _, tc := range []struct {
		prog, line string
		opts       []string // name=value
		ops        []int
		bad        bool
	}{
		{"sed", "-ne p f", []string{"-n=", "-e=p"}, []int{2}, false},
		{"sed", "-nep f", []string{"-n=", "-e=p"}, []int{1}, false},
		{"sed", "--f=x f", nil, nil, true}, // ambiguous: --file or --follow-symlinks
		{"sed", "-i.bak x f", []string{"-i=.bak"}, []int{1, 2}, false},
		{"sed", "-in x", []string{"-i=n"}, []int{1}, false},
		{"sed", "--exp=p f", []string{"--expression=p"}, []int{1}, false},
		{"sed", "--expression p f", []string{"--expression=p"}, []int{2}, false},
		{"sed", "--quiet=1 f", nil, nil, true},
		{"sed", "-x f", nil, nil, true},
		{"sed", "-e", nil, nil, true},
		{"awk", "f -F", nil, []int{0, 1}, false},
		{"sed", "f -n", []string{"-n="}, []int{0}, false},
		{"sed", "-- -n", nil, []int{1}, false},
	} {
		opts, ops, bad := scanOpts(tc.prog, strings.Fields(tc.line), nil)
		var got []string
		for _, o := range opts {
			got = append(got, o.name+"="+o.val)
		}
		if (bad != "") != tc.bad || !tc.bad && (!slices.Equal(got, tc.opts) || !slices.Equal(ops, tc.ops)) {
			t.Errorf("%s %q: opts %q ops %v bad %q, want %q %v bad=%v", tc.prog, tc.line, got, ops, bad, tc.opts, tc.ops, tc.bad)
		}
	}
	// A dynamic word where an option may stand cannot be read.
	if _, _, bad := scanOpts("sed", []string{"$X", "f"}, []bool{true}); bad == "" {
		t.Error("a dynamic word before the options end must make the line unreadable")
	}
}

func TestProgramArgs(t *testing.T) {
	for _, tc := range []struct {
		line string
		text []int // positions among the arguments
	}{
		{"awk /.env/ f", []int{0}},
		{"awk -F : -v x=1 {print} .env", []int{4}},
		{"gawk -e BEGIN{} -e {print} f", []int{1, 3}},
		{"awk -f prog.awk .env", nil},
		{"sed -n /.env/p f", []int{1}},
		{"sed -e s/x/.env/ -i f", []int{1}},
		{"sed --expression=p .env", []int{0}},
		{"jq .env f", []int{0}},
		{"jq --arg k v -r .env f", []int{4}},
		{"jq --rawfile k .env -n $k", []int{4}},
		{"yq eval .env f", nil},
		{"cat .env", nil},
	} {
		f := strings.Fields(tc.line)
		var got []int
		for i, b := range ProgramArgs(f[0], f[1:]) {
			if b {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tc.text) {
			t.Errorf("%s: program text at %v, want %v", tc.line, got, tc.text)
		}
	}
}
