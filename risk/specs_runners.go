package risk

import "strings"

// The build and test runners, package managers, ssh and rsync in the spec
// language of ParseSpecs: the subcommands and options a project's build
// and tests use, from the programs' own documentation (npm 11, yarn 1 and
// 4, pnpm 9, bun 1, cargo 1.8x, GNU make 4.4, pytest 8, OpenSSH 9, rsync
// 3.2). Every option not listed makes the command unknown, so that a rule
// that allows npm test or cargo test does not allow an option nobody
// listed.
//
// What the tables decide:
//
//   - Options that remove a directory they name are not listed (pytest
//     --basetemp, cargo clean --target-dir), nor those that copy files
//     the words do not name: rsync --files-from (a list read from a
//     file), -L and --copy-links (the files links lead to), scp -T (names
//     the other side chooses), nor rsync -F, whose .rsync-filter files
//     may merge rules from any file, which an error then quotes.
//   - Options that name a program, a shell, a wrapper, a plugin or
//     configuration that may name one are not listed (npm --script-shell,
//     --node-options, --userconfig; cargo --config and -Z; make --eval;
//     pytest -c, -o, --pyargs, --rootdir; ssh -F, -I, -J; scp -S), nor
//     those that run another package's scripts (npm --prefix, -w,
//     --workspace; pnpm -C, --filter, -r; yarn --cwd), nor global
//     installs (npm -g).
//   - Abbreviations: make takes getopt_long's unambiguous prefixes, read
//     against make's whole option set (the options it has and the spec
//     does not allow are listed with "!"), so that --ev (--eval) is
//     unknown, never a safe option. npm and pnpm read their options with
//     nopt, which also reads a long word as a shorthand (--c is --call,
//     --ws is --workspaces) and strips any number of "no-" before
//     matching, over a set of keys that changes between versions; pytest
//     reads options with argparse, whose set grows with every plugin
//     installed: for these only the full spelling is known (@noabbrev),
//     which each program reads as itself, and an abbreviation asks.
//   - The words after "--" go to the script, test binary or program the
//     runner starts, not to the runner; the spec does not read them,
//     except those cargo clippy hands to the compiler (clippyArgs, no
//     free word or @FILE) and those cargo test and bench hand to the
//     test harness (libtestArgs, no --logfile). pytest is the exception
//     the other way: it imports a -p plugin from any word, after "--"
//     or as another option's value, so every word is checked.
//   - Values runnerEffect checks: ssh -o keys (inertSSHOptions), rsync -e
//     (ssh with such options only), pytest -p (only no:NAME, which turns
//     a plugin off), pytest -W (a dotted warning category is imported),
//     pytest's @FILE (more options from a file) and path operands (read:
//     pytest runs what it collects there, as bun test does), make
//     VAR=value operands (the recipes then run other commands), make -f -
//     (a makefile from standard input, or /dev/stdin and the like), make -p (prints the environment),
//     rsync -f (include and exclude rules only, no merge file), cargo
//     --target (a target's name, not a file of one), and the commands of yarn, pnpm and bun
//     (runnerCommands).
//   - npm exec, yarn dlx, pnpm dlx, bun x and the like run the package
//     the words name after their options, which may be any: typed as
//     running a program. npx reads its options up to the package, whose
//     name a rule for it names (npx tsc), and hands it the rest.

// npmCommon are the options every npm command takes.
const npmCommon = `
  @noabbrev -s|--silent -q|--quiet -d --verbose --loglevel=inert --color?=inert --no-color --json
  -p|--parseable -l|--long --no-progress --progress --unicode --no-unicode --timing -h|--help
  --offline --prefer-offline --prefer-online --audit --no-audit --fund --no-fund --update-notifier
  --no-update-notifier -y|--yes --no-yes --if-present --ignore-scripts --foreground-scripts
  --dry-run -f|--force`

// npmInstall are the options of npm's commands that install packages.
const npmInstall = `
  -D|--save-dev -S|--save -E|--save-exact -O|--save-optional -P|--save-prod -B|--save-bundle
  --save-peer --no-save --legacy-peer-deps --strict-peer-deps --omit=inert --include=inert
  --production --package-lock-only --no-package-lock --install-strategy=inert --prefer-dedupe
  --engine-strict --no-bin-links --before=inert`

// npmSubcommands are npm's commands the table knows, with their aliases.
var npmSubcommands = []string{
	"run run-script rum urn: " + npmCommon,
	"test t tst start stop restart: " + npmCommon,
	"ls list la ll: -a|--all --depth=inert --omit=inert --include=inert --link --package-lock-only" + npmCommon,
	"explain why: " + npmCommon,
	"install i in ins inst insta instal isnt isnta isntal isntall add: " + npmCommon + npmInstall,
	"ci clean-install ic install-clean isntall-clean: " + npmCommon + npmInstall,
	"update up upgrade udpate: " + npmCommon + npmInstall,
	"audit: --audit-level=inert --omit=inert --include=inert --production --package-lock-only" + npmCommon,
	"outdated: -a|--all --omit=inert --include=inert" + npmCommon,
	// exec runs the package it names: runnerEffect types it so.
	"exec x: @free",
}

// cargoCommon are the options every cargo command takes; the build
// options those that compile.
const (
	cargoCommon = ` @noabbrev -v|--verbose -q|--quiet --color=inert --frozen --locked --offline -h|--help`
	cargoBuild  = ` -p|--package=inert --workspace --all --exclude=pat -F|--features=inert --all-features
  --no-default-features --lib --bins --bin=inert --examples --example=inert --tests --test=inert
  --benches --bench=inert --all-targets -r|--release --profile=inert -j|--jobs=inert --keep-going
  --target=inert --target-dir=write --manifest-path=read --message-format=inert --timings?=inert
  --ignore-rust-version --future-incompat-report`
)

// cargoSubcommands are cargo's commands the table knows. Any other is a
// command the table does not know, or an external cargo-NAME program.
var cargoSubcommands = []string{
	"build b check c: " + cargoCommon + cargoBuild,
	"test t bench: --no-run --no-fail-fast --doc" + cargoCommon + cargoBuild,
	"run r: " + cargoCommon + cargoBuild,
	"clippy: --fix --allow-dirty --allow-staged --allow-no-vcs --no-deps" + cargoCommon + cargoBuild,
	"doc d: --no-deps --document-private-items" + cargoCommon + cargoBuild,
	"fmt: --all --check -p|--package=inert --manifest-path=read --message-format=inert" + cargoCommon,
	`tree: -p|--package=inert --workspace --exclude=pat -e|--edges=inert -i|--invert=inert --prefix=inert
  --no-dedupe -d|--duplicates -f|--format=inert --charset=inert --depth=inert --target=inert
  -F|--features=inert --all-features --no-default-features --manifest-path=read` + cargoCommon,
	"metadata: --format-version=inert --no-deps --filter-platform=inert -F|--features=inert --all-features --no-default-features --manifest-path=read" + cargoCommon,
	"fetch: --target=inert --manifest-path=read" + cargoCommon,
	"update: -p|--package=inert -w|--workspace --dry-run --precise=inert --recursive --aggressive --manifest-path=read" + cargoCommon,
	// clean removes its target directory: not one --target-dir names.
	"clean: -p|--package=inert -r|--release --profile=inert --target=inert --doc -n|--dry-run --manifest-path=read" + cargoCommon,
	"version: " + cargoCommon,
}

func init() {
	specSources = append(specSources, specSource{"runners", `
npm: -v|--version` + npmCommon + `
# npx runs the package its first operand names (a rule names it too):
# the words after it are the package's.
npx: @posix @noabbrev -y|--yes --no -q|--quiet -s|--silent --loglevel=inert
cargo: -V|--version --list` + cargoCommon + `

# make: every long option of GNU make 4.4; those refused with "!".
make gmake: -B|--always-make -C|--directory=dir -d --debug?=inert -f|--file|--makefile=read -h|--help
  -i|--ignore-errors -I|--include-dir=dir -j|--jobs?=inert -k|--keep-going
  -l|--load-average|--max-load?=inert -L|--check-symlink-times -n|--just-print|--dry-run|--recon
  -o|--old-file|--assume-old=inert -O|--output-sync?=inert -p|--print-data-base -q|--question
  -r|--no-builtin-rules -R|--no-builtin-variables -s|--silent|--quiet --no-silent
  -S|--no-keep-going|--stop -t|--touch --trace -v|--version -w|--print-directory
  --no-print-directory -W|--what-if|--new-file|--assume-new=inert --warn-undefined-variables
  --shuffle?=inert
  !--eval !--environment-overrides !--jobserver-auth !--jobserver-fds !--jobserver-style !--temp-stdin

# pytest: core options, and xdist's -n.
pytest py.test: @noabbrev -k=pat -m=pat --markers -x|--exitfirst --fixtures|--funcargs --fixtures-per-test
  --capture=inert -s --runxfail --lf|--last-failed --ff|--failed-first --nf|--new-first
  --cache-show?=pat --cache-clear --lfnf|--last-failed-no-failures=inert --sw|--stepwise
  --sw-skip|--stepwise-skip -v|--verbose --no-header --no-summary -q|--quiet --verbosity=inert -r=inert
  --disable-warnings|--disable-pytest-warnings -l|--showlocals --no-showlocals --tb=inert --xfail-tb
  --show-capture=inert --full-trace --color=inert --code-highlight=inert
  --junitxml|--junit-xml=write --junitprefix|--junit-prefix=inert -W|--pythonwarnings=inert
  --maxfail=inert --strict-config --strict-markers --strict --continue-on-collection-errors
  --co|--collect-only --ignore=pat --ignore-glob=pat --deselect=pat --noconftest --keep-duplicates
  --collect-in-virtualenv --import-mode=inert --doctest-modules --doctest-report=inert
  --doctest-glob=pat --doctest-ignore-import-errors --doctest-continue-on-failure
  --durations=inert --durations-min=inert -V|--version -h|--help --setup-only --setup-show
  --setup-plan --log-level=inert --log-cli-level=inert --log-file=write --log-file-level=inert
  --assert=inert -p=inert -n|--numprocesses=inert

# ssh reads options up to the host and again after it, up to the
# command (sshWords); scp and sftp read them anywhere.
ssh: -4 -6 -a -C -G -N -n -q -T -t -V -v -x -b=inert -c=inert -E=write -e=inert -i=inert -l=inert
  -m=inert -o=inert -p=inert -Q=inert
scp: -3 -4 -6 -B -C -O -p -q -R -r -s -v -c=inert -i=inert -l=inert -o=inert -P=inert
sftp: -4 -6 -a -C -f -N -p -q -r -v -B=inert -c=inert -i=inert -l=inert -o=inert -P=inert -R=inert

rsync: @noabbrev -a|--archive -v|--verbose -q|--quiet -z|--compress -r|--recursive -l|--links
  -p|--perms -t|--times -g|--group -o|--owner -D --devices --specials
  -H|--hard-links -u|--update -c|--checksum -n|--dry-run -P --progress --partial
  -h|--human-readable -i|--itemize-changes --stats --info=inert -x|--one-file-system --delete
  --delete-before --delete-during|--del --delete-delay --delete-after --delete-excluded
  --remove-source-files --exclude=pat --include=pat --exclude-from=read --include-from=read
  -f|--filter=pat -C|--cvs-exclude -e|--rsh=exec --size-only --ignore-existing --existing
  -m|--prune-empty-dirs -R|--relative -W|--whole-file --inplace --append --mkpath
  --bwlimit=inert --timeout=inert --contimeout=inert --port=inert --chmod=inert
  -O|--omit-dir-times -J|--omit-link-times --numeric-ids --max-size=inert --min-size=inert
  -S|--sparse -b|--backup --backup-dir=write --suffix=inert -0|--from0
  --no-perms --no-owner --no-group --no-times --compress-level=inert -8|--8-bit-output

# yarn, pnpm and bun: the first operand is the program's command or a
# script of the project (runnerCommands).
yarn: @noabbrev -s|--silent --verbose --json --frozen-lockfile --immutable --immutable-cache
  --check-cache --pure-lockfile --prefer-offline --offline --ignore-scripts --non-interactive
  --production?=inert --ignore-engines --no-progress --network-timeout=inert --check-files
  -D|--dev -E|--exact -T|--tilde -P|--peer -O|--optional --inline-builds --mode=inert
  -h|--help -v|--version
pnpm: @noabbrev -s|--silent --reporter=inert --loglevel=inert --color --no-color --frozen-lockfile
  --no-frozen-lockfile --prefer-offline --offline --ignore-scripts --if-present --stream
  -D|--save-dev -P|--save-prod -O|--save-optional -E|--save-exact --save-peer --prod --dev
  --no-optional --lockfile-only --fix-lockfile --resolution-only --aggregate-output --use-stderr
  --json --depth=inert --long --parseable -h|--help -v|--version
bun: @noabbrev --silent -t|--test-name-pattern=pat --timeout=inert --bail?=inert --coverage
  -u|--update-snapshots --rerun-each=inert --only --todo --watch --frozen-lockfile --production
  --dev --exact --no-save --dry-run --ignore-scripts --verbose -h|--help -v|--version
`})
}

// runnerSubcommandSources returns the subcommands of npm and cargo.
func runnerSubcommandSources() []subcommandSource {
	return []subcommandSource{
		{name: "npm subcommands", program: "npm", text: strings.Join(npmSubcommands, "\n")},
		{name: "cargo subcommands", program: "cargo", text: strings.Join(cargoSubcommands, "\n")},
	}
}

// clippyArgs are the words cargo clippy hands to the compiler after
// "--": lint levels only. Any other compiler flag (-C linker=,
// --emit=KIND=PATH) may run a program or write a file.
var clippyArgs = lazySpec("clippy arguments", `clippy-driver: @noabbrev -D|--deny=inert -W|--warn=inert -A|--allow=inert -F|--forbid=inert
  --cap-lints=inert`)

// fmtArgs are the words cargo fmt hands to rustfmt after "--".
var fmtArgs = lazySpec("rustfmt arguments", `rustfmt: @noabbrev --check --edition=inert -l|--files-with-diff -v|--verbose -q|--quiet
  --emit=inert --color=inert`)

// libtestArgs are the words cargo test and cargo bench hand to the test
// harness after "--": its filters and the options that choose, order and
// show the tests. --logfile, which writes a file anywhere, is left out.
var libtestArgs = lazySpec("test harness arguments", `libtest: @noabbrev --include-ignored --ignored --exclude-should-panic
  --test --bench --list --nocapture --no-capture --test-threads=inert --skip=pat -q|--quiet --exact
  --color=inert --format=inert --show-output -Z=inert --report-time --ensure-time --shuffle
  --shuffle-seed=inert --force-run-in-process -h|--help`)
