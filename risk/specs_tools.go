package risk

import "strings"

// The options of the search, listing, viewing and text tools the gate may
// call read-only, in the spec language of ParseSpecs, from the programs'
// own documentation (ripgrep 14, ag 2.2, ack 3, fd 10, tree 2, eza and exa,
// bat 0.25, less 6xx, util-linux more, jq 1.7, yq, gawk 5, GNU sed 4.9,
// GNU findutils 4.9 with the BSD find extras, procps-ng ps and top, lsof 4,
// man-db, tokei 12, cloc 2). Every option not listed makes the command
// unknown.
//
// What is left out on purpose, so that the command asks:
//   - options whose value is a list of files or of options read from
//     elsewhere, since what the list names cannot be checked before the
//     line runs: ack --files-from, -x and --ackrc (an ackrc may set
//     --pager), find -files0-from, eza --stdin, cloc --list-file,
//     --diff-list-file(s) and --config, less -t and -T (a tags file names
//     the file to open);
//   - options that write files the words do not name: tree -R (writes
//     00Tree.html in every directory), cloc --strip-comments, --strip-code
//     and --xsl, gawk -d, -o and -p without a file (awkvars.out,
//     awkprof.out), yq -s/--split-exp, bat --generate-config-file, man -u
//     and -c (the index and cat caches);
//   - options that read commands from standard input or a file in a
//     language that runs programs: gawk -D (the debugger), gawk and mawk -W
//     (any long option, --exec and --load included), bat --lessopen (runs
//     $LESSOPEN).
//
// Option values that are programs are typed exec (rg --pre and
// --hostname-bin, ag and ack --pager, bat --pager, man -P and -H, fd -x
// and -X, gawk -l, cloc --extract-with and --vcs), code in the program's
// own language code (awk -f, -e, -i and -E, sed -e and -f, jq -f, yq
// --from-file, less key bindings, which may set LESSOPEN), so that the
// command asks; files read or written are typed read or write so that
// what they name is checked. toolSpecs returns the table.

// Type options of ag and ack: --go searches Go files.
var (
	agTypes = "actionscript ada asciidoc apl asm asp aspx batch bazel bitbake cc cfmx chpl clojure coffee " +
		"config coq cpp crystal csharp cshtml css cython delphi dlang dot dts ebuild elisp elixir elm erlang " +
		"factor fortran fsharp gettext glsl go gradle groovy haml handlebars haskell haxe hh html idris ini " +
		"ipython isabelle j jade java jinja2 js json jsp julia kotlin less liquid lisp log lua m4 make mako " +
		"markdown mason matlab mathematica md mercury naccess nim nix objc objcpp ocaml octave org parrot " +
		"pdb perl php pike plist plone powershell proto ps1 pug puppet python qml racket rake razor " +
		"restructuredtext rs r rdoc ruby rust salt sass scala scheme shell smalltalk sml sql stata stylus " +
		"swift tcl terraform tex thrift tla tt toml ts twig vala vb velocity verilog vhdl vim vue wix wsdl " +
		"wadl xml yaml zeek zephir"
	ackTypes = "actionscript ada asm asp aspx batch bazel cc cfmx clojure cmake coffeescript cpp crystal " +
		"csharp css dart delphi elisp elixir elm erlang fortran go groovy gsp haskell hh hpp html jade java " +
		"js json jsp kotlin less lisp lua make markdown matlab objc objcpp ocaml perl perltest php plone " +
		"pod purescript python rake rr rst ruby rust sass scala scheme shell smalltalk smarty sql stylus " +
		"svg swift tcl tex toml ts ttml vb verilog vhdl vim xml yaml"
)

// typeOptions returns a spec line of one flag per type: --TYPE and, for
// ack, whose types are negatable, --noTYPE and --no-TYPE too.
func typeOptions(types string, negatable bool) string {
	var b strings.Builder
	for _, t := range strings.Fields(types) {
		b.WriteString("  --" + t)
		if negatable {
			b.WriteString("|--no" + t + "|--no-" + t)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// toolSpecs returns the table of the tools above. builtinTables calls it
// at first use of the specs, so that the type lists are not joined in
// when the program starts.
func toolSpecs() string {
	return `
# ripgrep parses its own options: no abbreviations. -z runs the fixed
# decompression programs (gzip, xz, ...), which is no choice of the caller.
rg: @noabbrev -A|--after-context=inert --auto-hybrid-regex --no-auto-hybrid-regex -B|--before-context=inert
  --binary --no-binary --block-buffered --no-block-buffered -b|--byte-offset --no-byte-offset
  -s|--case-sensitive
  --color=inert --colors=inert --column --no-column -C|--context=inert --context-separator=inert
  --no-context-separator -c|--count --count-matches --crlf --no-crlf --debug --dfa-size-limit=inert
  -E|--encoding=inert --no-encoding --engine=inert --field-context-separator=inert
  --field-match-separator=inert -f|--file=read --files -l|--files-with-matches --files-without-match
  -F|--fixed-strings --no-fixed-strings -L|--follow --no-follow --generate=inert -g|--glob=pat
  --glob-case-insensitive --no-glob-case-insensitive --heading --no-heading -h|--help -.|--hidden
  --no-hidden --hostname-bin=exec --hyperlink-format=inert --iglob=pat -i|--ignore-case
  --ignore-file=read --ignore-file-case-insensitive --no-ignore-file-case-insensitive --include-zero
  --no-include-zero -v|--invert-match --no-invert-match --json --no-json --line-buffered
  --no-line-buffered -n|--line-number -N|--no-line-number -x|--line-regexp -M|--max-columns=inert
  --max-columns-preview --no-max-columns-preview -m|--max-count=inert -d|--max-depth|--maxdepth=inert
  --max-filesize=inert --mmap --no-mmap -U|--multiline --no-multiline --multiline-dotall
  --no-multiline-dotall --no-config --no-ignore --ignore --no-ignore-dot --ignore-dot --no-ignore-exclude
  --ignore-exclude --no-ignore-files --ignore-files --ignore-nested-git --no-ignore-nested-git --no-ignore-global --ignore-global
  --no-ignore-messages --ignore-messages --no-ignore-parent --ignore-parent --no-ignore-vcs --ignore-vcs
  --no-messages --messages --no-pcre2-unicode --pcre2-unicode --no-require-git --require-git --no-unicode
  --unicode -0|--null --null-data --one-file-system --no-one-file-system -o|--only-matching
  --passthru|--passthrough --path-separator=inert -P|--pcre2 --no-pcre2 --pcre2-version --pre=exec
  --no-pre --pre-glob=pat -p|--pretty -q|--quiet --regex-size-limit=inert -e|--regexp=pat
  -r|--replace=inert -z|--search-zip --no-search-zip -S|--smart-case --sort=inert --sortr=inert
  --sort-files --no-sort-files --stats --no-stats --stop-on-nonmatch -a|--text --no-text
  -j|--threads=inert --trace --trim --no-trim -t|--type=inert --type-add=inert --type-clear=inert
  --type-list -T|--type-not=inert -u|--unrestricted -V|--version --vimgrep -H|--with-filename
  -I|--no-filename -w|--word-regexp

# ag (getopt_long, abbreviations allowed). -A, -B and -C take a count only
# when one follows; an optional value keeps the next word an operand, so
# that a path is never taken for a count.
ag: --ackmate --ackmate-dir-filter=pat --affinity --noaffinity|--no-affinity -A|--after?=inert
  -B|--before?=inert --break --nobreak|--no-break -c|--count --color --nocolor|--no-color
  --color-line-number=inert --color-match=inert --color-path=inert --color-win-ansi --column
  -C|--context?=inert -D|--debug --depth=inert --filename --nofilename|--no-filename
  -g|--filename-pattern=pat -G|--file-search-regex=pat -l|--files-with-matches
  -L|--files-without-matches -F|--fixed-strings -f|--follow --nofollow|--no-follow --group
  --nogroup|--no-group -H|--heading --noheading|--no-heading -h|--help --hidden --ignore=pat
  --ignore-dir=pat -i|--ignore-case -v|--invert-match --line-numbers --list-file-types -Q|--literal
  --match -m|--max-count=inert --mmap --nommap|--no-mmap --multiline --nomultiline|--no-multiline
  -0|--null|--print0 --numbers --nonumbers|--no-numbers --nopager|--no-pager -n|--norecurse|--no-recurse
  -o|--only-matching --one-device --pager=exec --parallel --passthrough|--passthru
  -p|--path-to-ignore=read --print-all-files --print-long-lines -r|-R|--recurse --search-binary
  --search-files -z|--search-zip --silent -U|--skip-vcs-ignores -s|--case-sensitive -S|--smart-case
  --stats --stats-only -t|--all-text -a|--all-types -u|--unrestricted -V|--version --vimgrep
  -W|--width=inert -w|--word-regexp --workers=inert
` + typeOptions(agTypes, false) + `
# ack (Getopt::Long with bundling and abbreviations). --output is a Perl
# expression in ack 2 and is typed code. --ignore-file takes a filter
# (ext:bak), not a file.
ack: -f -g -l|--files-with-matches -L|--files-without-matches -c|--count -i|--ignore-case
  -S|--smart-case --nosmart-case|--no-smart-case -I|--no-ignore-case -v|--invert-match -w|--word-regexp
  -Q|--literal --range-start=pat --range-end=pat --match=pat --output=code -o --passthru
  -m|--max-count=inert -1 -H|--with-filename -h|--no-filename --column --nocolumn|--no-column
  -A|--after-context=inert -B|--before-context=inert -C|--context?=inert --print0 -s --pager=exec
  --nopager|--no-pager --heading --noheading|--no-heading --break --nobreak|--no-break --group
  --nogroup|--no-group -p|--proximate?=inert -P --underline --nounderline|--no-underline
  --color|--colour --nocolor|--nocolour|--no-color|--no-colour --color-filename=inert
  --color-match=inert --color-colno=inert --color-lineno=inert --help-colors --help-rgb-colors --flush
  --sort-files --show-types --ignore-dir|--ignore-directory=pat
  --noignore-dir|--no-ignore-dir|--noignore-directory|--no-ignore-directory=pat --ignore-file=inert
  -r|-R|--recurse -n|--no-recurse --follow --nofollow|--no-follow -t|--type=inert -T=inert
  -k|--known-types --help-types --type-set=inert --type-add=inert --type-del=inert --version --env
  --noenv|--no-env --ignore-ack-defaults --create-ackrc --dump --filter --nofilter|--no-filter --help
  --man --thpppt --bar --cathy
` + typeOptions(ackTypes, true) + `
# fd (clap: no abbreviations). -x and -X take the rest of the line, up to
# a ";", as a command that the shell analysis does not see through: they
# are exec, and what follows them means nothing to the parse. -l runs the
# fixed "ls -l" on what fd found.
fd fdfind: @noabbrev -H|--hidden --no-hidden -I|--no-ignore --ignore --no-ignore-vcs --ignore-vcs
  --no-require-git --require-git --no-ignore-parent --no-global-ignore-file -u|--unrestricted
  -s|--case-sensitive -i|--ignore-case -g|--glob --regex -F|--fixed-strings|--literal --exact --and=pat
  -a|--absolute-path --relative-path -l|--list-details -L|--follow|--dereference --no-follow
  -p|--full-path -0|--print0 -d|--max-depth|--maxdepth=inert --min-depth|--mindepth=inert
  --exact-depth=inert -E|--exclude=pat --ignore-contain=inert
  --prune -t|--type=inert -e|--extension=inert -S|--size=inert
  --changed-within|--change-newer-than|--newer|--changed-after=inert
  --changed-before|--change-older-than|--older=inert -o|--owner=inert --format=inert -x|--exec=exec
  -X|--exec-batch=exec --batch-size=inert --ignore-file=read -c|--color=inert
  --hyperlink|--hyper?=inert -j|--threads=inert --max-buffer-time=inert --max-results=inert -1
  -q|--quiet|--has-results --show-errors --error-on-fs-errors -C|--base-directory=dir
  --path-separator=inert --search-path=dir --strip-cwd-prefix?=inert --one-file-system|--mount|--xdev
  --gen-completions?=inert -h|--help -V|--version

# tree (its own parser: full names). -o writes its output; --hintro,
# --houtro, --infofile and --gitfile are files it reads (the intro and
# outro are copied to the output). --fromfile reads the listing from the
# operands, which are read.
tree: @noabbrev -a -d -l -f -x -L=inert -P=pat -I=pat --gitignore --gitfile=read --ignore-case
  --matchdirs --metafirst --prune --info --infofile=read --noreport --charset=inert --filelimit=inert
  -o=write -q -N -Q -p -u -g -s -h --si --du -D --timefmt=inert -F --inodes --device -v -t -c -U -r
  --dirsfirst --filesfirst --sort=inert -i -A -S -n -C -X -J -H=inert -T=inert --nolinks --hintro=read
  --houtro=read --fromfile --fflinks --hyperlink --scheme=inert --authority=inert --version -V --help

# eza and its predecessor exa (full names only).
eza exa: @noabbrev -1|--oneline -l|--long -G|--grid -x|--across -R|--recurse -T|--tree
  -X|--dereference -F|--classify?=inert --color|--colour?=inert --color-scale|--colour-scale?=inert
  --color-scale-mode|--colour-scale-mode=inert --icons?=inert --no-icons --no-quotes --hyperlink
  --absolute?=inert --follow-symlinks -w|--width=inert -a|--all -A|--almost-all
  -d|--list-dirs|--treat-dirs-as-files -L|--level=inert -r|--reverse -s|--sort=inert
  --group-directories-first --group-directories-last -D|--only-dirs -f|--only-files --show-symlinks
  --no-symlinks -I|--ignore-glob=pat --git-ignore -b|--binary -B|--bytes -g|--group --smart-group
  -h|--header -H|--links -i|--inode -m|--modified -M|--mounts -n|--numeric -S|--blocksize|--blocks
  -t|--time=inert -u|--accessed -U|--created --changed --time-style=inert --total-size
  --no-permissions -o|--octal-permissions --no-filesize --no-user --no-time --git --no-git --git-repos
  --git-repos-no-status -@|--extended -Z|--context -O|--flags -v|--version -?|--help

# bat (clap: no abbreviations). --config-file, --config-dir and
# --cache-dir print where those are; the configuration itself comes from
# BAT_CONFIG_PATH. The cache subcommand's options (--build, --clear,
# --source) are no options of bat: it asks.
bat batcat: @noabbrev -A|--show-all|--show-nonprintable --nonprintable-notation=inert --binary=inert -p|--plain
  -l|--language=inert -H|--highlight-line=inert --file-name=inert -d|--diff --diff-context=inert --gitsigns=inert
  --tabs=inert --wrap=inert -S|--chop-long-lines --terminal-width=inert -n|--number --color=inert
  --italic-text=inert --decorations=inert -f|--force-colorization --paging=inert -P|--no-paging|--no-pager --pager=exec
  -m|--map-syntax=inert --ignored-suffix=inert --theme=inert --theme-light=inert --theme-dark=inert
  --list-themes -s|--squeeze-blank --squeeze-limit=inert --strip-ansi=inert --style=inert
  -r|--line-range=inert -L|--list-languages -u|--unbuffered --completion=inert --diagnostic|--diagnostics
  --acknowledgements --set-terminal-title --no-config --no-custom-assets --no-lessopen --config-file
  --config-dir --cache-dir -h|--help -V|--version

# less. A lesskey file or text may set LESSOPEN, the input preprocessor
# less runs, so the key-binding options are code. +cmd is an initial
# command; less's commands run shell commands (!, |, v), so only +G, +g,
# +F, +N and +/pattern are known.
less: @plus -?|--help -a|--search-skip-screen -A|--SEARCH-SKIP-SCREEN -b|--buffers=inert
  -B|--auto-buffers -c|--clear-screen -d|--dumb -D|--color=inert -e|--quit-at-eof -E|--QUIT-AT-EOF
  -f|--force -F|--quit-if-one-screen -g|--hilite-search -G|--HILITE-SEARCH -h|--max-back-scroll=inert
  -i|--ignore-case -I|--IGNORE-CASE -j|--jump-target=inert -J|--status-column -k|--lesskey-file=code
  -K|--quit-on-intr -L|--no-lessopen -m|--long-prompt -M|--LONG-PROMPT -n|--line-numbers
  -N|--LINE-NUMBERS -o|--log-file=write -O|--LOG-FILE=write -p|--pattern=pat -P|--prompt=inert
  -q|--quiet|--silent -Q|--QUIET|--SILENT -r|--raw-control-chars -R|--RAW-CONTROL-CHARS
  -s|--squeeze-blank-lines -S|--chop-long-lines -u|--underline-special -U|--UNDERLINE-SPECIAL
  -V|--version -w|--hilite-unread -W|--HILITE-UNREAD -x|--tabs=inert -X|--no-init
  -y|--max-forw-scroll=inert -z|--window=inert -"|--quotes=inert -~|--tilde -#|--shift=inert
  --file-size --follow-name --incsearch --line-num-width=inert --mouse --MOUSE --no-keypad
  --no-histdups --rscroll=inert --save-marks --status-col-width=inert --use-backslash --use-color
  --wheel-lines=inert --lesskey-src=code --lesskey-content=code --header=inert --exit-follow-on-close
  --redraw-on-quit --search-options=inert --show-preproc-errors --proc-backspace --PROC-BACKSPACE
  --proc-return --PROC-RETURN --proc-tab --PROC-TAB --intr=inert --match-shift=inert --no-vbell
  --no-number-headers --no-search-headers --status-line --wordwrap --autosave=inert --modelines=inert
  +G +g +F
more: @numeric @plus -d|--silent -f|--logical -l|--no-pause -c|--print-over -p|--clean-print
  -e|--exit-on-eof -s|--squeeze -u|--plain -n|--lines=inert -h|--help -V|--version

# jq parses its own options: full names, short options clustered. --arg
# NAME VALUE and the like take two words; the file of --slurpfile and
# --rawfile is read. After --args or --jsonargs the operands are values,
# which are then taken for files read: the cautious reading. -f reads the
# filter from a file, where the environment check of the filter cannot
# look.
jq: @noabbrev -n|--null-input -R|--raw-input -s|--slurp -c|--compact-output -r|--raw-output
  --raw-output0 -j|--join-output -a|--ascii-output -S|--sort-keys -C|--color-output
  -M|--monochrome-output --tab --indent=inert --unbuffered --stream --stream-errors --seq
  -e|--exit-status -f|--from-file=code -L|--library-path=inert --arg=inert+inert --argjson=inert+inert
  --slurpfile=inert+read --rawfile=inert+read --args --jsonargs -0|--nul-output -b|--binary
  --debug-dump-disasm --debug-trace?=inert --build-configuration -h|--help -V|--version

# yq: two programs have the name, mikefarah's yq 4 (Go) and the jq wrapper
# (Python); this is mikefarah's with the wrapper's own output options and
# the jq options it passes on. -f is --front-matter in one and jq's
# --from-file in the other: code, to be safe. -s (--split-exp in one,
# jq's --slurp in the other) writes files named by an expression and is
# left out. -i writes its operands; the effect of the program says so.
yq: @noabbrev -C|--colors -M|--no-colors -e|--exit-status -f|--front-matter=code
  --header-preprocess?=inert -h|--help -I|--indent=inert -i|--inplace|--in-place
  -p|--input-format=inert -o|--output-format=inert -j|--tojson|--join-output -P|--prettyPrint
  -N|--no-doc -n|--null-input -0|--nul-output -r|--unwrapScalar|--raw-output?=inert -v|--verbose
  -V|--version --from-file=code --expression=code --xml-attribute-prefix=inert --xml-content-name=inert
  --xml-directive-name=inert --xml-keep-namespace?=inert --xml-proc-inst-prefix=inert
  --xml-raw-token?=inert --xml-skip-directives --xml-skip-proc-inst --xml-strict-mode
  --csv-auto-parse?=inert --csv-separator=inert --tsv-auto-parse?=inert --lua-globals --lua-prefix=inert
  --lua-suffix=inert --lua-unquoted --properties-array-brackets --properties-separator=inert
  --string-interpolation?=inert --security-disable-env-ops --security-disable-file-ops
  -y|--yaml-output|--yml-output -Y|--yaml-roundtrip|--yml-roundtrip -x|--xml-output
  -t|--toml-output --indentless-lists|--indentless --explicit-start --explicit-end -w|--width=inert
  -c|--compact-output -R|--raw-input -a|--ascii-output -S|--sort-keys --tab --arg=inert+inert
  --argjson=inert+inert --slurpfile=inert+read --rawfile=inert+read --args --jsonargs

# awk: gawk's options, which take in mawk's and the one-true-awk's -f, -F
# and -v. Options end at the program text (getopt's "+"). -f, -e, -i and
# -E give awk code, -l loads a shared library. -W (any long option as
# -W name) is left out.
awk gawk: @posix -f|--file=code -F|--field-separator=inert -v|--assign=inert
  -b|--characters-as-bytes -c|--traditional -C|--copyright -e|--source=code -E|--exec=code
  -g|--gen-pot -h|--help|--usage -i|--include=code -I|--trace -k|--csv -l|--load=exec
  -L|--lint?=inert -M|--bignum -N|--use-lc-numeric -n|--non-decimal-data -O|--optimize -P|--posix
  -r|--re-interval -s|--no-optimize -S|--sandbox -t|--lint-old -V|--version

# GNU sed. Its script is code: -e and -f make the command unknown, and a
# script operand is judged by the effect of sed. The suffix of -i names
# the backup, and with a "*" or a "/" a file anywhere (-i'/etc/*'): it is
# typed write, so that what it names is checked.
sed: -n|--quiet|--silent --debug -e|--expression=code -f|--file=code --follow-symlinks
  -i|--in-place?=write -l|--line-length=inert --posix -E|-r|--regexp-extended -s|--separate --sandbox
  -u|--unbuffered -z|--null-data --help --version

# find: -H -L -P -D -O, the starting points, then an expression of
# single-dash primaries and the operators ( ) ! , -a -o -not -and -or.
# The command of -exec, -execdir, -ok and -okdir runs up to its ";" (or
# "+"); the shell analysis sees through it and judges it as a command of
# its own. -files0-from (a list of starting points read from a file) is
# left out, and so is BSD find's -f PATH, whose attached reading would
# take -files0-from for it. -delete makes the effect destructive.
find: @single @noabbrev -H -L -P -D=inert -O?=inert -d|-depth -daystart -follow -regextype=inert -warn
  -nowarn -help -version -ignore_readdir_race -noignore_readdir_race -maxdepth=inert -mindepth=inert
  -mount -xdev -noleaf -amin=inert -anewer=read -atime=inert -cmin=inert -cnewer=read -context=pat
  -ctime=inert -empty -executable -false -fstype=inert -gid=inert -group=inert -ilname=pat -iname=pat
  -inum=inert -ipath=pat -iregex=pat -iwholename=pat -links=inert -lname=pat -mmin=inert -mtime=inert
  -name=pat -newer=read -nogroup -nouser -path=pat -perm=inert -readable -regex=pat -samefile=read
  -size=inert -true -type=inert -uid=inert -used=inert -user=inert -wholename=pat -writable -xtype=inert
  -neweraa|-neweraB|-newerac|-neweram|-newerBa|-newerBB|-newerBc|-newerBm=read
  -newerca|-newercB|-newercc|-newercm|-newerma|-newermB|-newermc|-newermm=read
  -newerat|-newerBt|-newerct|-newermt=inert
  -delete -exec|-execdir|-ok|-okdir=cmd -fls=write -fprint=write -fprint0=write -fprintf=write+inert
  -ls -print -print0 -printf=inert -prune -quit -a|-and -o|-or -not
  -E -X -s -x -Bmin=inert -Bnewer=read -Btime=inert -acl -flags=inert -sparse -xattr
  -xattrname=inert

# ps mixes BSD options without a dash (ps aux), UNIX options (ps -ef) and
# GNU long options, and BSD letters are no words the spec language can
# tell from operands. No option of ps runs a program, writes a file or
# reads one the caller chooses; what ps shows is the process table, and
# the options that show the environment of processes (BSD e, -E) are
# judged by the effect of ps. So its words are read as operands.
ps: @free

# pgrep (procps-ng). Which of its options show or match command lines
# (-a, -l, -f) is judged by the effect of pgrep.
pgrep: -a|--list-full -l|--list-name -f|--full -c|--count -d|--delimiter=inert -g|--pgroup=inert
  -G|--group=inert -i|--ignore-case -n|--newest -o|--oldest -O|--older=inert -P|--parent=inert
  -s|--session=inert -t|--terminal=inert -u|--euid=inert -U|--uid=inert -v|--inverse -w|--lightweight
  -x|--exact -F|--pidfile=inert -L|--logpidfile -r|--runstates=inert -A|--ignore-ancestors
  --cgroup=inert --ns=inert --nslist=inert --env=inert -h|--help -V|--version

# top (procps-ng). Batch mode: top -b -n 1.
top: -b|--batch-mode -c|--cmdline-toggle -d|--delay=inert -E|--scale-summary-mem=inert
  -e|--scale-task-mem=inert -H|--threads-show -i|--idle-toggle -n|--iterations=inert -O|--list-fields
  -o|--sort-override=inert -p|--pid=inert -S|--accum-time-toggle -s|--secure-mode
  -U|--filter-any-user=inert -u|--filter-only-euser=inert -w|--width?=inert -1|--single-cpu-toggle
  -h|--help -V|--version

# lsof: no long options; +x is an option too. Options whose value is
# optional take it only attached here, so that a separate word is an
# operand (a name lsof looks for, which is no file it reads).
lsof: @noabbrev -?|-h -a -b -c|+c=inert -C -d=inert +d +D -e|+e=inert -E|+E -f|+f?=inert -F?=inert
  -g?=inert -i?=inert -K?=inert -k=read -l -L|+L?=inert -m=read +m -M|+M -n -N -o?=inert -O -p=inert -P
  -Q -r|+r?=inert -R -s?=inert -S?=inert -t -T?=inert -u=inert -U -v -V -w|+w -x?=inert -X -Z?=inert

# man-db. A configuration file names the programs man runs (DEFINE pager,
# troff, ...): exec. -P is the pager, -H the browser.
man: -C|--config-file=exec -d|--debug -D|--default --warnings?=inert -f|--whatis -k|--apropos
  -K|--global-apropos -w|--where|--path|--location -W|--where-cat|--location-cat
  -R|--recode=inert -L|--locale=inert -m|--systems=inert -S|-s|--sections=inert
  -e|--extension=inert -i|--ignore-case -I|--match-case --regex --wildcard --names-only -a|--all
  --no-subpages -P|--pager=exec -r|--prompt=inert -7|--ascii -E|--encoding=inert
  --no-hyphenation|--nh --no-justification|--nj -p|--preprocessor=inert -t|--troff
  -T|--troff-device?=inert -H|--html?=exec -X|--gxditview?=inert -Z|--ditroff -?|--help --usage
  -V|--version
whatis: -d|--debug -v|--verbose -r|--regex -w|--wildcard -l|--long -C|--config-file=read
  -L|--locale=inert -m|--systems=inert -M|--manpath=dir -s|--sections|--section=inert -?|--help
  --usage -V|--version
apropos: -d|--debug -v|--verbose -e|--exact -r|--regex -w|--wildcard -a|--and -l|--long
  -C|--config-file=read -L|--locale=inert -m|--systems=inert -M|--manpath=dir
  -s|--sections|--section=inert -?|--help --usage -V|--version

# tokei (clap). -i reads a report of an earlier run.
tokei: @noabbrev -c|--columns=inert -e|--exclude=pat -f|--files -i|--input=read -l|--languages
  -o|--output=inert --hidden --no-ignore --no-ignore-parent --no-ignore-dot --no-ignore-vcs
  -s|--sort=inert -r|--rsort=inert -t|--type=inert -C|--compact -n|--num-format=inert --streaming=inert
  -v|--verbose -h|--help -V|--version

# cloc (Getopt::Long). --extract-with and --vcs name commands cloc runs;
# the report options write files. --unix and --windows only choose how
# cloc itself behaves; --use-sloccount and --git run fixed programs
# (sloccount's counters, git) on the operands.
cloc: --extract-with=exec --vcs=exec --unicode --autoconf --by-file --by-file-by-lang --count-and-diff
  --diff --diff-timeout=inert --docstring-as-code --follow-links --force-lang=inert --force-lang-def=read
  --git --git-diff-rel --git-diff-all --ignore-whitespace --ignore-case --ignore-case-ext
  --lang-no-ext=inert --max-file-size=inert --no-autogen --no-recurse --original-dir
  --read-binary-files --read-lang-def=read --script-lang=inert --sdir=write --skip-leading=inert
  --skip-uniqueness --stat --stdin-name=inert --strip-str-comments --sum-reports --timeout=inert
  --processes=inert --unix --windows --use-sloccount --exclude-content=pat --exclude-dir=pat
  --exclude-ext=inert --exclude-lang=inert --exclude-list-file=read --fullpath --include-content=pat
  --include-ext=inert --include-lang=inert --match-d=pat --not-match-d=pat --match-f=pat
  --not-match-f=pat --skip-archive=pat --skip-win-hidden --categorized=write --counted=write
  --diff-alignment=write --explain=inert --help --found=write --ignored=write --print-filter-stages
  --show-ext?=inert --show-lang?=inert --show-os -v|--verbose?=inert --version --write-lang-def=write
  --write-lang-def-incl-dup=write --3 --by-percent=inert --csv --csv-delimiter=inert
  --file-encoding=inert --hide-rate --json --md --out|--report-file=write --progress-rate=inert --quiet
  --summary-cutoff=inert --sql=write --sql-append --sql-project=inert --sql-style=inert --sum-one --xml
  --yaml
`
}
