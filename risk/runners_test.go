package risk

import (
	"slices"
	"testing"
)

// TestRunnerOptions reads build and test runners' command lines through
// Command. Their options are an allow-list (specs_runners.go): an option
// the tables do not list, in full, abbreviated or in a cluster, makes the
// command unknown (UnknownOption); options, subcommands and variables that
// run a program other than the runner (go test -exec, npm exec, make
// SHELL=, pytest -p, ssh -o ProxyCommand) are typed as running a program,
// with the reason; the words after "--" are the script's; the ordinary
// lines run nothing else.
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
		{line: "ssh -p 2222 -i key -l me -T -q host", network: true},
		{line: "ssh -p2222 -qT host ls -la /tmp", network: true},
		{line: "ssh host ls -F -I x", network: true},
		{line: "ssh host -p 22 -- ls -o x", network: true},
		{line: "ssh -o ProxyCommand=sh host", runs: true, network: true},
		{line: "ssh -oProxyCommand=sh host", runs: true, network: true},
		{line: "ssh -o 'ProxyCommand sh' host", runs: true, network: true},
		{line: "ssh -o proxycommand=sh host", runs: true, network: true},
		{line: "ssh -o UserKnownHostsFile=x host", runs: true, network: true},
		{line: "ssh host -o ProxyCommand=sh", runs: true, network: true},
		{line: "ssh -- host -o ProxyCommand=sh ls", runs: true, network: true},
		{line: "ssh -F cfg host", unknown: "-F", network: true},
		{line: "ssh host -F cfg ls", unknown: "-F", network: true},
		{line: "ssh -I lib.so host", unknown: "-I", network: true},
		{line: "ssh -J jump host", unknown: "-J", network: true},
		{line: "ssh -qF cfg host", unknown: "-F", network: true},
		{line: "ssh -A host", unknown: "-A", network: true},
		{line: "scp -P 2222 -r a host:b", network: true},
		{line: "scp a host: -r", network: true},
		{line: "scp -S ./evil a host:", unknown: "-S", network: true},
		{line: "scp a host: -S ./evil", unknown: "-S", network: true},
		{line: "scp -o ProxyCommand=sh a host:", runs: true, network: true},
		{line: "sftp -b batch host", unknown: "-b", network: true},
		{line: "rsync -a a host:", network: true},
		{line: "rsync -avz --exclude .git --exclude=node_modules a/ host:b", network: true},
		{line: "rsync -a -e 'ssh -p 2222' a host:", network: true},
		{line: "rsync -a -e 'ssh -o BatchMode=yes' a host:", network: true},
		{line: "rsync -a -e 'sh -c id' a host:", runs: true, network: true},
		{line: "rsync -a --rsh='ssh -o ProxyCommand=sh' a host:", runs: true, network: true},
		{line: "rsync -a -e 'ssh -F cfg' a host:", runs: true, network: true},
		{line: "rsync -a -essh a host:", network: true},
		{line: "rsync -a -e 'ssh;id' a host:", runs: true, network: true},
		{line: "rsync -a --rsync-path='sudo rsync' a host:", unknown: "--rsync-path", network: true},
		{line: "rsync -a --rs=x a host:", unknown: "--rs", network: true},
		{line: "rsync -a --dele a b", unknown: "--dele"},
		{line: "rsync -a --files-from=list . host:", unknown: "--files-from", network: true},
		{line: "rsync -aL a host:", unknown: "-L", network: true},
		{line: "rsync -aF src/ dst/", unknown: "-F"},
		{line: "scp -T host:'*' .", unknown: "-T", network: true},
		// cargo
		{line: "cargo build --release"},
		{line: "cargo test -p app -- --nocapture --test-threads=1 --skip slow name"},
		{line: "cargo test -- --nocapture --config x", unknown: "--config"},
		{line: "cargo test -- --logfile /tmp/x", unknown: "--logfile"},
		{line: "cargo bench -- --logfile=/tmp/x", unknown: "--logfile"},
		{line: "cargo t -- -q --logfile /tmp/x", unknown: "--logfile"},
		{line: "cargo build --target x86_64-unknown-linux-musl"},
		{line: "cargo build --target ./evil.json", runs: true},
		{line: "cargo test --target=/tmp/t.json", runs: true},
		{line: "cargo build --target /tmp/evil", runs: true},
		{line: "cargo build --target=../evil", runs: true},
		{line: "cargo check --target 'x86_64-unknown-linux-gnu x'", runs: true},
		{line: "cargo build --target aarch64-apple-darwin --target wasm32-unknown-unknown"},
		{line: "cargo test --workspace --all-features -F a,b --features=c --target-dir target/x -j4"},
		{line: "cargo clippy --all-targets --all-features -- -D warnings -Aclippy::x"},
		{line: "cargo fmt --all -- --check"},
		{line: "cargo run --release --bin app -- --config x -Z y"},
		{line: "cargo -q check --locked"},
		{line: "cargo build --config build.rustc-wrapper=/tmp/evil", unknown: "--config"},
		{line: "cargo --config=target.x.runner=sh test", unknown: "--config"},
		{line: "cargo build -Zunstable-options", unknown: "-Z"},
		{line: "cargo build -rZx", unknown: "-Z"},
		{line: "cargo test --rel", unknown: "--rel"},
		{line: "cargo doc --open", unknown: "--open"},
		{line: "cargo clippy -- -C linker=/tmp/evil", unknown: "-C"},
		{line: "cargo clippy -- --emit=metadata=/tmp/x", unknown: "--emit"},
		{line: "cargo fmt -- --config-path x", unknown: "--config-path"},
		{line: "cargo evil", unknown: "evil"},
		{line: "cargo install ripgrep", unknown: "install", network: true},
		{line: "cargo +nightly build", unknown: "+nightly"},
		// npm, npx, pnpm, yarn, bun
		{line: "npm test"},
		{line: "npm run build -- --script-shell=x"},
		{line: "npm run test:unit --silent"},
		{line: "npm -s run lint -- --fix"},
		{line: "npm ls --all --depth=0 --json"},
		{line: "npm --version"},
		{line: "npm ci --ignore-scripts --no-audit", network: true},
		{line: "npm install -D typescript", network: true},
		{line: "npm i --save-dev=true x", unknown: "--save-dev=true", network: true},
		{line: "npm audit --json", network: true},
		{line: "npm test --script-shell /tmp/evil", unknown: "--script-shell"},
		{line: "npm run build --script-shell=/tmp/evil", unknown: "--script-shell"},
		{line: "npm test --node-options=--require=/tmp/e.js", unknown: "--node-options"},
		{line: "npm ci --userconfig /tmp/npmrc", unknown: "--userconfig", network: true},
		{line: "npm exec -- rm -rf /", runs: true},
		{line: "npm x evil", runs: true},
		{line: "npx -c 'rm -rf ~'", unknown: "-c"},
		{line: "npx --package=evil tsc", unknown: "--package"},
		{line: "npx tsc --noEmit -p tsconfig.json"},
		{line: "npx --yes prettier --check ."},
		{line: "pnpm test --config.script-shell=/tmp/evil", unknown: "--config.script-shell"},
		{line: "yarn dlx evil", runs: true},
		{line: "pnpm dlx evil", runs: true},
		{line: "bun x evil", runs: true},
		{line: "npm test --prefix /tmp/evil", unknown: "--prefix"},
		{line: "npm --prefix=/tmp/evil test", unknown: "--prefix"},
		{line: "pnpm -C /tmp/evil test", unknown: "-C"},
		{line: "yarn --cwd /tmp/evil test", unknown: "--cwd"},
		{line: "npm test -w other", unknown: "-w"},
		{line: "npm test -ws", unknown: "-w"},
		{line: "npm test -sw other", unknown: "-w"},
		{line: "npm test --script-sh=/tmp/evil", unknown: "--script-sh"},
		{line: "npm test --node-opt=--require=x", unknown: "--node-opt"},
		{line: "npm test --sil", unknown: "--sil"},
		{line: "npm test --c 'rm -rf ~'", unknown: "--c"},
		{line: "npm --yes exec evil", runs: true},
		{line: "npm test --silent --if-present"},
		{line: "npm init vite", unknown: "init"},
		{line: "npm -- exec evil", unknown: "exec"},
		{line: "npm -s -- test", unknown: "test"},
		{line: "cargo -- build", unknown: "build"},
		{line: "npm install -g evil", unknown: "-g", network: true},
		{line: "yarn build"},
		{line: "yarn test --silent"},
		{line: "yarn install --frozen-lockfile", network: true},
		{line: "yarn config set x y", unknown: "config"},
		{line: "yarn test --watch", unknown: "--watch"},
		{line: "pnpm install --frozen-lockfile", network: true},
		{line: "pnpm run build -- --anything"},
		{line: "pnpm lint"},
		{line: "pnpm -r test", unknown: "-r"},
		{line: "pnpm --filter app test", unknown: "--filter"},
		{line: "pnpm store prune", unknown: "store"},
		{line: "bun test -t name"},
		{line: "bun install", network: true},
		{line: "bun --preload ./x.ts test", unknown: "--preload"},
		{line: "bun build ./x.ts", unknown: "build"},
		// make
		{line: "make"},
		{line: "make -j4 build"},
		{line: "make -j 4 -k test"},
		{line: "make -f other.mk test"},
		{line: "make -C docs html"},
		{line: "make --dry test"},
		{line: "make --no-print-dir test"},
		{line: "make --jobs=8 --keep-going all"},
		{line: "make -snk test"},
		{line: "make SHELL=/tmp/evil", runs: true},
		{line: "make test CC=/tmp/evil", runs: true},
		{line: "make test CC+=x", runs: true},
		{line: "make -- X=y", runs: true},
		{line: "make --eval=x", unknown: "--eval"},
		{line: "make --ev=x", unknown: "--ev"},
		{line: "make --e x", unknown: "--e"},
		{line: "make --environment-overrides", unknown: "--environment-overrides"},
		{line: "make -E x", unknown: "-E"},
		{line: "make -e test", unknown: "-e"},
		{line: "make -kE x", unknown: "-E"},
		{line: "make --jobserver-auth=3,4", unknown: "--jobserver-auth"},
		{line: "make --zzz", unknown: "--zzz"},
		{line: "make test -f -", runs: true},
		{line: "make test -sf-", runs: true},
		{line: "make test --file=-", runs: true},
		{line: "make test -f /dev/stdin", runs: true},
		{line: "make -f /proc/self/fd/0 test", runs: true},
		{line: "make -f mk/test.mk test"},
		{line: "rsync -a -f '- *.o' -f '+ src/' --filter 'exclude,s x' -f 'P keep' -f '!' a b"},
		{line: "rsync -a -f 'merge /home/u/.git-credentials' a b", unknown: "--filter=merge /home/u/.git-credentials"},
		{line: "rsync -a --filter '. x' a b", unknown: "--filter=. x"},
		{line: "rsync -a -f ':n- .excl' a b", unknown: "--filter=:n- .excl"},
		{line: "rsync -a -f 'dir-merge x' a b", unknown: "--filter=dir-merge x"},
		{line: "npm test --color --script-shell=/tmp/evil", unknown: "--script-shell"},
		{line: "npm test --color=always"},
		// pytest, python -m pytest, python -m pip
		{line: "pytest -q -k test_x tests"},
		{line: "pytest -p no:cacheprovider"},
		{line: "pytest -pno:cacheprovider -x"},
		{line: "pytest -vvx --maxfail=2 --tb=short -m 'not slow' tests/unit"},
		{line: "pytest -ra -s --lf tests -k 'a and not b'"},
		{line: "pytest tests -- -p evil", runs: true},
		{line: "pytest tests -- -pevil", runs: true},
		{line: "pytest -k -p evil", runs: true},
		{line: "pytest tests -- -p no:cacheprovider"},
		{line: "pytest -W error -W ignore::DeprecationWarning"},
		{line: "pytest -W error::evilmod.Warn", runs: true},
		{line: "pytest @opts.txt", unknown: "@opts.txt"},
		{line: "pytest -q tests @opts.txt", unknown: "@opts.txt"},
		{line: "python3 -m pytest @opts.txt", unknown: "@opts.txt"},
		{line: "cargo clippy -- @args.txt", unknown: "@args.txt"},
		{line: "cargo clippy -- -D warnings x.rs", unknown: "x.rs"},
		{line: "pytest --pythonwarnings=ignore::a.b.C", runs: true},
		{line: "python3 -m pytest -W error::evilmod.Warn", runs: true},
		{line: "python3 -m pytest tests -- -p evil", runs: true},
		{line: "pytest -n auto --durations=10"},
		{line: "pytest -p evil", runs: true},
		{line: "pytest -pevil", runs: true},
		{line: "pytest -p=evil", runs: true},
		{line: "pytest -vp evil", runs: true},
		{line: "pytest --pyargs evil", unknown: "--pyargs"},
		{line: "pytest --pyarg evil", unknown: "--pyarg"},
		{line: "pytest --root=/tmp", unknown: "--root"},
		{line: "pytest --rootdir=/tmp", unknown: "--rootdir"},
		{line: "pytest --max=2", unknown: "--max"},
		{line: "pytest -c /tmp/evil.ini", unknown: "-c"},
		{line: "pytest -vc /tmp/evil.ini", unknown: "-c"},
		{line: "pytest -o addopts=-pevil", unknown: "-o"},
		{line: "pytest --override-ini=addopts=x", unknown: "--override-ini"},
		{line: "pytest --pdb", unknown: "--pdb"},
		{line: "pytest --basetemp=src", unknown: "--basetemp"},
		{line: "cargo clean --target-dir src", unknown: "--target-dir"},
		{line: "python3 -m pytest -x"},
		{line: "python3 -m pytest -p evil", runs: true},
		{line: "python3 -m pytest --confcutdir=/", unknown: "--confcutdir"},
		{line: "python -m pip install requests", network: true},
		{line: "python3 -m pip list"},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != tc.unknown {
			t.Errorf("%s: unknown option %q, want %q", tc.line, e.UnknownOption, tc.unknown)
			continue
		}
		if tc.unknown != "" && e.Known {
			t.Errorf("%s: unknown option %s, and known", tc.line, e.UnknownOption)
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

// TestRunnerEnvNotInert checks that the variables the runners, ssh and
// rsync read options, configuration or programs from are not inert: a
// command given one asks even where a rule allows it.
func TestRunnerEnvNotInert(t *testing.T) {
	for _, name := range []string{
		"npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", "npm_config_node_options", "NPM_CONFIG_USERCONFIG",
		"npm_config_prefix", "NODE_OPTIONS", "NODE_PATH", "YARN_RC_FILENAME", "YARN_IGNORE_PATH", "PNPM_HOME",
		"BUN_OPTIONS", "MAKEFLAGS", "MFLAGS", "MAKEFILES", "GNUMAKEFLAGS", "SHELL", "PYTEST_ADDOPTS",
		"PYTEST_PLUGINS", "PYTHONPATH", "PYTHONSTARTUP", "CARGO_HOME", "CARGO_BUILD_RUSTC_WRAPPER",
		"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "CARGO_TARGET_DIR", "RUSTFLAGS", "RUSTDOCFLAGS",
		"RUSTC_WRAPPER", "RUSTC", "RUSTUP_TOOLCHAIN", "GIT_SSH_COMMAND", "GIT_SSH", "RSYNC_RSH", "SSH_AUTH_SOCK",
	} {
		if InertEnvValue(name, "x") || InertEnv(name) {
			t.Errorf("%s is inert", name)
		}
	}
	for _, name := range []string{"NPM_CONFIG_LOGLEVEL", "CARGO_TERM_COLOR", "RUST_BACKTRACE", "CI", "NO_COLOR"} {
		if !InertEnvValue(name, "1") {
			t.Errorf("%s is not inert", name)
		}
	}
}

// TestRsyncDeletes checks that every rsync option that removes files, under
// any of its spellings, makes the command destructive.
func TestRsyncDeletes(t *testing.T) {
	for _, tc := range []struct {
		line        string
		destructive bool
	}{
		{"rsync -a a/ b/", false},
		{"rsync -a --delete a/ b/", true},
		{"rsync -a --del a/ b/", true},
		{"rsync -a --delete-during a/ b/", true},
		{"rsync -a --delete-delay a/ b/", true},
		{"rsync -a --delete-excluded a/ b/", true},
		{"rsync -a --remove-source-files a/ b/", true},
		{"rsync -a --dele a/ b/", true}, // unknown, and read as the options it may abbreviate
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if (e.Destructive != "") != tc.destructive {
			t.Errorf("%s: destructive %q, want %v", tc.line, e.Destructive, tc.destructive)
		}
	}
}

// TestRunnerReadsAndSecrets checks what the runners' words read and
// expose beyond their options: the paths pytest collects and runs, and
// make -p, which prints the environment.
func TestRunnerReadsAndSecrets(t *testing.T) {
	for _, tc := range []struct {
		line   string
		reads  []string
		secret bool
	}{
		{line: "pytest -q tests/unit tests/a.py::test_b", reads: []string{"tests/unit", "tests/a.py"}},
		{line: "pytest /tmp/other", reads: []string{"/tmp/other"}},
		{line: "python3 -m pytest ../other -x", reads: []string{"../other"}},
		{line: "pytest -k x"},
		{line: "bun test ./src/a.test.ts name", reads: []string{"./src/a.test.ts"}},
		{line: "bun test /tmp/other", reads: []string{"/tmp/other"}},
		{line: "make test -p", secret: true},
		{line: "make --print-data-base", secret: true},
		{line: "make -np test", secret: true},
		{line: "make -n test"},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if !slices.Equal(e.Reads, tc.reads) {
			t.Errorf("%s: reads %q, want %q", tc.line, e.Reads, tc.reads)
		}
		if (e.Secret != "") != tc.secret || tc.secret && e.Level != Credential {
			t.Errorf("%s: secret %q at %v, want one: %v", tc.line, e.Secret, e.Level, tc.secret)
		}
	}
}

// TestGoTestBinaryFlags checks the words go test hands its test binary:
// the testing package's flags that write a file ask; the test's own pass.
func TestGoTestBinaryFlags(t *testing.T) {
	for _, tc := range []struct{ line, unknown string }{
		{line: "go test ./... -run TestX -args -v -update"},
		{line: "go test ./... -args -test.v -test.run=X -test.count=1"},
		{line: "go test -args -test.cpuprofile=/tmp/x ./...", unknown: "-test.cpuprofile=/tmp/x"},
		{line: "go test ./... -args -test.outputdir /tmp", unknown: "-test.outputdir"},
		{line: "go test ./... --args --test.testlogfile=/tmp/x", unknown: "--test.testlogfile=/tmp/x"},
		{line: "go test -run x -- -test.trace=/tmp/x", unknown: "-test.trace=/tmp/x"},
		{line: "go -C sub test . -args -test.memprofile=m", unknown: "-test.memprofile=m"},
		{line: "go run . -args -test.cpuprofile=/tmp/x"},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if e.UnknownOption != tc.unknown {
			t.Errorf("%s: unknown option %q, want %q", tc.line, e.UnknownOption, tc.unknown)
		}
		if tc.unknown != "" && e.Known {
			t.Errorf("%s: unknown, and known", tc.line)
		}
	}
}

// TestGoToolFlags checks the values of go's -gcflags and -ldflags: the
// tool flags that run nothing and write nothing pass; -extld, -tmpdir and
// the tools' profiles run a program or write a file.
func TestGoToolFlags(t *testing.T) {
	for _, tc := range []struct {
		line string
		runs bool
	}{
		{line: "go build -ldflags=-s ./..."},
		{line: "go build -ldflags '-s -w -X main.v=1' ./..."},
		{line: "go build -gcflags=all=-N ./..."},
		{line: "go test -gcflags 'all=-N -l' ./..."},
		{line: "go test -ldflags=-extld=/tmp/evil ./...", runs: true},
		{line: "go test -ldflags '-linkmode=external -extld=./evil.sh' ./...", runs: true},
		{line: "go build -ldflags=-extldflags=-fuse-ld=x ./...", runs: true},
		{line: "go build -ldflags=-tmpdir=/tmp/x ./...", runs: true},
		{line: "go build -gcflags=all=-cpuprofile=/tmp/x ./...", runs: true},
		{line: "go build -gcflags=-d=ssa/check/on ./...", runs: true},
		{line: "go build -asmflags=-D=x ./...", runs: true},
	} {
		w := words(tc.line)
		e := Command(w[0], w[1:], nil)
		if (e.Exec != "") != tc.runs || tc.runs && e.Known {
			t.Errorf("%s: exec %q known %v, want a reason: %v", tc.line, e.Exec, e.Known, tc.runs)
		}
	}
	for _, tc := range []struct {
		value string
		inert bool
	}{
		{"-ldflags=-s -count=1", true},
		{"-ldflags=-extld=/tmp/evil", false},
		{"-gcflags=all=-N", true},
	} {
		if got := InertEnvValue("GOFLAGS", tc.value); got != tc.inert {
			t.Errorf("GOFLAGS=%s: inert %v, want %v", tc.value, got, tc.inert)
		}
	}
}
