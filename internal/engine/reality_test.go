package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testnote"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// realityRun is the command that runs the reality harness.
const realityRun = "TOOLGATE_REALITY=1 go test ./internal/engine -run TestReality"

// TestReality runs every shell line the gate allows under the default policy
// in a throwaway jail, under strace, and compares what the line really did
// with what the analysis said it does: the programs it ran, the credential
// files it opened, the files it wrote and the network it reached. A
// difference fails the test unless testdata/reality/known.txt lists it.
//
// It runs only with TOOLGATE_REALITY=1 and needs strace and unshare (user,
// mount, network and pid namespaces). The lines are the shell cases of the
// attack and benign suites, each read-only program's options applied to
// each kind of operand, hand-written tricks, and seeded random combinations
// of the generated lines; a run stops after -reality.lines lines (0: all)
// or when -reality.time has passed.
func TestReality(t *testing.T) {
	if os.Getenv("TOOLGATE_REALITY") != "1" {
		testnote.Skip(t, "reality harness", "TOOLGATE_REALITY is not 1 (needs strace and unshare)", realityRun)
	}
	for _, p := range []string{"strace", "unshare", "timeout", "git", "cp"} {
		if _, err := exec.LookPath(p); err != nil {
			testnote.Skip(t, "reality harness", p+" is not installed", realityRun)
		}
	}
	if err := exec.Command("unshare", "-rmnpf", "--kill-child", "true").Run(); err != nil {
		testnote.Skip(t, "reality harness", "unshare -rmnpf fails here: "+err.Error(), realityRun)
	}
	known := loadKnown(t)
	lines := realityCorpus(t, newJail(t), known)
	if *realityLines > 0 && len(lines) > *realityLines {
		lines = lines[:*realityLines]
	}
	deadline := time.Now().Add(*realityTime)

	var (
		mu                    sync.Mutex
		ran, allowed, decided int
		timedOut              int
		failures, knownHits   []string
		jobs                  = make(chan []corpusLine)
		wg                    sync.WaitGroup
		start                 = time.Now()
		stoppedEarly          bool
		workers               = min(2, max(1, *realityWorkers))
		groupOf               = map[string]*suiteFile{}
		spent                 [3]time.Duration // preparing worlds, deciding, running
	)
	allSuites := append(loadSuite(t, "attacks"), loadSuite(t, "benign")...)
	for _, sf := range allSuites {
		groupOf[sf.name] = sf
	}
	reportDiff := func(cl corpusLine, d difference, claim string, out []byte) {
		key := d.key() + "\t" + escapeLine(cl.line)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := known[key]; ok {
			known[key] = true
			knownHits = append(knownHits, key)
			return
		}
		failures = append(failures, fmt.Sprintf("%s: %s\n  line:     %s\n  claimed:  %s\n  observed: %s\n  output:   %.300q\n  known.txt entry: %s\tREASON",
			cl.from, d.kind, cl.line, claim, d.detail, out, key))
	}
	for i := 0; i < workers; i++ {
		j := newJail(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range jobs {
				for _, cl := range batch {
					t0 := time.Now()
					if err := j.use(groupOf[cl.file]); err != nil {
						t.Errorf("%s: %v", cl.from, err)
						continue
					}
					line := cl.line
					if cl.suite {
						line = (&world{dir: j.world, project: j.project, home: j.home}).expand(line)
					}
					t1 := time.Now()
					d, units := j.decide(line, cl.cwd)
					mu.Lock()
					decided++
					spent[0] += t1.Sub(t0)
					spent[1] += time.Since(t1)
					mu.Unlock()
					if *realityVerbose {
						t.Logf("%s: %s: %s %s", cl.from, cl.line, d.Decision, d.Reason)
					}
					if d.Decision != policy.Allow || d.Rule != "" {
						continue
					}
					mu.Lock()
					allowed++
					mu.Unlock()
					t2 := time.Now()
					obs, out, err := j.run(line, cl.cwd)
					mu.Lock()
					spent[2] += time.Since(t2)
					mu.Unlock()
					if err != nil {
						t.Errorf("%s: %s: the jail failed: %v\n%s", cl.from, cl.line, err, out)
						j.dirty = true // what the line did is not known
						continue
					}
					mu.Lock()
					ran++
					if obs.timedOut {
						timedOut++
					}
					mu.Unlock()
					claim := claimOf(units)
					for _, diff := range j.compare(claim, obs) {
						reportDiff(cl, diff, claim.String(j), out)
					}
					j.wrote(obs)
				}
			}
		}()
	}
	// Batches of lines that share a world, so that a jail seldom builds a
	// new one.
	for i := 0; i < len(lines); {
		if time.Now().After(deadline) {
			stoppedEarly = true
			break
		}
		n := 1
		for n < 20 && i+n < len(lines) && lines[i+n].file == lines[i].file {
			n++
		}
		jobs <- lines[i : i+n]
		i += n
	}
	close(jobs)
	wg.Wait()
	for _, f := range failures {
		t.Error("a difference between the analysis and what the line did:\n" + f)
	}
	t.Logf("reality: %d lines in the corpus, %d decided, %d allowed, %d run (%d stopped at the time limit) in %s (worker time: worlds %s, deciding %s, running %s); %d known differences seen, %d new",
		len(lines), decided, allowed, ran, timedOut, time.Since(start).Round(time.Second),
		spent[0].Round(time.Second), spent[1].Round(time.Second), spent[2].Round(time.Second), len(knownHits), len(failures))
	if stoppedEarly {
		t.Logf("reality: stopped at the time budget -reality.time=%s before the end of the corpus; raise it to run every line", *realityTime)
	}
	if !stoppedEarly {
		// Every line ran: a known difference of a corpus line that did not
		// show is stale (the analysis now reports the effect, or the line
		// is no longer allowed).
		inCorpus := map[string]bool{}
		for _, cl := range lines {
			inCorpus[escapeLine(cl.line)] = true
		}
		for k, hit := range known {
			if f := strings.Split(k, "\t"); !hit && inCorpus[f[2]] {
				t.Errorf("testdata/reality/known.txt lists a difference that did not show; remove it: %s", k)
			}
		}
	}
}

var (
	realityLines   = flag.Int("reality.lines", 0, "TestReality: take at most this many corpus lines (0: all)")
	realityTime    = flag.Duration("reality.time", 3*time.Minute, "TestReality: stop starting lines after this long")
	realityRandom  = flag.Int("reality.random", 800, "TestReality: how many random combinations to add to the corpus")
	realitySeed    = flag.Uint64("reality.seed", 1, "TestReality: seed of the random combinations")
	realityVerbose = flag.Bool("reality.v", false, "TestReality: log every line's decision")
	realityWorkers = flag.Int("reality.workers", 2, "TestReality: jails run at once (at most 2)")
)

// corpusLine is one shell line to decide and perhaps run.
type corpusLine struct {
	from string // where it comes from: ARCHIVE:LINE, generated, tricks, random(…)
	line string
	cwd  string // relative to the project
	file string // the archive whose fixtures it needs, "" for none
	// suite is set for a suite's line, in which $P, $H and $D stand for
	// the project, home and world directories.
	suite bool
}

// realityCorpus is every line to try, in a fixed order: the suites' shell
// cases first, then the generated lines, then random combinations of the
// generated lines the gate allows in j's base world and that have no known
// difference (which would show again in every combination).
func realityCorpus(t *testing.T, j *jail, known map[string]bool) []corpusLine {
	knownLine := map[string]bool{}
	for k := range known {
		knownLine[strings.Split(k, "\t")[2]] = true
	}
	var out []corpusLine
	seen := map[string]bool{}
	add := func(cl corpusLine) {
		k := cl.file + "\x00" + cl.cwd + "\x00" + cl.line
		if !seen[k] {
			seen[k] = true
			out = append(out, cl)
		}
	}
	for _, dir := range []string{"attacks", "benign"} {
		for _, sf := range loadSuite(t, dir) {
			for _, c := range sf.cases {
				cmd, ok := c.input["command"].(string)
				if c.tool != "Bash" || !ok {
					continue
				}
				file := ""
				if len(sf.fixture) > 0 || len(sf.links) > 0 {
					file = sf.name
				}
				add(corpusLine{from: fmt.Sprintf("%s:%d", c.file, c.line), line: cmd, cwd: c.cwd, file: file, suite: true})
			}
		}
	}
	// Lines of one archive's world together: a new world takes a git repository.
	slices.SortStableFunc(out, func(a, b corpusLine) int { return strings.Compare(a.file, b.file) })
	gen := generatedLines()
	for _, l := range gen {
		add(corpusLine{from: "generated", line: l})
	}
	for _, l := range trickLines {
		add(corpusLine{from: "tricks", line: l})
	}
	var parts []string
	for _, l := range gen {
		if d, _ := j.decide(l, ""); d.Decision == policy.Allow && !knownLine[escapeLine(l)] {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		t.Fatal("the gate allows none of the generated lines")
	}
	r := rand.New(rand.NewPCG(*realitySeed, 0x7e1a))
	for i := 0; i < *realityRandom; i++ {
		add(corpusLine{from: fmt.Sprintf("random(seed %d, #%d)", *realitySeed, i), line: randomLine(r, parts)})
	}
	return out
}

// operands are the kinds of operand every generated command is tried with:
// a plain file, the project's .env, a link to the SSH key, a directory,
// standard input, a file through a linked directory, and an outside file
// through a link.
var operands = []string{"README.md", ".env", "idlink", "src", "-", "keys/id_rsa", "out/secret.txt"}

// programOptions are the read-only programs and the option sets tried with
// each operand; "@" stands for the operand (appended when absent).
var programOptions = map[string][]string{
	"cat":       {"", "-n", "-A", "-v", "-s", "-b"},
	"head":      {"", "-n 2", "-c 4", "-q", "-v", "-n -1"},
	"tail":      {"", "-n 2", "-c 4", "-q", "-n +2"},
	"wc":        {"", "-l", "-w", "-c", "-m", "-L", "--files0-from=@"},
	"sort":      {"", "-r", "-n", "-u", "-k 2", "-o out.txt @", "--files0-from=@", "-c", "-m @ README.md"},
	"uniq":      {"", "-c", "-d", "-u", "-i", "@ out.txt"},
	"cut":       {"-c 1-3", "-d= -f1", "-b 1", "-f 1 -s"},
	"tr":        {"a-z A-Z < @", "-d x < @"},
	"grep":      {"KEY", "-r KEY", "-i key", "-n KEY", "-c KEY", "-l KEY", "-v KEY", "-o KEY", "-R KEY", "-s KEY", "--include=*.go -r package", "-f @ README.md", "-e KEY"},
	"ls":        {"", "-la", "-R", "-l", "-d", "-A", "-L", "-lR"},
	"find":      {"@", "@ -name '*.go'", "@ -type f", "@ -maxdepth 1", "@ -newer README.md", "@ -fprint out.txt", "@ -exec cat {} ;", "@ -print0", "-L @", "@ -name '*.md' -exec head -1 {} +"},
	"stat":      {"", "-L", "-c %s", "-f"},
	"du":        {"", "-s", "-a", "-h", "-L"},
	"diff":      {"@ README.md", "-u @ README.md", "-r @ src", "-q @ README.md"},
	"cmp":       {"@ README.md", "-l @ README.md", "-s @ README.md"},
	"jq":        {". @", "-r . @", "-n --rawfile x @ '$x'", "-f @ README.md", "-R . @"},
	"awk":       {"'{print}' @", "-F= '{print $1}' @", "'{print > \"out.txt\"}' @", "-f @ README.md", "'BEGIN{while ((getline l < \"@\") > 0) print l}'"},
	"sed":       {"-n p @", "s/a/b/ @", "-n 1p @", "-i s/a/b/ @", "-f @ README.md", "'w out.txt' @", "-E 's/(K)/\\1/' @"},
	"tar":       {"-cf out.tar @", "-tf @", "-czf - @", "-cf /dev/null @", "-xOf @"},
	"git":       {"log -- @", "log -p -- @", "status -- @", "diff -- @", "show HEAD:@", "grep KEY -- @", "diff --no-index @ README.md", "log --output=out.txt -- @", "blame @", "ls-files @", "cat-file -p HEAD:@", "status --porcelain", "diff --stat HEAD -- @"},
	"echo":      {"@", "-n @", "-e @", "@ > out.txt"},
	"printf":    {"'%s\\n' @", "%s @"},
	"test":      {"-f @", "-r @", "-s @", "-L @", "-d @"},
	"base64":    {"", "-d"},
	"sha256sum": {""},
	"od":        {"-c"},
	"nl":        {""},
	"tac":       {""},
	"paste":     {"", "-s"},
	"comm":      {"@ README.md"},
	"readlink":  {"-f", ""},
	"realpath":  {""},
	"file":      {"", "-L"},
	"xxd":       {"", "@ out.bin"},
	"tee":       {"< @", "out.txt < @"},
	"md5sum":    {"", "-c"},
}

// trickLines are ways of making a read-only program run another program,
// read a file its operands do not name, or write, and shell ways of
// reaching a file: the base world holds lists naming the SSH key (list.txt
// a line each, list0 NUL-separated, sums.txt a checksum list).
var trickLines = []string{
	// Programs that run programs.
	`awk 'BEGIN{system("id")}'`, `awk 'BEGIN{print "x" | "cat"}'`, `awk 'BEGIN{"id" | getline x; print x}'`,
	`sed -n '1e id' README.md`, `sed 's/.*/id/e' README.md`, `find . -maxdepth 1 -exec id \;`, `find . -maxdepth 1 -execdir id \;`,
	`tar -cf /dev/null README.md --checkpoint=1 --checkpoint-action=exec=id`, `tar -cf out.tar -I id README.md`,
	`tar -cf - README.md | tar -xf - --to-command=id`, `git -c core.pager=id log`, `git -c alias.x='!id' x`,
	`git -c diff.external=id diff`, `git -c core.fsmonitor=id status`, `git grep --open-files-in-pager=id KEY`,
	`rg --pre id KEY`, `env -S id`, `sort --compress-program=id README.md`, `git log --ext-diff -p -1`,
	`jq -n '$ENV'`, `date -f idlink`, `date -f .env`,
	// Build and test runners, pagers and editors given options or variables
	// that run another program.
	`go test -exec id ./...`, `go test --exec=id ./...`, `go build -toolexec id ./...`, `go vet -vettool=id ./...`,
	`go run -exec id .`, `go generate ./...`, `go env -w GOFLAGS=-exec=id`, `GOFLAGS=-toolexec=id go build ./...`,
	`CC=id go build ./...`, `cargo build --config build.rustc-wrapper=id`, `RUSTC_WRAPPER=id cargo build`,
	`npm test --script-shell=id`, `npm exec -- id`, `npx -c id`, `NODE_OPTIONS=--require=./x.js npm test`,
	`make SHELL=id`, `make --eval='x:=$(shell id)'`, `MAKEFLAGS=--eval=x make`, `pytest -p evil`, `pytest --pyargs evil`,
	`PYTEST_ADDOPTS='-p evil' pytest`, `python3 -m pytest -p evil`, `git -c some.unknown.key=1 status`,
	`git -c core.sshCommand=id fetch origin`, `git difftool -x id`, `git --exec-path=. status`, `less +'!id' README.md`,
	`vim -c '!id' README.md`, `man -P id ls`, `MANPAGER=id man ls`, `rsync -e id README.md x:`,
	`ssh -o ProxyCommand=id host`, `zip -T -TT id out.zip README.md`, `tar -cf out.tar --use-compress-program=id README.md`,
	`EDITOR=id git commit`, `PERL5OPT=-Mx cat README.md`, `npm test --prefix ..`, `scp -S id README.md x:`,
	`ssh -o KnownHostsCommand=id host`, `rsync -e 'sh -c id' README.md x:`,
	// Programs that read files their operands do not name.
	`sed 'r idlink' README.md`, `sed 'R .env' README.md`, `sed -n 'w out.txt' README.md`, `tar -cf - -T list.txt`,
	`tar -czf - --files-from=list.txt`, `wc --files0-from=list0`, `du --files0-from=list0`, `sort --files0-from=list0`,
	`sha256sum -c sums.txt`, `md5sum -c sums.txt`, `xargs -a list.txt cat`, `xargs cat < list.txt`, `cat list.txt | xargs cat`,
	`cat $(cat list.txt)`, `grep -f idlink README.md`, `diff --to-file=idlink README.md`, `jq -n --slurpfile x idlink '$x'`,
	`git diff --no-index idlink /dev/null`, `git log -p -- idlink`, `git grep --no-index KEY ../outside`,
	`git show HEAD:../home/.ssh/id_rsa`, `git -C .. status`, `git -C ../home status`, `git archive --output=out.tar HEAD`,
	`git log --output=/tmp/toolgate-reality-out`, `git diff --output=out.txt HEAD`, `git -C keys log`,
	// Options whose value is a file the program reads.
	`grep -r --exclude-from=idlink KEY src`, `rg --ignore-file idlink KEY`, `rg -f idlink README.md`,
	`tar -cf /dev/null -X idlink src`, `tar -cf /dev/null --exclude-from=idlink src`, `diff -r -X idlink src src`,
	`du -X idlink src`, `sort --random-source=idlink -R README.md`, `shuf --random-source=idlink README.md`,
	`file -m idlink README.md`, `file -f list.txt`, `jq --from-file idlink README.md`, `look x idlink`,
	`iconv -f utf8 -t ascii idlink`, `pr idlink`, `fmt idlink`, `expand idlink`, `tsort idlink`, `cmp -i 0 idlink README.md`,
	`git blame --contents idlink README.md`, `git hash-object idlink`, `git hash-object -w README.md`, `git apply --stat idlink`,
	`git ls-files -o -X idlink`, `git grep -f idlink`, `git -c include.path=$HOME/.ssh/id_rsa status`,
	`git -c core.excludesFile=idlink status`, `git check-ignore --stdin < list.txt`, `git cat-file --batch-check < list.txt`,
	`git config -f idlink -l`, `git diff --no-index --output=out.txt README.md notes.txt`, `git format-patch -1`,
	// Variables that make a program read a file or run one.
	`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=id git status`, `GIT_EXTERNAL_DIFF=id git diff`,
	`GIT_CONFIG_GLOBAL=idlink git status`, `GIT_DIR=keys git log`, `HOME=keys git status`, `GIT_PAGER=id git log`,
	`RIPGREP_CONFIG_PATH=idlink rg KEY`, `MAGIC=idlink file README.md`, `TZ=:$HOME/.ssh/id_rsa date`, `TZDIR=keys TZ=id_rsa date`,
	`TAR_OPTIONS=--to-command=id tar -cf - README.md | tar -xf -`, `LD_PRELOAD=idlink cat README.md`, `PATH=.:$PATH ls`,
	`BASH_ENV=.env bash -c true`, `PAGER=id git log`, `LESSOPEN='|id' less README.md`, `JQ_COLORS=1 jq . data.json`,
	`GCONV_PATH=keys iconv -f x -t y README.md`, `LANGUAGE=x LOCPATH=keys ls`,
	// Writes a read-only program makes.
	`sort -o /tmp/toolgate-reality-out README.md`, `uniq README.md /tmp/toolgate-reality-out`, `tee /tmp/toolgate-reality-out < README.md`,
	`find . -maxdepth 1 -fprint out.txt`, `find . -maxdepth 1 -fls out.txt`, `find . -maxdepth 1 -fprintf out.txt '%p'`,
	`xxd README.md out.bin`, `split -l 1 README.md`, `csplit README.md 2`, `touch -r README.md new.txt`,
	`awk '{print > "/tmp/toolgate-reality-out"}' README.md`, `cp README.md /tmp/toolgate-reality-out`,
	// The shell reaching a file.
	`echo $(<.env)`, `echo "$(< idlink)"`, `read x < .env; echo $x`, `mapfile l < idlink; echo "${l[@]}"`,
	`source .env`, `. ./.env`, `exec 3<idlink; cat <&3`, `cat <(cat idlink)`, `cat < idlink`, `x=.env; cat $x`,
	`cat ${HOME}/.ssh/id_rsa`, `cat $(echo .env)`, `cat .e"n"v`, `cat .en?`, `cat .en[v]`, `cat {.env,README.md}`,
	`shopt -s dotglob; cat *`, `GLOBIGNORE=x; cat *`, `shopt -s globstar; cat **/id_rsa`, `shopt -s dotglob; grep KEY *`,
	`cd .. && cat outside/secret.txt`, `cd keys && cat id_rsa`, `pushd keys >/dev/null; cat id_rsa`, `cd -P out; cat secret.txt`,
	`cd $HOME && cat .ssh/id_rsa`, `cd; cat .aws/credentials`, `CDPATH=$HOME cd .ssh && cat id_rsa`, `f(){ cat .env; }; f`,
	`eval "cat .env"`, `cat ~/.ssh/id_rsa`, `cat ~root/.ssh/id_rsa`, `HOME=/tmp; cat ~/.aws/credentials`,
	`cat inner/../.env`, `cat src/../.env`, `cat out/../home/.ssh/id_rsa`, `cat keys/../../outside/secret.txt`,
	`ls keys/`, `ls -la ~/.ssh`, `stat idlink`, `file -L idlink`, `head -c0 idlink`, `test -r idlink && echo yes`,
	`[ -s .env ] && echo yes`, `cat "$(readlink idlink)"`, `cat $(realpath idlink)`, `printf '%s' "$(cat .env)"`,
	`echo x > /dev/null; cat .env > /dev/null`, `cat README.md > /dev/stderr`, `echo x >&2`, `echo x > /dev/tty`,
	`echo x | tee /dev/null`, `echo x > out.txt`, `echo x >> README.md`, `echo x > out/new.txt`, `echo x > keys/new`,
	`echo x > ~/.bashrc`, `echo x > /tmp/toolgate-reality-out`, `: > README.md`, `>out.txt`, `cat <<< x > out.txt`,
}

// generatedLines applies every option set of every program to every operand.
func generatedLines() []string {
	progs := make([]string, 0, len(programOptions))
	for p := range programOptions {
		progs = append(progs, p)
	}
	slices.Sort(progs)
	var out []string
	for _, p := range progs {
		for _, opt := range programOptions[p] {
			for _, op := range operands {
				words := opt
				if !strings.Contains(words, "@") {
					words = strings.TrimSpace(words + " @")
				}
				out = append(out, p+" "+strings.ReplaceAll(words, "@", op))
			}
		}
	}
	return out
}

// randomLine joins two or three generated commands with pipes, lists,
// redirections and command substitutions.
func randomLine(r *rand.Rand, gen []string) string {
	pick := func() string {
		c := gen[r.IntN(len(gen))]
		switch r.IntN(8) {
		case 0:
			c = "echo $(" + c + ")"
		case 1:
			c = "X=$(" + c + "); echo \"$X\""
		case 2:
			c += " > out.txt"
		case 3:
			c += " 2>/dev/null"
		case 4:
			c += " < README.md"
		case 5:
			c = "( " + c + " )"
		}
		return c
	}
	line := pick()
	for n := 1 + r.IntN(2); n > 0; n-- {
		line += []string{" | ", "; ", " && ", " || ", " |& "}[r.IntN(5)] + pick()
	}
	return line
}

// jail is a throwaway world the lines are decided against and run in: a
// git project with a .env, a home with credentials, an outside directory,
// and programs on PATH that must never run replaced by traps.
type jail struct {
	dir, world, project, home, outside string
	tmp, trap, template, log           string
	e                                  *Engine
	fixture                            *suiteFile // the fixtures the world holds now
	dirty                              bool       // a line wrote into the world
	canaries                           []string   // real paths no line may open unannounced
}

// token is the secret written into every canary file.
const token = "TOOLGATE-REALITY-CANARY-7f3c9a"

// trapped are programs no allowed line should run: a trap that records
// its name stands in for each.
var trapped = []string{"nc", "ncat", "netcat", "socat", "telnet", "curl", "wget", "ssh", "scp", "sftp", "rsync",
	"python", "python3", "perl", "ruby", "node", "php", "sudo", "su", "doas"}

func newJail(t *testing.T) *jail {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	j := &jail{dir: dir, world: filepath.Join(dir, "w"), tmp: filepath.Join(dir, "tmp"), trap: filepath.Join(dir, "trap"),
		template: filepath.Join(dir, "template"), log: filepath.Join(dir, "strace.log")}
	j.project, j.home, j.outside = filepath.Join(j.world, "project"), filepath.Join(j.world, "home"), filepath.Join(j.world, "outside")
	for _, d := range []string{j.tmp, j.trap, filepath.Join(dir, "etc")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	for _, p := range trapped {
		must(t, os.WriteFile(filepath.Join(j.trap, p), []byte("#!/bin/sh\necho \"trap: $0 ran\" >&2\nexit 97\n"), 0o755))
	}
	managed := filepath.Join(dir, "etc/managed.toml")
	user := filepath.Join(dir, "etc/user.toml")
	must(t, os.WriteFile(managed, nil, 0o644))
	must(t, os.WriteFile(user, []byte(fmt.Sprintf("trusted_projects = [%q]\n", j.project)), 0o644))
	j.e, err = New(Options{Policy: FromFiles(managed, user), Home: j.home, NoCache: true})
	must(t, err)
	must(t, j.build())
	return j
}

// build makes the jail's base world and keeps a copy to restore it from.
func (j *jail) build() error {
	files := map[string]string{
		"project/README.md":          "# demo\nKEY=value\n",
		"project/notes.txt":          "b 2\na 1\nKEY c\n",
		"project/package.json":       `{"name": "demo", "scripts": {"test": "true"}}` + "\n",
		"project/go.mod":             "module demo\n",
		"project/docs/guide.md":      "# guide\n",
		"project/src/main.go":        "package main\n\n// TODO: more\nfunc main() {}\n",
		"project/src/util/helper.go": "package util\n",
		"project/.gitignore":         ".env\n",
		"project/.env":               "KEY=" + token + "\n",
		"home/.ssh/id_rsa":           "-----BEGIN " + token + "\n",
		"home/.aws/credentials":      "[default]\naws_secret_access_key = " + token + "\n",
		"home/.config/git/config":    "",
		"outside/secret.txt":         "outside " + token + "\n",
		"outside/notes.txt":          "x\n",
		"project/list.txt":           "../home/.ssh/id_rsa\n",
		"project/list0":              "../home/.ssh/id_rsa\x00",
		"project/sums.txt":           strings.Repeat("0", 64) + "  ../home/.ssh/id_rsa\n" + strings.Repeat("0", 32) + "  ../home/.ssh/id_rsa\n",
	}
	links := [][2]string{{"project/keys", "$H/.ssh"}, {"project/out", "$D/outside"}, {"project/idlink", "$H/.ssh/id_rsa"}, {"project/inner", "src"}}
	if err := j.write(files, links); err != nil {
		return err
	}
	// Three commits, then a change not staged and a file not tracked: the
	// git commands that write (stash, checkout) have something to do.
	git := exec.Command("sh", "-c", `git init -q -b main --template= && git add -A && git commit -q -m init &&
echo '// two' >> src/main.go && git commit -q -am two &&
echo 'more' >> README.md && git commit -q -am three &&
echo 'changed' >> README.md && echo scratch > scratch.txt`)
	git.Dir = j.project
	git.Env = append(j.env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := git.CombinedOutput(); err != nil {
		return fmt.Errorf("git init in the jail: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-a", j.world, j.template).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the jail's world: %v\n%s", err, out)
	}
	j.canaries = nil
	for _, c := range []string{"project/.env", "home/.ssh/id_rsa", "home/.aws/credentials", "outside/secret.txt"} {
		j.canaries = append(j.canaries, filepath.Join(j.world, c))
	}
	return nil
}

// write writes files and links into the world; "$P", "$H" and "$D" in
// their text stand for the project, home and world directories.
func (j *jail) write(files map[string]string, links [][2]string) error {
	w := &world{dir: j.world, project: j.project, home: j.home}
	for name, body := range files {
		p := filepath.Join(j.world, name)
		if err := errors.Join(os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, []byte(w.expand(body)), 0o644)); err != nil {
			return err
		}
	}
	for _, l := range links {
		p := filepath.Join(j.world, l[0])
		os.Remove(p) // an archive's link replaces a default one
		if err := errors.Join(os.MkdirAll(filepath.Dir(p), 0o755), os.Symlink(w.expand(l[1]), p)); err != nil {
			return err
		}
	}
	return nil
}

// use readies the world for a line that needs sf's fixtures (nil for
// none): the base world is restored, and sf's files and links added, when
// the world holds another archive's or a line wrote into it. An archive's
// files in home/ and outside/ are canaries too.
func (j *jail) use(sf *suiteFile) error {
	if sf == j.fixture && !j.dirty {
		return nil
	}
	if err := os.RemoveAll(j.world); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", j.template, j.world).CombinedOutput(); err != nil {
		return fmt.Errorf("restoring the jail's world: %v\n%s", err, out)
	}
	// The copies have new inodes: git's index is brought up to date, so
	// that what git does next does not depend on how long ago that was.
	refresh := exec.Command("git", "update-index", "-q", "--refresh")
	refresh.Dir, refresh.Env = j.project, j.env()
	refresh.Run() // exits 1 for the change not staged; that is expected
	j.canaries = j.canaries[:4]
	if sf != nil {
		if err := j.write(sf.fixture, sf.links); err != nil {
			return err
		}
		for name := range sf.fixture {
			if strings.HasPrefix(name, "home/") || strings.HasPrefix(name, "outside/") {
				j.canaries = append(j.canaries, filepath.Join(j.world, name))
			}
		}
	}
	j.fixture, j.dirty = sf, false
	return nil
}

// env is the environment lines run in.
func (j *jail) env() []string {
	return []string{"PATH=" + j.trap + ":/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=" + j.home, "TMPDIR=" + j.tmp, "LANG=C.UTF-8", "TERM=dumb", "USER=root", "LOGNAME=root", "SHELL=/bin/bash"}
}

func (j *jail) cwd(rel string) string {
	w := &world{dir: j.world, project: j.project, home: j.home}
	rel = w.expand(rel)
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(j.project, rel)
}

// decide asks the gate about a line, with the default policy.
func (j *jail) decide(line, cwd string) (*Decision, []*Unit) {
	d := j.e.Explain(context.Background(), &Request{Tool: "Bash", Input: sh(line), Cwd: j.cwd(cwd)})
	if d.Trace == nil {
		return d, nil
	}
	return d, d.Trace.Units
}

// traced are the system calls the jail records.
const traced = "execve,execveat,open,openat,openat2,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat," +
	"rmdir,symlink,symlinkat,link,linkat,truncate,chmod,fchmodat,mknod,mknodat,connect,sendto,sendmsg," +
	"chdir,fchdir,clone,clone3,fork,vfork"

// jailScript runs inside the new namespaces: every mount but the harness's
// directory becomes read-only (a remount that reports success may still
// leave a mount writable, so the result is checked: the jail refuses to
// run with one left, but for /proc, the terminals and /dev/shm, which
// becomes a private tmpfs), then the line runs under strace with a time
// limit. $1 harness dir, $2 cwd, $3 strace log, $4 the line, $5 the limit.
const jailScript = `mount --bind "$1" "$1" || exit 125
awk '{print $2}' /proc/self/mounts | while read -r m; do
  case "$m" in "$1"|/proc|/proc/*) ;; *) mount -o remount,bind,ro "$m" 2>/dev/null ;; esac
done
mount -t tmpfs tmpfs /dev/shm || exit 125
awk -v h="$1" '$4 !~ /^ro(,|$)/ && $2 != h && $2 !~ /^\/(proc|dev\/pts|dev\/shm)(\/|$)/ { print "writable in the jail: " $2; bad = 1 }
  END { exit bad }' /proc/self/mounts || exit 125
cd "$2" || exit 125
exec timeout -s KILL "$5" strace -f -qq -y -s 4096 -e signal=none -e trace=` + traced + ` -o "$3" -- /bin/bash -c "$4" </dev/null`

// lineLimit is how long a line may run; a line whose shell had not started
// by then (a machine under load) is run again with startLimit.
const lineLimit, startLimit = "2", "20"

// run runs a line in the jail and returns what it did and its output.
func (j *jail) run(line, cwd string) (*observation, []byte, error) {
	obs, out, err := j.runFor(line, cwd, lineLimit)
	if err == nil && !obs.started {
		obs, out, err = j.runFor(line, cwd, startLimit)
	}
	return obs, out, err
}

func (j *jail) runFor(line, cwd, limit string) (*observation, []byte, error) {
	os.Remove(j.log)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-rmnpf", "--kill-child", "--", "/bin/sh", "-c", jailScript, "sh",
		j.dir, j.cwd(cwd), j.log, line, limit)
	cmd.Env = j.env()
	out := &capped{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	ee, _ := err.(*exec.ExitError)
	if ee != nil && ee.ExitCode() == 125 {
		return nil, out.Bytes(), fmt.Errorf("setting up the jail: %v", err)
	}
	f, ferr := os.Open(j.log)
	if ferr != nil {
		return nil, out.Bytes(), fmt.Errorf("no strace log: %v (run: %v)", ferr, err)
	}
	defer f.Close()
	obs := observe(f, j.cwd(cwd))
	obs.output = out.Bytes()
	obs.timedOut = ee != nil && ee.ExitCode() == 137 // timeout -s KILL
	return obs, out.Bytes(), nil
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// access is one thing a process of the line did.
type access struct {
	prog string // the program that did it (basename)
	path string // absolute; for exec, the program's path
	call string // the call as strace printed it, shortened
	done bool   // the call succeeded
}

// observation is what a line did.
type observation struct {
	execs, reads, writes, connects []access
	output                         []byte // what the line printed
	started                        bool   // the line's shell ran
	timedOut                       bool   // the time limit stopped the line
}

// observe reads an strace -f -y log. The first program started (the
// line's own bash) is left out of execs. Relative paths are resolved
// against the directory strace printed for AT_FDCWD or, for calls without
// a directory argument, the process's last known directory.
func observe(r interface{ Read([]byte) (int, error) }, cwd0 string) *observation {
	var calls []sysCall
	var p straceParser
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	parent := map[int]int{}
	for sc.Scan() {
		c, ok := p.line(sc.Text())
		if !ok {
			continue
		}
		calls = append(calls, c)
		switch c.name {
		case "clone", "clone3", "fork", "vfork":
			var child int
			if _, err := fmt.Sscan(c.ret, &child); err == nil && child > 0 {
				parent[child] = c.pid
			}
		}
	}
	obs := &observation{}
	cwd, prog := map[int]string{}, map[int]string{}
	first := true
	var inherit func(pid int)
	inherit = func(pid int) {
		if _, ok := cwd[pid]; ok {
			return
		}
		if pp, ok := parent[pid]; ok && pp != pid {
			delete(parent, pid) // no cycles
			inherit(pp)
			cwd[pid], prog[pid] = cwd[pp], prog[pp]
			return
		}
		cwd[pid], prog[pid] = cwd0, "bash"
	}
	short := func(c sysCall) string {
		s := c.name + "(" + strings.Join(c.args, ", ") + ") = " + c.ret
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return s
	}
	// at resolves a path argument against a directory argument (or the cwd).
	at := func(c sysCall, dirArg, pathArg int) (string, bool) {
		p, ok := unquote(c.arg(pathArg))
		if !ok {
			return "", false
		}
		if filepath.IsAbs(p) {
			return filepath.Clean(p), true
		}
		base := cwd[c.pid]
		if dirArg >= 0 {
			if d, ok := fdPath(c.arg(dirArg)); ok {
				base = d
			}
		}
		return filepath.Join(base, p), true
	}
	write := func(c sysCall, p string) {
		obs.writes = append(obs.writes, access{prog: prog[c.pid], path: p, call: short(c), done: !c.failed()})
	}
	for _, c := range calls {
		inherit(c.pid)
		for _, a := range c.args {
			if strings.HasPrefix(a, "AT_FDCWD<") {
				if d, ok := fdPath(a); ok {
					cwd[c.pid] = d
				}
			}
		}
		switch c.name {
		case "execve", "execveat":
			pa, da := 0, -1
			if c.name == "execveat" {
				pa, da = 1, 0
			}
			if c.failed() {
				continue
			}
			pth, _ := at(c, da, pa)
			prev := prog[c.pid]
			prog[c.pid] = path.Base(pth)
			if first {
				first, obs.started = false, true
				continue
			}
			obs.execs = append(obs.execs, access{prog: prev, path: pth, call: short(c)})
		case "chdir":
			if p, ok := at(c, -1, 0); ok && !c.failed() {
				cwd[c.pid] = p
			}
		case "fchdir":
			if d, ok := fdPath(c.arg(0)); ok && !c.failed() {
				cwd[c.pid] = d
			}
		case "open", "openat", "openat2", "creat":
			pa, da, fa := 0, -1, 1
			if c.name != "open" && c.name != "creat" {
				pa, da, fa = 1, 0, 2
			}
			p, ok := at(c, da, pa)
			if !ok {
				continue
			}
			if real, ok := fdPath(c.ret); ok {
				p = real
			} else {
				p = realParent(p)
			}
			flags := c.arg(fa)
			if c.name == "creat" || strings.Contains(flags, "O_WRONLY") || strings.Contains(flags, "O_RDWR") ||
				strings.Contains(flags, "O_CREAT") || strings.Contains(flags, "O_TRUNC") {
				write(c, p)
			} else {
				obs.reads = append(obs.reads, access{prog: prog[c.pid], path: p, call: short(c)})
			}
		case "unlink", "rmdir", "mkdir", "truncate", "chmod", "mknod":
			if p, ok := at(c, -1, 0); ok {
				write(c, realParent(p))
			}
		case "unlinkat", "mkdirat", "fchmodat", "mknodat":
			if p, ok := at(c, 0, 1); ok {
				write(c, realParent(p))
			}
		case "rename", "link":
			if c.name == "rename" {
				if p, ok := at(c, -1, 0); ok {
					write(c, realParent(p))
				}
			}
			if p, ok := at(c, -1, 1); ok {
				write(c, realParent(p))
			}
		case "renameat", "renameat2", "linkat":
			if c.name != "linkat" {
				if p, ok := at(c, 0, 1); ok {
					write(c, realParent(p))
				}
			}
			if p, ok := at(c, 2, 3); ok {
				write(c, realParent(p))
			}
		case "symlink":
			if p, ok := at(c, -1, 1); ok {
				write(c, realParent(p))
			}
		case "symlinkat":
			if p, ok := at(c, 1, 2); ok {
				write(c, realParent(p))
			}
		case "connect", "sendto", "sendmsg":
			addr := c.arg(1)
			if c.name == "sendto" {
				addr = c.arg(4)
			}
			if strings.Contains(addr, "sa_family=AF_INET") || strings.Contains(addr, "msg_name={sa_family=AF_INET") {
				obs.connects = append(obs.connects, access{prog: prog[c.pid], call: short(c)})
			}
		}
	}
	return obs
}

// realParent resolves the links in a path's directory, as the kernel would
// have when the call was made (the world is unchanged since).
func realParent(p string) string {
	return filepath.Join(pathres.Real(filepath.Dir(p)), filepath.Base(p))
}

// claim is what the analysis said a line does.
type claim struct {
	programs      []string
	reads, writes []PathFact
	network       bool
}

func claimOf(units []*Unit) claim {
	var c claim
	for _, u := range units {
		if u.Command != nil && u.Command.Name != "" {
			c.programs = append(c.programs, path.Base(u.Command.Name))
			for _, w := range u.Command.Wrappers {
				c.programs = append(c.programs, path.Base(w))
			}
		}
		c.reads = append(c.reads, u.Reads...)
		c.reads = append(c.reads, u.Code...)
		c.writes = append(c.writes, u.Writes...)
		c.network = c.network || u.network || len(u.Hosts) > 0
	}
	return c
}

// String shows the claim with the jail's paths as $P, $H and $D.
func (c claim) String(j *jail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "runs %v", c.programs)
	for _, x := range []struct {
		what  string
		facts []PathFact
	}{{"reads", c.reads}, {"writes", c.writes}} {
		if len(x.facts) == 0 {
			continue
		}
		b.WriteString("; " + x.what)
		for _, f := range x.facts {
			b.WriteString(" " + j.short(factPath(f)))
			if f.Recursive {
				b.WriteString("/**")
			}
		}
	}
	if c.network {
		b.WriteString("; network")
	}
	return b.String()
}

func factPath(f PathFact) string {
	if f.Real != "" {
		return f.Real
	}
	return f.abs
}

// short writes a jail path with $P, $H, $D, $T for the project, home,
// world and harness directories.
func (j *jail) short(p string) string {
	for _, r := range [][2]string{{j.project, "$P"}, {j.home, "$H"}, {j.world, "$D"}, {j.dir, "$T"}} {
		if pathres.Within(r[0], p) {
			return r[1] + strings.TrimPrefix(p, r[0])
		}
	}
	return p
}

// tempName matches the random part of a temporary file's name.
var tempName = regexp.MustCompile(`(sed|tmp_obj_|tmp\.)[A-Za-z0-9]{6}$`)

// subject names a written path as known.txt does: as [jail.short] writes
// it, with anything in the project's .git directory as $P/.git/* (git's
// object and lock names change from run to run) and the random part of a
// temporary name as XXXXXX.
func (j *jail) subject(p string) string {
	if pathres.Within(filepath.Join(j.project, ".git"), p) {
		return "$P/.git/*"
	}
	return tempName.ReplaceAllString(j.short(p), "${1}XXXXXX")
}

// shortCall writes the jail's paths in a call as [jail.short] does.
func (j *jail) shortCall(s string) string {
	return strings.NewReplacer(j.project, "$P", j.home, "$H", j.world, "$D", j.dir, "$T").Replace(s)
}

// difference is one thing a line did that the analysis did not say.
type difference struct {
	kind    string // exec, read, write, connect, output
	subject string // the program, or the path as $P/…
	detail  string
}

func (d difference) key() string { return d.kind + "\t" + d.subject }

// internal are effects a program has of its own, which an analysis of the
// line's words does not list: each reviewed.
var internal = []struct {
	prog, kind, pattern, why string
}{
	// git status, diff and the like refresh the stat data cached in the
	// index, through index.lock, when they find it stale.
	{"git", "write", "$P/.git/index.lock", "git refreshes the index's stat cache"},
	{"git", "write", "$P/.git/index", "git refreshes the index's stat cache"},
	// Debian's zcat, gunzip, egrep and fgrep are scripts that run gzip
	// and grep with fixed options.
	{"zcat", "exec", "gzip", "zcat is gzip -cd"},
	{"gunzip", "exec", "gzip", "gunzip is gzip -d"},
	{"egrep", "exec", "grep", "egrep is grep -E"},
	{"fgrep", "exec", "grep", "fgrep is grep -F"},
	// The Python yq is a wrapper around jq.
	{"yq", "exec", "jq", "yq hands its program to jq"},
	// man formats a page with the groff pipeline and tries to keep the
	// formatted page in its cache.
	{"man", "exec", "preconv", "man's formatting pipeline"},
	{"man", "exec", "tbl", "man's formatting pipeline"},
	{"man", "exec", "col", "man's formatting pipeline"},
	{"man", "exec", "nroff", "man's formatting pipeline"},
	{"man", "write", "/var/cache/man/*/*", "man keeps formatted pages in its cache"},
	{"nroff", "exec", "groff", "nroff is a groff front end"},
	{"nroff", "exec", "locale", "nroff asks the character map"},
	{"groff", "exec", "troff", "groff's pipeline"},
	{"groff", "exec", "grotty", "groff's pipeline"},
	// top keeps its settings in ~/.config/procps and makes the directory.
	{"top", "write", "$H/.config", "top makes its settings directory"},
	{"top", "write", "$H/.config/procps", "top makes its settings directory"},
}

func (j *jail) isInternal(prog, kind, subject string) bool {
	for _, x := range internal {
		if x.prog == prog && x.kind == kind {
			if ok, _ := path.Match(x.pattern, subject); ok {
				return true
			}
		}
	}
	return false
}

// ignoredWrite reports paths a write to which changes no file: devices,
// the process's own descriptors, and the harness's temp directory.
func (j *jail) ignoredWrite(p string) bool {
	switch {
	case devFiles[p], p == "/dev/full", strings.HasPrefix(p, "/dev/fd/"), strings.HasPrefix(p, "/dev/pts/"),
		strings.HasPrefix(p, "/proc/self/fd/"), pathres.Within(j.tmp, p):
		return true
	}
	return false
}

// wrote marks the world to be restored when the line changed a file in it
// (other than by a program's own bookkeeping, such as git's index).
func (j *jail) wrote(o *observation) {
	j.dirty = j.dirty || slices.ContainsFunc(o.writes, func(a access) bool {
		return a.done && !j.ignoredWrite(a.path) && !j.isInternal(a.prog, "write", j.short(a.path))
	})
}

// compare lists what the line did that the claim leaves out.
func (j *jail) compare(c claim, o *observation) []difference {
	var out []difference
	seen := map[string]bool{}
	add := func(d difference) {
		if !seen[d.key()] {
			seen[d.key()] = true
			out = append(out, d)
		}
	}
	for _, x := range o.execs {
		name := path.Base(x.path)
		if slices.Contains(c.programs, name) || j.isInternal(x.prog, "exec", name) {
			continue
		}
		add(difference{"exec", name, x.prog + " ran " + x.call})
	}
	covers := func(facts []PathFact, p string, whole bool) bool {
		for _, f := range facts {
			fp := factPath(f)
			if fp == p || fp == "" && f.Unknown {
				return true
			}
			if whole && fp != "" && pathres.Within(fp, p) {
				return true
			}
			if f.Recursive && fp != "" && pathres.Within(fp, p) && treeHolds(f, fp, p) {
				return true
			}
		}
		return false
	}
	for _, x := range o.reads {
		if !slices.Contains(j.canaries, x.path) {
			continue
		}
		if covers(c.reads, x.path, false) || covers(c.writes, x.path, true) {
			continue
		}
		add(difference{"read", j.short(x.path), x.prog + " opened " + j.shortCall(x.call)})
	}
	for _, x := range o.writes {
		if j.ignoredWrite(x.path) || covers(c.writes, x.path, true) || j.isInternal(x.prog, "write", j.short(x.path)) {
			continue
		}
		add(difference{"write", j.subject(x.path), x.prog + " called " + j.shortCall(x.call)})
	}
	if bytes.Contains(o.output, []byte(token)) && !slices.ContainsFunc(j.canaries, func(p string) bool { return covers(c.reads, p, false) }) {
		add(difference{"output", "canary token", "the line printed a canary's secret"})
	}
	if !c.network {
		for _, x := range o.connects {
			add(difference{"connect", "inet", x.prog + " called " + x.call})
		}
	}
	return out
}

// treeHolds reports whether a recursive read of the tree at root, as the
// analysis describes it, takes in the file p below it: a walk that leaves
// out hidden names does not reach .env, and one restricted to a name
// pattern only the files that match it.
func treeHolds(f PathFact, root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	if f.skipHidden {
		for _, c := range strings.Split(rel, string(filepath.Separator)) {
			if strings.HasPrefix(c, ".") && c != "." {
				return false
			}
		}
	}
	if f.nameGlob != "" {
		if ok, _ := path.Match(strings.ToLower(f.nameGlob), strings.ToLower(filepath.Base(p))); !ok {
			return false
		}
	}
	return true
}

// escapeLine writes a line on one line of known.txt: "\n", "\t" and "\\"
// as in the suites.
func escapeLine(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(s)
}

// loadKnown reads testdata/reality/known.txt: one known difference a line,
// KIND<TAB>SUBJECT<TAB>LINE<TAB>REASON, the line escaped as in the suites
// (with "\t" for a tab). It returns the entries keyed without the reason.
func loadKnown(t *testing.T) map[string]bool {
	raw, err := os.ReadFile(filepath.Join("testdata", "reality", "known.txt"))
	if os.IsNotExist(err) {
		return map[string]bool{}
	}
	must(t, err)
	known := map[string]bool{}
	for i, ln := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(ln) == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		f := strings.Split(ln, "\t")
		if len(f) != 4 || strings.TrimSpace(f[3]) == "" {
			t.Fatalf("testdata/reality/known.txt:%d: want KIND<TAB>SUBJECT<TAB>LINE<TAB>REASON: %q", i+1, ln)
		}
		known[f[0]+"\t"+f[1]+"\t"+f[2]] = false
	}
	return known
}

// TestRealityJail checks the harness itself: lines run in the jail against
// a claim that they do nothing must show each effect they have.
func TestRealityJail(t *testing.T) {
	if os.Getenv("TOOLGATE_REALITY") != "1" {
		testnote.Skip(t, "reality harness", "TOOLGATE_REALITY is not 1 (needs strace and unshare)", realityRun)
	}
	j := newJail(t)
	for _, tc := range []struct {
		line string
		want []string // difference keys, KIND<TAB>SUBJECT
	}{
		{"cat .env", []string{"exec\tcat", "read\t$P/.env", "output\tcanary token"}},
		{"cat idlink keys/../.aws/credentials out/secret.txt >/dev/null", []string{"exec\tcat", "read\t$H/.ssh/id_rsa", "read\t$H/.aws/credentials", "read\t$D/outside/secret.txt"}},
		{"echo x > out.txt", []string{"write\t$P/out.txt"}},
		{"echo x >> /etc/toolgate-reality", []string{"write\t/etc/toolgate-reality"}},
		{"echo x > /dev/shm/toolgate-reality; echo y > /sys/fs/cgroup/toolgate-reality", []string{"write\t/dev/shm/toolgate-reality", "write\t/sys/fs/cgroup/toolgate-reality"}},
		{"cd src && mkdir newdir && mv newdir n2 && rmdir n2", []string{"exec\tmkdir", "exec\tmv", "exec\trmdir", "write\t$P/src/newdir", "write\t$P/src/n2"}},
		{"ln -s x inner/l; touch out/t", []string{"exec\tln", "exec\ttouch", "write\t$P/src/l", "write\t$D/outside/t"}},
		{"curl -s http://example.com/", []string{"exec\tcurl"}},
		{"ls | sort", []string{"exec\tls", "exec\tsort"}},
		{"exec 3<>/dev/tcp/127.0.0.1/9; echo $(echo x)", []string{"connect\tinet"}},
		{"git status >/dev/null", []string{"exec\tgit"}},
		{"sleep 30", []string{"exec\tsleep"}},
		{"yes", []string{"exec\tyes"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			must(t, j.use(nil))
			start := time.Now()
			obs, out, err := j.run(tc.line, "")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if d := time.Since(start); d > 25*time.Second {
				t.Errorf("the line ran for %s; the jail stops it after %ss (%ss when it had not started)", d, lineLimit, startLimit)
			}
			j.wrote(obs)
			var got []string
			for _, d := range j.compare(claim{}, obs) {
				got = append(got, d.key())
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("differences:\n got %q\nwant %q\noutput: %s", got, want, out)
			}
		})
	}
	// The jail kept the lines' writes outside the harness's directory off
	// the machine.
	for _, p := range []string{"/etc/toolgate-reality", "/dev/shm/toolgate-reality", "/sys/fs/cgroup/toolgate-reality"} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("a line in the jail wrote %s on the machine (%v)", p, err)
		}
	}
	// The world is put back after a line wrote into it.
	must(t, j.use(nil))
	obs, out, err := j.run("echo x > out.txt", "")
	if err != nil {
		t.Fatalf("echo x > out.txt: %v\n%s", err, out)
	}
	j.wrote(obs)
	if !j.dirty {
		t.Fatal("echo x > out.txt did not mark the world as written")
	}
	if _, err := os.Lstat(filepath.Join(j.project, "out.txt")); err != nil {
		t.Fatalf("the line wrote no out.txt: %v", err)
	}
	must(t, j.use(nil))
	if _, err := os.Lstat(filepath.Join(j.project, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("out.txt survived the restore: %v", err)
	}
}
