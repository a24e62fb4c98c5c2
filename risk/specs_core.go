package risk

// The options of the GNU coreutils and other small programs the gate may
// call read-only, in the spec language of ParseSpecs. Every option not
// listed makes the command unknown. Options that run a program are listed
// with the kind exec, those that read or write a file with read or write,
// so that what they name is checked; options whose value is a file list
// read from elsewhere (--files0-from) are left out on purpose: what such a
// list names cannot be known before the line runs.
func init() {
	specSources = append(specSources, specSource{"coreutils", `
cat tac: -A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t
  -T|--show-tabs -u -v|--show-nonprinting -r|--regex -S|--separator=inert --before --help --version
head: @numeric -c|--bytes=inert -n|--lines=inert -q|--quiet|--silent -v|--verbose -z|--zero-terminated
  --help --version
tail: @numeric -c|--bytes=inert -f --follow?=inert -F -n|--lines=inert --max-unchanged-stats=inert
  --pid=inert -q|--quiet|--silent --retry -s|--sleep-interval=inert -v|--verbose -z|--zero-terminated
  --help --version
wc: -c|--bytes -m|--chars -l|--lines -L|--max-line-length -w|--words --total=inert --help --version
sort: -b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort
  -i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort -n|--numeric-sort -R|--random-sort
  --random-source=read -r|--reverse --sort=inert -V|--version-sort --batch-size=inert -c --check?=inert
  -C --debug -k|--key=inert -m|--merge -o|--output=write -s|--stable -S|--buffer-size=inert
  -t|--field-separator=inert -T|--temporary-directory=write --parallel=inert -u|--unique
  -z|--zero-terminated --compress-program=exec --help --version
uniq: -c|--count -d|--repeated -D --all-repeated?=inert -f|--skip-fields=inert --group?=inert
  -i|--ignore-case -s|--skip-chars=inert -u|--unique -z|--zero-terminated -w|--check-chars=inert
  --help --version
cut: -b|--bytes=inert -c|--characters=inert -d|--delimiter=inert -f|--fields=inert -n --complement
  -s|--only-delimited --output-delimiter=inert -z|--zero-terminated --help --version
tr: -c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1 --help --version
ls dir vdir: -a|--all -A|--almost-all --author -b|--escape --block-size=inert -B|--ignore-backups -c -C
  --color|--colour?=inert -d|--directory -D|--dired -f -F|--classify?=inert --file-type --format=inert
  --full-time -g --group-directories-first -G|--no-group -h|--human-readable --si
  -H|--dereference-command-line --dereference-command-line-symlink-to-dir --hide=pat
  --hyperlink?=inert --indicator-style=inert -i|--inode -I|--ignore=pat -k|--kibibytes -l -L|--dereference
  -m -n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars --show-control-chars
  -Q|--quote-name --quoting-style=inert -r|--reverse -R|--recursive -s|--size -S --sort=inert
  --time=inert --time-style=inert -t -T|--tabsize=inert -u -U -v -w|--width=inert -x -X -Z|--context
  --zero -1 --help --version
du: -0|--null -a|--all --apparent-size -B|--block-size=inert -b|--bytes -c|--total
  -D|--dereference-args -d|--max-depth=inert -H --inodes -h|--human-readable -k -L|--dereference
  -l|--count-links -m -P|--no-dereference -S|--separate-dirs --si -s|--summarize -t|--threshold=inert
  --time?=inert --time-style=inert -X|--exclude-from=read --exclude=pat -x|--one-file-system
  --help --version
df: -a|--all -B|--block-size=inert -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync
  --output?=inert -P|--portability --sync --total -t|--type=inert -T|--print-type -x|--exclude-type=inert
  --help --version
date: -d|--date=inert --debug -f|--file=read -I|--iso-8601?=inert --resolution -R|--rfc-email
  --rfc-3339=inert -r|--reference=read -u|--utc|--universal --help --version
hostname: -a|--alias -A|--all-fqdns -d|--domain -f|--fqdn|--long -i|--ip-address
  -I|--all-ip-addresses -s|--short -y|--yp|--nis -h|--help -V|--version
gzip gunzip zcat: @numeric -c|--stdout|--to-stdout -d|--decompress|--uncompress -f|--force -k|--keep
  -l|--list -n|--no-name -N|--name -q|--quiet -r|--recursive -S|--suffix=inert --synchronous
  -t|--test -v|--verbose --fast --best --rsyncable -h|--help -V|--version -L|--license
stat: -L|--dereference -f|--file-system -c|--format=inert --printf=inert -t|--terse --cached=inert
  --help --version
cmp: -b|--print-bytes -i|--ignore-initial=inert -l|--verbose -n|--bytes=inert -s|--quiet|--silent
  --help -v|--version
diff: -q|--brief -s|--report-identical-files -c -C|--context=inert -u -U|--unified=inert -e|--ed
  -n|--rcs -y|--side-by-side -W|--width=inert --left-column --suppress-common-lines
  -p|--show-c-function -F|--show-function-line=pat --label=inert --expand-tabs -t -T|--initial-tab
  --tabsize=inert --suppress-blank-empty -l|--paginate -r|--recursive --no-dereference -N|--new-file
  --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case -x|--exclude=pat
  -X|--exclude-from=read -S|--starting-file=inert --from-file=read --to-file=read -i|--ignore-case
  -E|--ignore-tab-expansion -Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space
  -B|--ignore-blank-lines -I|--ignore-matching-lines=pat -a|--text --strip-trailing-cr -D|--ifdef=inert
  --old-group-format=inert --new-group-format=inert --unchanged-group-format=inert
  --changed-group-format=inert --line-format=inert --old-line-format=inert --new-line-format=inert
  --unchanged-line-format=inert -d|--minimal --horizon-lines=inert --speed-large-files
  --color?=inert --palette=inert --normal --help -v|--version
grep egrep fgrep: @numeric -E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp
  -e|--regexp=pat -f|--file=read -i|--ignore-case -y --no-ignore-case -v|--invert-match -w|--word-regexp
  -x|--line-regexp -c|--count --color|--colour?=inert -L|--files-without-match -l|--files-with-matches
  -m|--max-count=inert -o|--only-matching -q|--quiet|--silent -s|--no-messages -b|--byte-offset
  -H|--with-filename -h|--no-filename --label=inert -n|--line-number -T|--initial-tab -Z|--null
  -A|--after-context=inert -B|--before-context=inert -C|--context=inert -a|--text
  --binary-files=inert -D|--devices=inert -d|--directories=inert --exclude=pat --exclude-from=read
  --exclude-dir=pat --include=pat -r|--recursive -R|--dereference-recursive --line-buffered
  -U|--binary -z|--null-data --group-separator=inert --no-group-separator --help -V|--version
# -c/--check reads the files a checksum list names: a list from elsewhere.
md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum: -b|--binary --tag -t|--text
  -z|--zero -l|--length=inert --help --version
cksum: -a|--algorithm=inert --base64 --debug -l|--length=inert --raw --tag --untagged
  -z|--zero --help --version
basename: -a|--multiple -s|--suffix=inert -z|--zero --help --version
dirname: -z|--zero --help --version
readlink: -f|--canonicalize -e|--canonicalize-existing -m|--canonicalize-missing -n|--no-newline
  -q|--quiet -s|--silent -v|--verbose -z|--zero --help --version
realpath: -e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical
  -q|--quiet --relative-to=dir --relative-base=dir -s|--strip|--no-symlinks -z|--zero --help --version
nl: -b|--body-numbering=inert -d|--section-delimiter=inert -f|--footer-numbering=inert
  -h|--header-numbering=inert -i|--line-increment=inert -l|--join-blank-lines=inert
  -n|--number-format=inert -p|--no-renumber -s|--number-separator=inert -v|--starting-line-number=inert
  -w|--number-width=inert --help --version
od: -A|--address-radix=inert --endian=inert -j|--skip-bytes=inert -N|--read-bytes=inert
  -S|--strings?=inert -t|--format=inert -v|--output-duplicates -w|--width?=inert --traditional
  -a -b -c -d -f -i -l -o -s -x --help --version
base64 base32 basenc: -d|--decode -i|--ignore-garbage -w|--wrap=inert --base64 --base64url --base32
  --base32hex --base16 --base2msbf --base2lsbf --z85 --help --version
rev: -0|--zero -h|--help -V|--version
fold: -b|--bytes -s|--spaces -w|--width=inert @numeric --help --version
fmt: @numeric -c|--crown-margin -p|--prefix=inert -s|--split-only -t|--tagged-paragraph
  -u|--uniform-spacing -w|--width=inert -g|--goal=inert --help --version
expand: -i|--initial -t|--tabs=inert @numeric --help --version
unexpand: -a|--all --first-only -t|--tabs=inert --help --version
paste: -d|--delimiters=inert -s|--serial -z|--zero-terminated --help --version
comm: -1 -2 -3 --check-order --nocheck-order --output-delimiter=inert --total -z|--zero-terminated
  --help --version
join: -a=inert -e=inert -i|--ignore-case -j=inert -o=inert -t=inert -v=inert -1=inert -2=inert
  --check-order --nocheck-order --header -z|--zero-terminated --help --version
column: -t|--table -s|--separator=inert -o|--output-separator=inert -c|--output-width=inert
  -x|--fillrows -N|--table-columns=inert -R|--table-right=inert
  -J|--json -L|--keep-empty-lines -r|--tree=inert -H|--table-hide=inert -O|--table-order=inert
  -W|--table-wrap=inert -E|--table-noextreme=inert -e|--table-header-repeat -d|--table-noheadings
  -l|--table-columns-limit=inert -i|--tree-id=inert -p|--tree-parent=inert -C|--table-column=inert
  -h|--help -V|--version
strings: -a|--all -d|--data -f|--print-file-name -n|--bytes=inert -t|--radix=inert -e|--encoding=inert
  -o -s|--output-separator=inert -w|--include-all-whitespace -T|--target=inert -U|--unicode=inert
  @numeric -h|--help -v|-V|--version
xxd: @single -a|-autoskip -b|-bits -C|-capitalize -c|-cols=inert -E|-EBCDIC -e -g|-groupsize=inert -h|-help
  -i|-include -l|-len=inert -n|-name=inert -o=inert -p|-ps|-postscript|-plain -R=inert -s=inert -u -v|-version
  -d
hexdump hd: -b -c -C -d -o -x -e=inert -f=read -L?=inert -n=inert -s=inert -v -h|--help -V|--version
seq: -f|--format=inert -s|--separator=inert -w|--equal-width --help --version
sleep: --help --version
true false: @free
echo: @free
printf: @free
test [: @free
pwd: -L -P --help --version
whoami: --help --version
id: -a -Z|--context -g|--group -G|--groups -n|--name -r|--real -u|--user -z|--zero --help --version
groups: --help --version
uname arch: -a|--all -s|--kernel-name -n|--nodename -r|--kernel-release -v|--kernel-version
  -m|--machine -p|--processor -i|--hardware-platform -o|--operating-system --help --version
nproc: --all --ignore=inert --help --version
tty: -s|--silent|--quiet --help --version
uptime: -p|--pretty -s|--since -h|--help -V|--version
cal: -1|--one -3|--three -n|--months=inert -S|--span -s|--sunday -m|--monday -j|--julian
  --reform=inert --iso -y|--year -Y|--twelve -w|--week?=inert -v|--vertical --color?=inert
  -c|--columns=inert -h|--help -V|--version
free: -b|--bytes -k|--kilo -m|--mega -g|--giga --tera --peta -h|--human --si -l|--lohi -L|--line
  -t|--total -v|--committed -s|--seconds=inert -c|--count=inert -w|--wide --kibi --mebi --gibi
  --tebi --pebi --help -V|--version
locale: -a|--all-locales -m|--charmaps -c|--category-name -k|--keyword-name -v|--verbose --help
  -V|--version
getconf: -a -v=inert
which: -a -s
yes: --help --version
mktemp: -d|--directory -u|--dry-run -q|--quiet --suffix=inert -p=write --tmpdir?=write -t --help --version
tput: -T=inert -S -V -x
clear: -T=inert -V -x
file: -b|--brief -c|--checking-printout -e|--exclude=inert --exclude-quiet=inert -F|--separator=inert
  -i|--mime --mime-type --mime-encoding -k|--keep-going -l|--list -L|--dereference -h|--no-dereference
  -m|--magic-file=read -n|--no-buffer -0|--print0 -N|--no-pad -p|--preserve-date -P|--parameter=inert
  -r|--raw -s|--special-files -S|--no-sandbox -z|--uncompress -Z|--uncompress-noreport --extension
  --apple --help -v|--version
dd: @free
`})
}
