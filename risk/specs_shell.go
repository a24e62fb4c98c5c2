package risk

// The shell builtins and keywords the gate may run read-only, and tar.
// Builtins that run, rebind or write are known by what they leave out:
// set -a (every later assignment exported), set -k (assignments after a
// program's name put in its environment), set -x (PS4 expanded before
// every command); set -o and shopt take only the options the analysis
// models (risk.Command checks the names);
// hash -p (binds a name to any file), jobs -x (runs a command), history
// -a/-n/-r/-w/-s (read and write history files, add lines), wait -p (assigns
// a variable whose name may hold code). Those options make the command
// unknown. Builtins not listed here at all (enable, bind, complete, fc,
// mapfile, caller, getopts, …) are not in the knowledge base and ask.
func init() {
	specSources = append(specSources, specSource{"shell", `
(( [[ let: @free
exit return shift: @free
cd: @posix -L -P -e -@
pushd popd: @posix @numeric -n
dirs: @numeric -c -l -p -v
command: @posix -p -v -V
type: -a -f -p -P -t
hash: -r -l -t -d
help: -d -m -s
history: @posix -c -d=inert
jobs: -l -n -p -r -s
wait: -f -n
alias: @posix -p
set: @posix +a -b|+b -e|+e -f|+f -h|+h +k -m|+m -n|+n -p|+p -t|+t -u|+u -v|+v +x -B|+B -C|+C
  -E|+E -H|+H -P|+P -T|+T -o|+o=inert
declare typeset local: @posix -a|+a -A|+A -f|+f -F|+F -g|+g -i|+i -I|+I -l|+l -n|+n -r|+r -t|+t -u|+u
  -x|+x -p
readonly: @posix -a -A -f -p
export: @posix -f|+f -n|+n -p
read: @posix -a=inert -d=inert -e -i=inert -n=inert -N=inert -p=inert -r -s -t=inert -u=inert
shopt: @posix -o -p -q -s -u
trap: @posix -l -p
ulimit: -S -H -a -b -c -d -e -f -i -k -l -m -n -p -q -r -s -t -u -v -x -P -R -T
umask: @posix -p -S
unset: @posix -f -v -n
`})
	specSources = append(specSources, specSource{"tar", `
tar: -A|--catenate|--concatenate -c|--create -d|--diff|--compare --delete -r|--append -t|--list
  --test-label -u|--update -x|--extract|--get
  -C|--directory=inert -f|--file=inert -X|--exclude-from=read --exclude=pat -z|--gzip|--gunzip|--ungzip
  -j|--bzip2 -J|--xz --lzip --lzma --lzop --zstd -Z|--compress|--uncompress -a|--auto-compress
  -I|--use-compress-program=exec -v|--verbose -k|--keep-old-files --keep-newer-files --keep-directory-symlink
  --skip-old-files --overwrite --overwrite-dir --no-overwrite-dir -U|--unlink-first --recursive-unlink
  --remove-files -O|--to-stdout --to-command=exec -p|--preserve-permissions|--same-permissions
  --no-same-permissions --same-owner --no-same-owner --numeric-owner --owner=inert --group=inert
  --mode=inert --mtime=inert -m|--touch --atime-preserve?=inert --strip-components=inert
  --transform|--xform=inert -P|--absolute-names -h|--dereference --hard-dereference -l|--check-links
  --one-file-system -S|--sparse --sparse-version=inert -W|--verify --checkpoint?=inert
  --checkpoint-action=exec --totals?=inert --show-transformed-names --show-stored-names
  -R|--block-number -b|--blocking-factor=inert -B|--read-full-records -i|--ignore-zeros
  --ignore-failed-read --wildcards --no-wildcards --anchored --no-anchored --ignore-case
  --no-ignore-case --wildcards-match-slash --no-wildcards-match-slash --null --no-null --unquote
  --no-unquote --exclude-vcs --exclude-vcs-ignores --exclude-backups --exclude-caches
  --exclude-caches-under --exclude-caches-all --exclude-tag=pat --exclude-tag-under=pat
  --exclude-tag-all=pat --exclude-ignore=read --exclude-ignore-recursive=read
  -N|--newer|--after-date=inert --newer-mtime=inert --format=inert -H --posix
  -o|--old-archive|--portability -V|--label=inert --sort=inert --pax-option=inert --no-recursion
  --recursion --full-time --utc --warning=inert --quoting-style=inert --quote-chars=inert
  --no-quote-chars=inert -w|--interactive|--confirmation --index-file=write --no-seek -n|--seek
  --occurrence?=inert -G|--incremental -g|--listed-incremental=write --level=inert --backup?=inert
  --suffix=inert -s|--preserve-order|--same-order --delay-directory-restore
  --no-delay-directory-restore --acls --no-acls --selinux --no-selinux --xattrs --no-xattrs
  --xattrs-include=pat --xattrs-exclude=pat -M|--multi-volume -L|--tape-length=inert
  -F|--info-script|--new-volume-script=exec --volno-file=write --rmt-command=exec --rsh-command=exec
  --force-local --restrict --record-size=inert --hole-detection=inert --group-map=read
  --owner-map=read --clamp-mtime --one-top-level?=dir --check-device --no-check-device
  -K|--starting-file=inert --show-defaults --show-omitted-dirs --usage --help --version
`})
}

// tarOldStyle rewrites tar's traditional first word of bundled letters
// without a dash ("tar czf out.tgz dir", "tar xfC a.tar dir") into
// separate options, each letter that takes a value followed by its word,
// in order, as tar reads them. dyn is rewritten alongside.
func tarOldStyle(args []string, dyn []bool, sp *Spec) ([]string, []bool) {
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' || len(dyn) > 0 && dyn[0] {
		return args, dyn
	}
	outArgs := make([]string, 0, len(args)+len(args[0]))
	outDyn := make([]bool, 0, cap(outArgs))
	next := 1
	for i := 0; i < len(args[0]); i++ {
		c := args[0][i]
		outArgs, outDyn = append(outArgs, "-"+string(c)), append(outDyn, false)
		if o := sp.short[c]; o != nil && o.Value != ValNone && !o.Optional && next < len(args) {
			outArgs, outDyn = append(outArgs, args[next]), append(outDyn, next < len(dyn) && dyn[next])
			next++
		}
	}
	for ; next < len(args); next++ {
		outArgs, outDyn = append(outArgs, args[next]), append(outDyn, next < len(dyn) && dyn[next])
	}
	return outArgs, outDyn
}
