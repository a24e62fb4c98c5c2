package risk

import "testing"

// TestRunnerOptions reads build and test runners' command lines through
// Command: options, subcommands and variables that make the runner run a
// program other than itself (go test -exec, -toolexec, go generate, cargo
// --config, npm --script-shell, make SHELL=, pytest -p) are typed as
// running a program, with the reason; an option go's spec does not list is
// unknown; the ordinary lines run nothing else.
func TestRunnerOptions(t *testing.T) {
	for _, tc := range []struct {
		line    string
		runs    bool   // Exec is set: runs a program the words name or hide
		unknown string // the option the spec does not know
		network bool
	}{
		// go
		{line: "go test ./..."},
		{line: "go test -run TestX -count=1 -v -race ./shell"},
		{line: "go test ./... -run TestX -args -exec whatever"},
		{line: "go test --count=1 -coverprofile=c.out ./..."},
		{line: "go build -o bin/x -trimpath -ldflags=-s ./cmd/x"},
		{line: "go vet -tags integration ./..."},
		{line: "go run . -exec x"},
		{line: "go mod tidy"},
		{line: "go env GOPATH"},
		{line: "go install example.com/x@latest", network: true},
		{line: "go test -exec /bin/rm ./...", runs: true},
		{line: "go test -exec=/bin/rm ./...", runs: true},
		{line: "go test --exec /bin/rm ./...", runs: true},
		{line: "go test ./... -exec /bin/rm", runs: true},
		{line: "go test -toolexec 'sh -c id' ./...", runs: true},
		{line: "go build -toolexec=sh ./...", runs: true},
		{line: "go install -toolexec=sh ./...", runs: true, network: true},
		{line: "go run -exec /bin/rm .", runs: true},
		{line: "go vet -vettool=/tmp/evil ./...", runs: true},
		{line: "go vet -vettool /tmp/evil ./...", runs: true},
		{line: "go test -overlay=o.json ./...", runs: true},
		{line: "go build -modfile=/tmp/go.mod ./...", runs: true},
		{line: "go generate ./...", runs: true},
		{line: "go env -w GOFLAGS=-toolexec=sh", runs: true},
		{line: "go test -zzz ./...", unknown: "--zzz"},
		{line: "go test -overlays=o.json ./...", unknown: "--overlays=o.json"},
		{line: "go frobnicate", unknown: "frobnicate"},
		// ssh, scp, sftp, rsync
		{line: "ssh -o BatchMode=yes -o ConnectTimeout=5 host uptime", network: true},
		{line: "ssh -o UserKnownHostsFile=/dev/null host", network: true},
		{line: "ssh -o ProxyCommand=sh host", runs: true, network: true},
		{line: "ssh -oProxyCommand=sh host", runs: true, network: true},
		{line: "ssh -o 'ProxyCommand sh' host", runs: true, network: true},
		{line: "ssh -o proxycommand=sh host", runs: true, network: true},
		{line: "ssh -o UserKnownHostsFile=x host", runs: true, network: true},
		{line: "ssh -F cfg host", runs: true, network: true},
		{line: "ssh -I lib.so host", runs: true, network: true},
		{line: "scp -S ./evil a host:", runs: true, network: true},
		{line: "scp -o ProxyCommand=sh a host:", runs: true, network: true},
		{line: "rsync -a a host:", network: true},
		{line: "rsync -a -e 'ssh -p 2222' a host:", network: true},
		{line: "rsync -a -e 'sh -c id' a host:", runs: true, network: true},
		{line: "rsync -a --rsh='ssh -o ProxyCommand=sh' a host:", runs: true, network: true},
		{line: "rsync -a -essh a host:", network: true},
		{line: "rsync -a -e 'ssh;id' a host:", runs: true, network: true},
		// cargo
		{line: "cargo build --release"},
		{line: "cargo test -p app -- --nocapture --config x"},
		{line: "cargo build --config build.rustc-wrapper=/tmp/evil", runs: true},
		{line: "cargo --config=target.x.runner=sh test", runs: true},
		{line: "cargo build -Zunstable-options", runs: true},
		// npm, npx, pnpm, yarn
		{line: "npm test"},
		{line: "npm run build -- --script-shell=x"},
		{line: "npm test --script-shell /tmp/evil", runs: true},
		{line: "npm run build --script-shell=/tmp/evil", runs: true},
		{line: "npm test --node-options=--require=/tmp/e.js", runs: true},
		{line: "npm ci --userconfig /tmp/npmrc", runs: true, network: true},
		{line: "npm exec -- rm -rf /", runs: true},
		{line: "npx -c 'rm -rf ~'", runs: true},
		{line: "pnpm test --config.script-shell=/tmp/evil", runs: true},
		{line: "yarn dlx evil", runs: true},
		{line: "npm test --prefix /tmp/evil", runs: true},
		{line: "npm --prefix=/tmp/evil test", runs: true},
		{line: "pnpm -C /tmp/evil test", runs: true},
		{line: "yarn --cwd /tmp/evil test", runs: true},
		{line: "npm test -w other", runs: true},
		{line: "npm test --script-sh=/tmp/evil", runs: true},
		{line: "npm test --node-opt=--require=x", runs: true},
		{line: "npm --yes exec evil", runs: true},
		{line: "npm test --silent --if-present"},
		{line: "make --ev=x", runs: true},
		{line: "pytest --pyarg evil", runs: true},
		{line: "pytest --root=/tmp", runs: true},
		// make
		{line: "make"},
		{line: "make -j4 build"},
		{line: "make -f other.mk test"},
		{line: "make SHELL=/tmp/evil", runs: true},
		{line: "make test CC=/tmp/evil", runs: true},
		{line: "make --eval=x", runs: true},
		{line: "make -E x", runs: true},
		// pytest, python -m pytest, python -m pip
		{line: "pytest -q -k test_x tests"},
		{line: "pytest -p no:cacheprovider"},
		{line: "pytest -p evil", runs: true},
		{line: "pytest -pevil", runs: true},
		{line: "pytest --pyargs evil", runs: true},
		{line: "pytest -c /tmp/evil.ini", runs: true},
		{line: "pytest -o addopts=-pevil", runs: true},
		{line: "python3 -m pytest -x"},
		{line: "python3 -m pytest -p evil", runs: true},
		{line: "python -m pip install requests", network: true},
		{line: "python3 -m pip list"},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != tc.unknown {
			t.Errorf("%s: unknown option %q, want %q", tc.line, e.UnknownOption, tc.unknown)
			continue
		}
		if (e.Exec != "") != tc.runs {
			t.Errorf("%s: exec %q, want a reason: %v", tc.line, e.Exec, tc.runs)
		}
		if tc.runs && e.Known {
			t.Errorf("%s: runs a program the words name, and is known", tc.line)
		}
		if e.Network != tc.network {
			t.Errorf("%s: network %v, want %v", tc.line, e.Network, tc.network)
		}
	}
}

// TestInertEnvValueGoFlags checks that GOFLAGS passes only with go options
// the spec knows that name no program and no file.
func TestInertEnvValueGoFlags(t *testing.T) {
	for _, tc := range []struct {
		value string
		inert bool
	}{
		{"-mod=mod", true},
		{"-count=1 -race", true},
		{"--mod=vendor -trimpath", true},
		{"", true},
		{"-exec=/bin/rm", false},
		{"-toolexec=sh", false},
		{"--toolexec=sh", false},
		{"-mod=mod -exec=id", false},
		{"-overlay=o.json", false},
		{"-modfile=x.mod", false},
		{"-o=out", false},
		{"-zzz", false},
		{"./...", false},
		{"-tags='a b'", false},
	} {
		if got := InertEnvValue("GOFLAGS", tc.value); got != tc.inert {
			t.Errorf("GOFLAGS=%s: inert %v, want %v", tc.value, got, tc.inert)
		}
	}
}

// TestInertGitConfig checks the keys git -c may set without running
// anything: display settings pass; keys that name programs, files or
// aliases, and unknown keys, do not.
func TestInertGitConfig(t *testing.T) {
	for _, tc := range []struct {
		kv    string
		inert bool
	}{
		{"color.ui=never", true},
		{"Color.UI=always", true},
		{"core.quotepath=false", true},
		{"user.name=x", true},
		{"core.pager=sh", false},
		{"core.sshCommand=sh", false},
		{"alias.x=!id", false},
		{"diff.external=/tmp/evil", false},
		{"include.path=/tmp/x", false},
		{"core.fsmonitor=x", false},
		{"some.unknown.key=1", false},
		{"user.name=$(id)", false},
		{"color.ui", true},
	} {
		if got := inertGitConfig(tc.kv); got != tc.inert {
			t.Errorf("git -c %s: inert %v, want %v", tc.kv, got, tc.inert)
		}
	}
}
