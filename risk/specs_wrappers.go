package risk

// The wrappers the shell analysis sees through: programs that run the
// program named after their options (sudo, env, timeout, nice, xargs,
// watch, …). The shell package reads their options from these specs; an
// option not listed makes the wrapped program unknown, so an option can
// never hide what runs. time -o (a file written) and env -C (a directory
// the analysis does not follow) are left out for that reason.
func init() {
	specSources = append(specSources, specSource{"wrappers", `
sudo: @posix -A -b -B -E -e -H -i -K -k -l -n -N -P -S -s -V -v -a=inert -C=inert -c=inert -D=inert
  -g=inert -p=inert -R=inert -r=inert -T=inert -t=inert -U=inert -u=inert -h?=inert
  --askpass --background --bell --edit --help --login --list --non-interactive --preserve-groups
  --remove-timestamp --reset-timestamp --set-home --shell --stdin --validate --version
  --auth-type=inert --chdir=inert --chroot=inert --close-from=inert --command-timeout=inert
  --group=inert --host=inert --login-class=inert --other-user=inert --prompt=inert --role=inert
  --type=inert --user=inert --preserve-env?=inert
doas: @posix -L -n -s -a=inert -C=inert -u=inert
timeout: @posix -v -s=inert -k=inert --foreground --preserve-status --verbose --help --version
  --signal=inert --kill-after=inert
nice: @posix @numeric -n=inert --help --version --adjustment=inert
ionice: @posix -t -c=inert -n=inert -p=inert -P=inert -u=inert --ignore --help --version --class=inert
  --classdata=inert --pid=inert --pgid=inert --uid=inert
nohup: @posix --help --version
time: @posix -p -v -q -f=inert --verbose --quiet --portability --help --version --format=inert
builtin: @posix
exec: @posix -c -l -a=inert
stdbuf: @posix -i=inert -o=inert -e=inert --help --version --input=inert --output=inert --error=inert
chrt: @posix -a -b -d -e -f -i -o -m -p -r -R -v -T=inert -P=inert -D=inert --all-tasks --batch
  --deadline --ext --fifo --idle --other --rr --reset-on-fork --max --pid --verbose --help --version
  --sched-runtime=inert --sched-period=inert --sched-deadline=inert
taskset: @posix -a -c -p --all-tasks --cpu-list --pid --help --version
setsid: @posix -c -f -w --ctty --fork --wait --help --version
unbuffer: @posix -p
xargs: @posix -0 -o -p -r -t -x -a=inert -E=inert -d=inert -I=inert -L=inert -n=inert -P=inert
  -s=inert -e?=inert -i?=inert -l?=inert --null --no-run-if-empty --verbose --interactive --exit
  --open-tty --show-limits --help --version --arg-file=inert --delimiter=inert --max-args=inert
  --max-procs=inert --max-chars=inert --process-slot-var=inert --eof?=inert --replace?=inert
  --max-lines?=inert
watch: @posix -b -c -C -e -g -p -r -t -w -x -n=inert -q=inert -d?=inert --beep --color --no-color
  --errexit --chgexit --precise --no-rerun --no-title --no-wrap --exec --help --version
  --interval=inert --equexit=inert --differences?=inert
su: @posix -f -l -m -p -P -c=inert -g=inert -G=inert -s=inert -w=inert --fast --login
  --preserve-environment --pty --help --version --command=inert --session-command=inert
  --group=inert --supp-group=inert --shell=inert --whitelist-environment=inert
env: @posix -i -0 -v -u=inert -S=inert -a=inert -P=inert --ignore-environment --null --debug
  --list-signal-handling --help --version --unset=inert --split-string=inert
  --argv0=inert --block-signal?=inert --default-signal?=inert --ignore-signal?=inert
mapfile readarray: -t -d=inert -n=inert -O=inert -s=inert -u=inert -c=inert -C=exec
`})
}
