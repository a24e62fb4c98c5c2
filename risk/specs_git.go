package risk

import "strings"

// git's command line in the spec language of ParseSpecs: the global
// options, then one spec per subcommand. The lists follow git 2.39's
// option tables (the parse-options tables "git <cmd> -h" prints, and the
// hand-written parsers of revision.c and git.c), with a few options of
// later versions.
//
// What the spec decides, and what it leaves out on purpose:
//
//   - An option that names a program to run (--upload-pack, --receive-pack,
//     --exec, rebase -x, grep -O, --exec-path=, and the merge strategy of
//     merge, pull, rebase, cherry-pick and revert, which git runs as the
//     program git-merge-NAME when it is not built in) is kind exec; one whose
//     value is git configuration (-c, --config-env, clone -c) is kind code,
//     since configuration runs programs (core.pager, core.sshCommand,
//     core.fsmonitor, alias.x=!cmd, diff drivers).
//   - A flag cannot carry a kind. --ext-diff (run the external diff
//     driver) is listed: the command analysis reads the line and types it
//     as running a program, which it could not do for an option the spec
//     refuses (an unknown option passes a rule that allows the
//     subcommand). --textconv and cat-file --filters (run textconv and
//     filter drivers), which the analysis does not read, are not listed,
//     so that they ask where no rule allows the subcommand.
//   - Subcommands that run a command given as an operand are not listed:
//     bisect (bisect run), filter-branch, difftool, mergetool; nor
//     maintenance (maintenance start installs a scheduler entry), credential (prints secrets), nor those that read
//     or write a file an operand names outside the repository, which the
//     command analysis does not record: hash-object (hash-object -w copies
//     any file into the object store), merge-file and mailinfo (write
//     their operands), interpret-trailers --in-place, apply --unsafe-paths;
//     nor send-pack, fetch-pack and archive --remote, which reach another
//     repository without being judged a network access.
//     The spec language reads one level of subcommands, so git bisect log
//     asks with bisect run. submodule is listed although submodule
//     foreach runs its operand: the command analysis judges every
//     submodule line a network access, which asks even under a rule that
//     allows git submodule, where an unknown subcommand would pass.
//   - git's global options take no abbreviations (git.c compares them in
//     full), nor do the options of the revision and diff machinery (log,
//     show, diff, rev-list, format-patch: their parse-options run with
//     unknown options kept, which turns abbreviations off). Commands
//     parsed by parse-options alone accept unambiguous prefixes and the
//     negation --no-OPT of every long option, which gitSpec adds.

// gitGlobal is the spec of git itself: the options before the subcommand.
// --git-dir and --work-tree name a repository other than the project's,
// whose configuration (core.fsmonitor, diff.external, a pager) can run
// programs: they are code. -C is a directory; the engine asks when the
// repository git finds from there is not the project's.
const gitGlobal = `
git: @noabbrev -C=dir -c=code --git-dir=code --work-tree=code --namespace=inert --exec-path?=exec
  -p|--paginate -P|--no-pager --no-replace-objects --bare --literal-pathspecs --no-literal-pathspecs
  --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --config-env=code
  --list-cmds=inert --attr-source=inert --no-advice -v|--version -h|--help --html-path --man-path
  --info-path
`

// gitRevDiffOptions are the options of git's revision walk and of its diff
// machinery, as git log accepts them: log, show, whatchanged, diff,
// rev-list, the diff-* plumbing, format-patch, shortlog, blame, reflog
// and stash list/show share them. --output writes its file; --ext-diff
// is listed for the command analysis to type; --textconv is left out (it
// runs configured programs).
const gitRevDiffOptions = `
  @numeric @noabbrev -n=inert -p|-u|--patch -s|--no-patch -U|--unified?=inert -W|--function-context -z
  -l=inert -O=read -S=inert -G=pat -X|--dirstat?=inert -B|--break-rewrites?=inert
  -M|--find-renames?=inert -C|--find-copies?=inert -D|--irreversible-delete -R -a|--text
  -b|--ignore-space-change -w|--ignore-all-space -I|--ignore-matching-lines=pat -g|--walk-reflogs -r
  -t -m -c -v -i|--regexp-ignore-case -E|--extended-regexp -F|--fixed-strings -P|--perl-regexp
  -q|--quiet -L=inert -h
  --abbrev?=inert --abbrev-commit --after=inert --all --all-match --alternate-refs --always
  --ancestry-path?=inert --anchored=inert --author=pat --author-date-order --basic-regexp
  --before=inert --binary --bisect --boundary --branches?=pat --cc --check
  --cherry --cherry-mark --cherry-pick --children --clear-decorations --color?=inert
  --color-moved?=inert --color-moved-ws=inert --color-words?=pat --combined-all-paths
  --committer=pat --compact-summary --count --cumulative --date=inert --date-order --decorate?=inert
  --decorate-refs=pat --decorate-refs-exclude=pat --default=inert --dense --diff-algorithm=inert
  --diff-filter=inert --diff-merges=inert --dirstat-by-file?=inert --do-walk
  --dst-prefix=inert --early-output?=inert --encode-email-headers --encoding=inert --exclude=pat
  --exclude-first-parent-only --exclude-hidden=inert --exit-code --expand-tabs?=inert
  --filter?=inert --find-copies-harder --find-object=inert
  --first-parent --follow --format?=inert --full-diff --full-history --full-index --glob=pat
  --graph --grep=pat --grep-reflog=pat --histogram --ignore-blank-lines --ignore-cr-at-eol
  --ignore-missing --ignore-space-at-eol --ignore-submodules?=inert --in-commit-order
  --indent-heuristic --indexed-objects --inter-hunk-context=inert --invert-grep
  --ita-invisible-in-index --ita-visible-in-index --left-only --left-right --line-prefix=inert --ext-diff
  --log-size --mailmap --max-age=inert --max-count=inert --max-parents?=inert --merge --merges
  --min-age=inert --min-parents?=inert --minimal --name-only --name-status --no-abbrev
  --no-abbrev-commit --no-color --no-color-moved --no-color-moved-ws --no-commit-id
  --no-compact-summary --no-decorate --no-decorate-refs --no-decorate-refs-exclude --no-diff-merges
  --no-encode-email-headers --no-exit-code --no-expand-tabs --no-ext-diff --no-filter
  --no-find-copies --no-find-copies-harder --no-follow --no-full-index --no-function-context
  --no-graph --no-ignore-matching-lines --no-indent --no-indent-heuristic --no-kept-objects?=inert
  --no-mailmap --no-max-parents --no-merges --no-min-parents --no-minimal --no-notes
  --no-prefix --no-quiet --no-relative --no-rename-empty --no-renames --no-show-signature
  --no-source --no-standard-notes --no-text --no-textconv --no-use-mailmap --no-walk?=inert --not
  --notes?=inert --numstat --objects --objects-edge --objects-edge-aggressive --oneline
  --output=write --output-indicator-context=inert --output-indicator-new=inert
  --output-indicator-old=inert --parents --patch-with-raw --patch-with-stat --patience
  --pickaxe-all --pickaxe-regex --pretty?=inert --raw --reflog --relative?=inert --relative-date
  --remerge-diff --remotes?=pat --remove-empty --rename-empty --reverse --right-only --root
  --rotate-to=inert --shortstat --show-linear-break?=inert --show-notes?=inert --show-pulls
  --show-signature --simplify-by-decoration --simplify-merges --since=inert --since-as-filter=inert
  --single-worktree --skip=inert --skip-to=inert --source --sparse --src-prefix=inert
  --standard-notes --stat?=inert --stat-count=inert --stat-graph-width=inert --stat-name-width=inert
  --stat-width=inert --stdin --submodule?=inert --summary --tags?=pat --topo-order --unpacked?=inert
  --until=inert --use-mailmap --verify-objects --word-diff?=inert --word-diff-regex=pat
  --ws-error-highlight=inert --end-of-options
`

// gitDiffOnlyOptions are the options git diff and the diff-* plumbing add
// to the shared ones.
const gitDiffOnlyOptions = `
  --cached --staged --no-index --merge-base -0 -1|--base -2|--ours -3|--theirs
`

// gitRevListOptions are rev-list's own options.
const gitRevListOptions = `
  --header --timestamp --bisect-vars --bisect-all --object-names --no-object-names --missing=inert
  --disk-usage?=inert --filter-provided-objects --filter-print-omitted --exclude-promisor-objects
  --use-bitmap-index --test-bitmap --progress=inert --unsorted-input --commit-header --no-commit-header
`

// gitSubcommands are git's subcommands. Each is an entry of the spec
// language; shared lists the option sets appended after the entry's own
// options (an option the entry spells itself keeps its meaning); negate
// adds the --no-OPT form of every long option (and --OPT of --no-OPT), as
// parse-options does.
var gitSubcommands = []struct {
	text   string
	negate bool
	shared []string
}{
	// Reading: the work tree, the index, history.
	{text: `status: -v|--verbose -s|--short -b|--branch --show-stash --ahead-behind --porcelain?=inert
  --long -z|--null -u|--untracked-files?=inert --ignored?=inert --ignore-submodules?=inert
  --column?=inert --no-renames -M|--find-renames?=inert -h`, negate: true},
	{text: `log: --source --use-mailmap --decorate-refs=pat --decorate-refs-exclude=pat --decorate?=inert
  -L=inert --clear-decorations`, shared: []string{gitRevDiffOptions}},
	{text: `show:`, shared: []string{gitRevDiffOptions}},
	{text: `whatchanged:`, shared: []string{gitRevDiffOptions}},
	{text: `diff:`, shared: []string{gitDiffOnlyOptions, gitRevDiffOptions}},
	{text: `diff-tree: --stdin -r -t --root --merge-base -m -s -v --no-commit-id --always -c --cc`,
		shared: []string{gitDiffOnlyOptions, gitRevDiffOptions}},
	{text: `diff-index: --cached --merge-base -m`, shared: []string{gitDiffOnlyOptions, gitRevDiffOptions}},
	{text: `diff-files: -q -0 -1|--base -2|--ours -3|--theirs -c --cc`, shared: []string{gitRevDiffOptions}},
	{text: `rev-list:`, shared: []string{gitRevListOptions, gitRevDiffOptions}},
	{text: `shortlog: -c|--committer -n|--numbered -s|--summary -e|--email -w?=inert --group=inert
  --format=inert`, negate: true, shared: []string{gitRevDiffOptions}},
	{text: `blame annotate: --incremental -b --root --show-stats --progress --no-progress --score-debug
  -f|--show-name -n|--show-number -p|--porcelain --line-porcelain -c -t -l -s -e|--show-email -w
  --ignore-rev=inert --ignore-revs-file=read --color-lines --color-by-age --minimal -S=read
  --contents=read -C?=inert -M?=inert -L=inert --abbrev?=inert --date=inert --reverse --first-parent
  --encoding=inert --since=inert --no-ignore-revs-file`, negate: true, shared: []string{gitRevDiffOptions}},
	{text: `grep: --cached --no-index --untracked --exclude-standard --recurse-submodules -v|--invert-match
  -i|--ignore-case -w|--word-regexp -a|--text -I -r|--recursive --max-depth=inert
  -E|--extended-regexp -G|--basic-regexp -F|--fixed-strings -P|--perl-regexp -n|--line-number
  --column -h -H --full-name -l|--files-with-matches --name-only -L|--files-without-match -z|--null
  -o|--only-matching -c|--count --color?=inert --break --heading -C|--context=inert
  -B|--before-context=inert -A|--after-context=inert --threads=inert @numeric -p|--show-function
  -W|--function-context -f=read -e=pat --and --or --not -q|--quiet --all-match
  -O|--open-files-in-pager?=exec --ext-grep -m|--max-count=inert --end-of-options --no-textconv`,
		negate: true},
	{text: `branch: -v|--verbose -q|--quiet -t|--track?=inert --set-upstream -u|--set-upstream-to=inert
  --unset-upstream --color?=inert -r|--remotes --contains=inert --no-contains=inert --with=inert
  --without=inert --abbrev?=inert -a|--all -d|--delete -D -m|--move -M -c|--copy -C -l|--list
  --show-current --create-reflog --edit-description -f|--force --merged=inert --no-merged=inert
  --column?=inert --sort=inert --points-at=inert -i|--ignore-case --recurse-submodules
  --format=inert --omit-empty -h`, negate: true},
	{text: `tag: -l|--list -n?=inert -d|--delete -v|--verify -a|--annotate -m|--message=inert -F|--file=read
  -e|--edit -s|--sign --cleanup=inert -u|--local-user=inert -f|--force --create-reflog
  --column?=inert --contains=inert --no-contains=inert --with=inert --without=inert --merged=inert
  --no-merged=inert --sort=inert --points-at=inert --format=inert --color?=inert -i|--ignore-case
  --trailer=inert --omit-empty -h`, negate: true},
	{text: `describe: --contains --debug --all --tags --long --first-parent --abbrev?=inert --exact-match
  --candidates=inert --match=pat --exclude=pat --always --dirty?=inert --broken?=inert -h`, negate: true},
	{text: `reflog: --expire=inert --expire-unreachable=inert --rewrite --updateref --stale-fix
  -n|--dry-run --verbose --all --single-worktree`, negate: true, shared: []string{gitRevDiffOptions}},
	{text: `rev-parse: @noabbrev --parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long
  --revs-only --no-revs --flags --no-flags --default=inert --prefix=inert --verify -q|--quiet --sq
  --short?=inert --not --abbrev-ref?=inert --symbolic --symbolic-full-name --all --branches?=pat
  --tags?=pat --remotes?=pat --glob=pat --exclude=pat --exclude-hidden=inert --disambiguate=inert
  --local-env-vars --path-format=inert --git-dir --git-common-dir --resolve-git-dir=inert
  --git-path=inert --show-toplevel --show-superproject-working-tree --shared-index-path
  --absolute-git-dir --is-inside-git-dir --is-inside-work-tree --is-bare-repository
  --is-shallow-repository --show-cdup --show-prefix --show-object-format?=inert --show-ref-format
  --since=inert --after=inert --until=inert --before=inert --end-of-options -h`},
	{text: `ls-files: -z -t -v -f -c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage
  -k|--killed --directory --eol --empty-directory -u|--unmerged --resolve-undo -x|--exclude=pat
  -X|--exclude-from=read --exclude-per-directory=inert --exclude-standard --full-name
  --recurse-submodules --error-unmatch --with-tree=inert --abbrev?=inert --debug --deduplicate
  --sparse --format=inert -h`, negate: true},
	{text: `ls-tree: -d -r -t -z -l|--long --name-only --name-status --object-only --full-name --full-tree
  --format=inert --abbrev?=inert -h`, negate: true},
	{text: `ls-remote: -q|--quiet --upload-pack=exec --exec=exec -t|--tags --heads --branches --refs
  --get-url --sort=inert --exit-code --symref -o|--server-option=inert -h`, negate: true},
	{text: `cat-file: -e -p -t -s --allow-unknown-type --use-mailmap --mailmap --batch?=inert
  --batch-check?=inert -z -Z --batch-command?=inert --batch-all-objects --buffer --follow-symlinks
  --unordered --path=inert -h`, negate: true},
	{text: `show-ref: --tags --heads --branches --verify --head -d|--dereference -s|--hash?=inert
  --abbrev?=inert -q|--quiet --exclude-existing?=pat --exists -h`, negate: true},
	{text: `for-each-ref: -s|--shell -p|--perl --python --tcl --count=inert --format=inert --color?=inert
  --sort=inert --points-at=inert --merged=inert --no-merged=inert --contains=inert
  --no-contains=inert --ignore-case --omit-empty --exclude=pat --stdin -h`, negate: true},
	{text: `name-rev: --name-only --tags --refs=pat --exclude=pat --all --stdin --annotate-stdin --undefined
  --always --peel-tag -h`, negate: true},
	{text: `merge-base: -a|--all --octopus --independent --is-ancestor --fork-point -h`, negate: true},
	{text: `show-branch: -a|--all -r|--remotes --color?=inert --more?=inert --list --no-name --current
  --sha1-name --merge-base --independent --topo-order --topics --sparse --date-order
  -g|--reflog?=inert -h`, negate: true},
	{text: `cherry: --abbrev?=inert -v|--verbose -h`, negate: true},
	{text: `range-diff: --creation-factor=inert --dual-color --no-dual-color --notes?=inert --left-only --right-only
  -p|--patch -s|--no-patch -u -U|--unified?=inert -W|--function-context --raw --patch-with-raw
  --patch-with-stat --numstat --shortstat -X|--dirstat?=inert --cumulative --dirstat-by-file?=inert
  --check --summary --name-only --name-status --stat?=inert --stat-width=inert
  --stat-name-width=inert --stat-graph-width=inert --stat-count=inert --compact-summary --binary
  --full-index --color?=inert --no-color --ws-error-highlight=inert -z --abbrev?=inert
  --src-prefix=inert --dst-prefix=inert --line-prefix=inert --no-prefix --inter-hunk-context=inert
  --output-indicator-new=inert --output-indicator-old=inert --output-indicator-context=inert
  -M|--find-renames?=inert -D|--irreversible-delete -C|--find-copies?=inert --find-copies-harder
  --no-renames --rename-empty --follow -l=inert --minimal -w|--ignore-all-space
  -b|--ignore-space-change --ignore-space-at-eol --ignore-cr-at-eol --ignore-blank-lines
  -I|--ignore-matching-lines=pat --indent-heuristic --patience --histogram --diff-algorithm=inert
  --anchored=inert --word-diff?=inert --word-diff-regex=pat --color-words?=pat --color-moved?=inert
  --color-moved-ws=inert --relative?=inert -a|--text -R --exit-code --quiet --ext-diff --no-ext-diff
  --no-textconv --ignore-submodules?=inert --submodule?=inert --ita-invisible-in-index
  --ita-visible-in-index -S=inert -G=pat --pickaxe-all --pickaxe-regex -O=read --rotate-to=inert
  --skip-to=inert --find-object=inert --diff-filter=inert --output=write -B|--break-rewrites?=inert
  --diff-merges=inert --remerge-diff @noabbrev -h`, negate: true},
	{text: `config: --global --system --local --worktree -f|--file=read --blob=inert --get --get-all
  --get-regexp --get-urlmatch --replace-all --add --unset --unset-all --rename-section
  --remove-section -l|--list --fixed-value -e|--edit --get-color --get-colorbool -t|--type=inert
  --bool --int --bool-or-int --bool-or-str --path --expiry-date -z|--null --name-only
  --show-origin --show-scope --default=inert --all --regexp --value=pat --url=inert --show-names
  --comment=inert --append -h`, negate: true},
	{text: `remote: -v|--verbose -t|--track=inert -m|--master=inert -f|--fetch --tags --mirror?=inert --progress -a|--auto
  -d|--delete -n|--dry-run -p|--prune --add --push --all -h`, negate: true},
	{text: `stash: -p|--patch -S|--staged -k|--keep-index -q|--quiet -u|--include-untracked --only-untracked
  -a|--all -m --message=inert --pathspec-from-file=read --pathspec-file-nul --index -h`,
		negate: true, shared: []string{gitRevDiffOptions}},
	{text: `worktree: -f|--force --detach --checkout --lock --reason=inert -b=inert -B=inert --orphan
  --track --guess-remote --relative-paths -q|--quiet -v|--verbose --porcelain -z -n|--dry-run
  --expire=inert -h`, negate: true},
	{text: `count-objects: -v|--verbose -H|--human-readable -h`, negate: true},
	{text: `help: -a|--all --external-commands --aliases --exclude-guides
  -v|--verbose -g|--guides --user-interfaces --developer-interfaces -c|--config -h`, negate: true},
	{text: `version: --build-options -h`, negate: true},
	{text: `check-ignore: -q|--quiet -v|--verbose --stdin -z -n|--non-matching --no-index -h`, negate: true},
	{text: `check-attr: -a|--all --cached --stdin -z --source=inert -h`, negate: true},
	{text: `check-mailmap: --stdin --mailmap-file=read --mailmap-blob=inert -h`, negate: true},
	{text: `check-ref-format: --normalize --allow-onelevel --no-allow-onelevel --refspec-pattern --branch -h`},
	{text: `var: -l -h`},
	{text: `verify-commit: -v|--verbose --raw -h`, negate: true},
	{text: `verify-tag: -v|--verbose --raw --format=inert -h`, negate: true},
	{text: `verify-pack: -v|--verbose -s|--stat-only --object-format=inert -h`, negate: true},
	{text: `patch-id: --unstable --stable --verbatim -h`, negate: true},
	{text: `stripspace: -s|--strip-comments -c|--comment-lines -h`, negate: true},
	{text: `column: --command=inert --mode?=inert --raw-mode=inert --width=inert --indent=inert --nl=inert
  --padding=inert -h`, negate: true},
	{text: `interpret-trailers: --trim-empty --where=inert --if-exists=inert --if-missing=inert
  --only-trailers --only-input --unfold --parse --no-divider --trailer=inert -h`, negate: true},
	{text: `get-tar-commit-id: -h`},
	{text: `fmt-merge-msg: --log?=inert --summary?=inert -m|--message=inert --into-name=inert -F|--file=read
  -h`, negate: true},

	// Writing: the work tree, the index, refs, history.
	{text: `add: -n|--dry-run -v|--verbose -i|--interactive -p|--patch -e|--edit -f|--force -u|--update
  --renormalize -N|--intent-to-add -A|--all --ignore-removal --refresh --ignore-errors
  --ignore-missing --sparse --chmod=inert --warn-embedded-repo --pathspec-from-file=read
  --pathspec-file-nul --end-of-options -h`, negate: true},
	{text: `commit: -q|--quiet -v|--verbose -F|--file=read --author=inert --date=inert -m|--message=inert
  -c|--reedit-message=inert -C|--reuse-message=inert --fixup=inert --squash=inert --reset-author
  --trailer=inert -s|--signoff -t|--template=read -e|--edit --cleanup=inert --status
  -S|--gpg-sign?=inert -a|--all -i|--include --interactive -p|--patch -o|--only -n|--no-verify
  --dry-run --short --branch --ahead-behind --porcelain --long -z|--null --amend --no-post-rewrite
  -u|--untracked-files?=inert --pathspec-from-file=read --pathspec-file-nul --allow-empty
  --allow-empty-message --end-of-options -h`, negate: true},
	{text: `checkout: -b=inert -B=inert -l --guess --overlay -q|--quiet --recurse-submodules?=inert
  --progress -m|--merge --conflict=inert -d|--detach -t|--track?=inert -f|--force --orphan=inert
  --overwrite-ignore --ignore-other-worktrees -2|--ours -3|--theirs -p|--patch
  --ignore-skip-worktree-bits --pathspec-from-file=read --pathspec-file-nul -h`, negate: true},
	{text: `switch: -c|--create=inert -C|--force-create=inert --guess --discard-changes -q|--quiet
  --recurse-submodules?=inert --progress -m|--merge --conflict=inert -d|--detach -t|--track?=inert
  -f|--force --orphan=inert --overwrite-ignore --ignore-other-worktrees -h`, negate: true},
	{text: `restore: -s|--source=inert -S|--staged -W|--worktree --ignore-unmerged --overlay -q|--quiet
  --recurse-submodules?=inert --progress -m|--merge --conflict=inert -2|--ours -3|--theirs
  -p|--patch --ignore-skip-worktree-bits --pathspec-from-file=read --pathspec-file-nul -h`, negate: true},
	{text: `reset: -q|--quiet --refresh --mixed --soft --hard --merge --keep --recurse-submodules?=inert
  -p|--patch -N|--intent-to-add --pathspec-from-file=read --pathspec-file-nul -h`, negate: true},
	{text: `rm: -n|--dry-run -q|--quiet --cached -f|--force -r --ignore-unmatch --sparse
  --pathspec-from-file=read --pathspec-file-nul -h`, negate: true},
	{text: `mv: -v|--verbose -n|--dry-run -f|--force -k --sparse -h`, negate: true},
	{text: `clean: -q|--quiet -n|--dry-run -f|--force -i|--interactive -d -e|--exclude=pat -x -X -h`, negate: true},
	{text: `merge: -n --stat --summary --log?=inert --squash --commit -e|--edit --cleanup=inert --ff
  --ff-only --rerere-autoupdate --verify-signatures -s|--strategy=exec -X|--strategy-option=inert
  -m|--message=inert -F|--file=read --into-name=inert -v|--verbose -q|--quiet --abort --quit
  --continue --allow-unrelated-histories --progress -S|--gpg-sign?=inert --autostash
  --overwrite-ignore --signoff --no-verify -h`, negate: true},
	{text: `rebase: --onto=inert --keep-base --no-verify -q|--quiet -v|--verbose -n|--no-stat --stat
  --signoff --committer-date-is-author-date --reset-author-date --ignore-date -C=inert
  --ignore-whitespace --whitespace=inert -f|--force-rebase --no-ff --continue --skip --abort --quit
  --edit-todo --show-current-patch --apply -m|--merge -i|--interactive --rerere-autoupdate
  --empty=inert -k|--keep-empty --autosquash --update-refs -S|--gpg-sign?=inert --autostash
  -x|--exec=exec --allow-empty-message -r|--rebase-merges?=inert --fork-point -s|--strategy=exec
  -X|--strategy-option=inert --root --reschedule-failed-exec --reapply-cherry-picks -h`, negate: true},
	{text: `cherry-pick: --quit --continue --abort --skip --cleanup=inert -n|--no-commit -e|--edit -r
  -s|--signoff -m|--mainline=inert --rerere-autoupdate --strategy=exec -X|--strategy-option=inert
  -S|--gpg-sign?=inert -x --ff --allow-empty --allow-empty-message --keep-redundant-commits
  --empty=inert -h`, negate: true},
	{text: `revert: --quit --continue --abort --skip --cleanup=inert -n|--no-commit -e|--edit -r
  -s|--signoff -m|--mainline=inert --rerere-autoupdate --strategy=exec -X|--strategy-option=inert
  -S|--gpg-sign?=inert --reference -h`, negate: true},
	{text: `am: -i|--interactive -b|--binary -3|--3way -q|--quiet -s|--signoff -u|--utf8 -k|--keep
  --keep-non-patch -m|--message-id --keep-cr -c|--scissors --quoted-cr=inert --whitespace=inert
  --ignore-space-change --ignore-whitespace --directory=inert --exclude=pat --include=pat -C=inert
  -p=inert --patch-format=inert --reject --resolvemsg=inert --continue -r|--resolved --skip --abort
  --quit --show-current-patch?=inert --allow-empty --committer-date-is-author-date --ignore-date
  --rerere-autoupdate -S|--gpg-sign?=inert --empty=inert -h`, negate: true},
	{text: `apply: --exclude=pat --include=pat -p=inert --no-add --stat --allow-binary-replacement --binary
  --numstat --summary --check --index -N|--intent-to-add --cached --apply -3|--3way
  --build-fake-ancestor=write -z -C=inert --whitespace=inert --ignore-space-change
  --ignore-whitespace -R|--reverse --unidiff-zero --reject --allow-overlap -v|--verbose -q|--quiet
  --inaccurate-eof --recount --directory=inert --allow-empty -h`, negate: true},
	{text: `format-patch: -n|--numbered -N|--no-numbered -s|--signoff --stdout --cover-letter
  --numbered-files --suffix=inert --start-number=inert -v|--reroll-count=inert
  --filename-max-length=inert --rfc?=inert --cover-from-description=inert --subject-prefix=inert
  -o|--output-directory=write -k|--keep-subject --no-binary --zero-commit --ignore-if-in-upstream
  -p|--no-stat --add-header=inert --to=inert --cc=inert --from?=inert --in-reply-to=inert
  --attach?=inert --inline?=inert --thread?=inert --signature=inert --base=inert
  --signature-file=read -q|--quiet --progress --interdiff=inert --range-diff=inert
  --creation-factor=inert --force-in-body-from --no-to --no-cc --no-add-header --no-attach
  --no-thread --no-signature --no-cover-letter --no-force-in-body-from --no-from`,
		negate: true, shared: []string{gitRevDiffOptions}},
	{text: `notes: --ref=inert -f|--force -m|--message=inert -F|--file=read -c|--reedit-message=inert
  -C|--reuse-message=inert --allow-empty --separator?=inert --stripspace -e|--edit --stdin
  --for-rewrite=inert -s|--strategy=inert --commit --abort -v|--verbose -q|--quiet
  --ignore-missing -n|--dry-run -h`, negate: true},
	{text: `submodule: @noabbrev --quiet -q --cached -b|--branch=inert -f|--force --name=inert
  --reference=dir --dissociate --depth=inert --progress --recursive --all --init --remote
  -N|--no-fetch --recommend-shallow --no-recommend-shallow --checkout --rebase --merge
  -j|--jobs=inert --single-branch --no-single-branch --filter=inert -d|--default --files
  -n|--summary-limit=inert --for-status --recurse-submodules -h`},
	{text: `sparse-checkout: --cone --sparse-index --stdin --skip-checks -h`, negate: true},
	{text: `gc: -q|--quiet --prune?=inert --cruft --aggressive --auto --force --keep-largest-pack
  --detach -h`, negate: true},
	{text: `prune: -n|--dry-run -v|--verbose --progress --expire=inert --exclude-promisor-objects -h`, negate: true},
	{text: `fsck: -v|--verbose --unreachable --dangling --tags --root --cache --reflogs --full
  --connectivity-only --strict --lost-found --progress --name-objects --references -h`, negate: true},
	{text: `pack-refs: --all --prune --auto --include=pat --exclude=pat -h`, negate: true},
	{text: `repack: -a -A --cruft --cruft-expiration=inert -d -f -F -n -q|--quiet -l|--local
  -b|--write-bitmap-index -i|--delta-islands --unpack-unreachable=inert -k|--keep-unreachable
  --window=inert --window-memory=inert --depth=inert --threads=inert --max-pack-size=inert
  --pack-kept-objects --keep-pack=inert -g|--geometric=inert -m|--write-midx --expire-to=write -h`, negate: true},
	{text: `replace: -l|--list -d|--delete -e|--edit -g|--graft --convert-graft-file -f|--force --raw
  --format=inert -h`, negate: true},
	{text: `rerere: --rerere-autoupdate -h`, negate: true},
	{text: `archive: --format=inert --prefix=inert --add-file=read --add-virtual-file=inert
  -o|--output=write --worktree-attributes -v|--verbose @numeric -l|--list --exec=exec
  --mtime=inert -h`, negate: true},
	{text: `bundle: -q|--quiet --progress --all-progress --all-progress-implied --version=inert
  --stdin -h`, negate: true, shared: []string{gitRevDiffOptions}},
	{text: `init: --template=exec --bare --shared?=inert -q|--quiet --separate-git-dir=write
  -b|--initial-branch=inert --object-format=inert --ref-format=inert -h`, negate: true},
	{text: `symbolic-ref: -q|--quiet -d|--delete --short --recurse -m=inert -h`, negate: true},
	{text: `update-ref: -m=inert -d --no-deref -z --stdin --create-reflog -h`, negate: true},
	{text: `update-index: -q --ignore-submodules --add --replace --remove --unmerged --refresh
  --really-refresh --cacheinfo --chmod=inert --assume-unchanged --no-assume-unchanged
  --skip-worktree --no-skip-worktree --ignore-skip-worktree-entries --info-only --force-remove -z
  --stdin --index-info --unresolve -g|--again --ignore-missing --verbose --clear-resolve-undo
  --index-version=inert --split-index --untracked-cache --test-untracked-cache
  --force-untracked-cache --force-write-index --fsmonitor --fsmonitor-valid --no-fsmonitor-valid -h`,
		negate: true},
	{text: `read-tree: --index-output=write --empty -v|--verbose -m --trivial --aggressive --reset
  --prefix=inert -u --exclude-per-directory=inert -i -n|--dry-run --no-sparse-checkout
  --recurse-submodules?=inert -q|--quiet --debug-unpack -h`, negate: true},
	{text: `write-tree: --missing-ok --prefix=inert --ignore-cache-tree -h`, negate: true},
	{text: `checkout-index: -a|--all --ignore-skip-worktree-bits -f|--force -q|--quiet -n|--no-create
  -u|--index -z --stdin --temp --prefix=write --stage=inert -h`, negate: true},
	{text: `commit-tree: -p=inert -m=inert -F=read -S|--gpg-sign?=inert -h`, negate: true},
	{text: `merge-tree: --write-tree --trivial-merge --messages -z --name-only --allow-unrelated-histories
  --stdin --merge-base=inert -X|--strategy-option=inert -h`, negate: true},
	{text: `mktree: -z --missing --batch -h`, negate: true},

	// Talking to other repositories: the network effect is judged by the
	// command analysis; the spec types the programs they may run.
	// send-pack, fetch-pack and archive --remote, which that analysis
	// does not judge a network access, are not listed.
	{text: `fetch: -v|--verbose -q|--quiet --all --set-upstream -a|--append --atomic --upload-pack=exec
  -f|--force -m|--multiple -t|--tags -n -j|--jobs=inert --prefetch -p|--prune -P|--prune-tags
  --recurse-submodules?=inert --dry-run --porcelain --write-fetch-head -k|--keep -u|--update-head-ok
  --progress --depth=inert --shallow-since=inert --shallow-exclude=inert --deepen=inert --unshallow
  --refetch --submodule-prefix=inert --recurse-submodules-default=inert --update-shallow
  --refmap=inert -o|--server-option=inert -4|--ipv4 -6|--ipv6 --negotiation-tip=inert
  --negotiate-only --filter=inert --auto-maintenance --auto-gc --show-forced-updates
  --write-commit-graph --stdin -h`, negate: true},
	{text: `pull: -v|--verbose -q|--quiet --progress --recurse-submodules?=inert -r|--rebase?=inert -n
  --stat --summary --log?=inert --signoff?=inert --squash --commit --edit --cleanup=inert --ff
  --ff-only --verify --verify-signatures --autostash -s|--strategy=exec -X|--strategy-option=inert
  -S|--gpg-sign?=inert --allow-unrelated-histories --all -a|--append --upload-pack=exec -f|--force
  -t|--tags -p|--prune -j|--jobs?=inert --dry-run -k|--keep --depth=inert --shallow-since=inert
  --shallow-exclude=inert --deepen=inert --unshallow --update-shallow --refmap=inert
  -o|--server-option=inert -4|--ipv4 -6|--ipv6 --negotiation-tip=inert --show-forced-updates
  --set-upstream -h`, negate: true},
	{text: `push: -v|--verbose -q|--quiet --repo=inert --all --branches --mirror -d|--delete --tags
  -n|--dry-run --porcelain -f|--force --force-with-lease?=inert --force-if-includes
  --recurse-submodules=inert --thin --receive-pack=exec --exec=exec -u|--set-upstream --progress
  --prune --no-verify --follow-tags --signed?=inert --atomic -o|--push-option=inert -4|--ipv4
  -6|--ipv6 -h`, negate: true},
	{text: `clone: -v|--verbose -q|--quiet --progress --reject-shallow -n|--no-checkout --bare --naked
  --mirror -l|--local --no-hardlinks -s|--shared --recurse-submodules?=inert --recursive?=inert
  -j|--jobs=inert --template=exec --reference=dir --reference-if-able=dir --dissociate
  -o|--origin=inert -b|--branch=inert -u|--upload-pack=exec --depth=inert --shallow-since=inert
  --shallow-exclude=inert --single-branch --no-tags --shallow-submodules --separate-git-dir=write
  -c|--config=code --server-option=inert -4|--ipv4 -6|--ipv6 --filter=inert
  --also-filter-submodules --remote-submodules --sparse --bundle-uri=inert --revision=inert -h`,
		negate: true},
}

// gitNeverNegated are the spellings a negation must not add: the flags
// that run configured programs and are not listed (--no-textconv is; its
// opposite --textconv is not), and --ext-diff, listed where it is meant.
var gitNeverNegated = map[string]bool{"--ext-diff": true, "--textconv": true, "--filters": true}

// gitSpec returns one subcommand's entry in the spec language: its own
// options, then the options of shared that the entry does not spell
// itself, then, when negate is set, the negations of its own long options
// that neither spells.
func gitSpec(text string, negate bool, shared ...string) string {
	head, body, _ := strings.Cut(text, ":")
	seen := map[string]bool{}
	var toks []string
	add := func(tok string) {
		if strings.HasPrefix(tok, "@") {
			if !seen[tok] {
				seen[tok] = true
				toks = append(toks, tok)
			}
			return
		}
		names, kind, hasKind := strings.Cut(tok, "=")
		names, optional := strings.CutSuffix(names, "?")
		var keep []string
		for _, n := range strings.Split(names, "|") {
			if !seen[n] {
				seen[n] = true
				keep = append(keep, n)
			}
		}
		if len(keep) == 0 {
			return
		}
		t := strings.Join(keep, "|")
		if hasKind {
			if optional {
				t += "?"
			}
			t += "=" + kind
		}
		toks = append(toks, t)
	}
	own := strings.Fields(body)
	for _, t := range own {
		add(t)
	}
	for _, sh := range shared {
		for _, t := range strings.Fields(sh) {
			add(t)
		}
	}
	if negate {
		for _, t := range own {
			names, _, _ := strings.Cut(t, "=")
			for _, n := range strings.Split(strings.TrimSuffix(names, "?"), "|") {
				var neg string
				switch {
				case strings.HasPrefix(n, "--no-"):
					neg = "--" + n[len("--no-"):]
				case strings.HasPrefix(n, "--"):
					neg = "--no-" + n[len("--"):]
				}
				if neg != "" && !gitNeverNegated[neg] {
					add(neg)
				}
			}
		}
	}
	return head + ": " + strings.Join(toks, " ") + "\n"
}

func init() {
	specSources = append(specSources, specSource{"git", gitGlobal})
}

// gitSubcommandSources returns the tables of git's subcommands, one per
// entry of gitSubcommands, each written by gitSpec at its first use.
func gitSubcommandSources() []subcommandSource {
	out := make([]subcommandSource, 0, len(gitSubcommands))
	for _, s := range gitSubcommands {
		head, _, _ := strings.Cut(s.text, ":")
		names := strings.Fields(head)
		out = append(out, subcommandSource{name: "git " + names[0], program: "git", names: names,
			build: func() string { return gitSpec(s.text, s.negate, s.shared...) }})
	}
	return out
}
