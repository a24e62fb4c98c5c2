package risk

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// The command lines of network programs other than curl and wget: name
// lookups (dig, host, nslookup), ping and traceroute, the netcat family,
// telnet and ftp, socat, aria2c, httpie, rclone and GitHub's gh.
//
// What the tables decide, and what they leave out on purpose:
//
//   - Options that name a program to run (nc -e and -c, ncat --exec,
//     --sh-exec and --lua-exec, aria2c's --on-download-* hooks) are kind
//     exec. Options whose value is a file are read or write, so that the
//     credential and workspace checks see them (dig -k, ncat -o and
//     --ssl-key, http --output, gh --body-file).
//   - Options that read more options or commands from a file or a stream
//     are left out, so that they ask: dig -f (a batch file of queries and
//     options), aria2c --input-file and --conf-path, rclone --config. So
//     are options that open a browser (gh --web) or an editor (gh -e),
//     unix sockets (nc -U, ncat --unixsock: the socket of a daemon that
//     runs what it is told, as docker's), and servers that take
//     commands (aria2c --enable-rpc, rclone serve and rcd).
//   - telnet, ftp and nslookup without a name read commands from their
//     input, among them "!" (a local shell) and get (any local file):
//     they always run code the words do not show.
//   - gh's subcommands are allow-listed two words deep (gh pr list): alias,
//     extension, config, codespace, secret and the like are not listed.
//     gh api -F key=@FILE and --input read files; --jq programs may read
//     the environment, where gh's token lives.
const netToolSpecs = `
dig: -4 -6 -b=inert -c=inert -k=read -m -p=inert -q=inert -r -t=inert -u -v -x=inert -y=inert -h -i
host: -4 -6 -a -A -C -d -l -n -r -s -T -U -v -V -w -c=inert -m=inert -N=inert -p=inert -R=inert -t=inert
  -W=inert
nslookup: @single -all -class=inert -debug -nodebug -d2 -nod2 -domain=inert -srchlist=inert
  -search -nosearch -defname -nodefname -port=inert -querytype=inert -query=inert -type=inert
  -q=inert -recurse -norecurse -retry=inert -timeout=inert -ndots=inert -vc -novc -ignoretc
  -noignoretc -fail -nofail -sil -silent -version
ping: -4 -6 -a -A -b -B -d -D -f -h -L -n -o -O -q -R -r -U -v -V -c=inert -e=inert -F=inert -i=inert
  -I=inert -l=inert -m=inert -M=inert -N=inert -p=inert -Q=inert -s=inert -S=inert -t=inert -T=inert
  -w=inert -W=inert
traceroute: @noabbrev -4 -6 -d|--debug -F|--dont-fragment -f|--first=inert -g|--gateway=inert
  -I|--icmp -T|--tcp -U|--udp -D|--dccp -P|--protocol=inert -i|--interface=inert
  -m|--max-hops=inert -N|--sim-queries=inert -n -p|--port=inert -t|--tos=inert -l|--flowlabel=inert
  -w|--wait=inert -q|--queries=inert -r -s|--source=inert -z|--sendwait=inert -e|--extensions
  -A|--as-path-lookups -V|--version --help --sport=inert --fwmark=inert --mtu --back
  -M|--module=inert -O|--options=inert
nc netcat: -4 -6 -b -C -D -d -F -h -k -l -N -n -r -S -t -u -v -z -c=exec -e=exec -g=inert -G=inert
  -I=inert -i=inert -M=inert -m=inert -O=inert -o=write -P=inert -p=inert -q=inert -s=inert -T=inert
  -V=inert -W=inert -w=inert -X=inert -x=inert
ncat: -4 -6 -C|--crlf -c|--sh-exec=exec -e|--exec=exec --lua-exec=exec -g=inert -G=inert
  -m|--max-conns=inert -h|--help -d|--delay=inert -o|--output=write -x|--hex-dump=write
  --append-output -i|--idle-timeout=inert -p|--source-port=inert -s|--source=inert -l|--listen
  -k|--keep-open -n|--nodns -t|--telnet -u|--udp --sctp -v|--verbose -w|--wait=inert -z
  --send-only --recv-only --no-shutdown --allow=inert --allowfile=read --deny=inert
  --denyfile=read --broker --chat --proxy=inert --proxy-type=inert --proxy-auth=inert
  --proxy-dns=inert --ssl --ssl-cert=read --ssl-key=read --ssl-verify --ssl-trustfile=read
  --ssl-ciphers=inert --ssl-servername=inert --ssl-alpn=inert --version
  !--unixsock !--vsock
telnet: -4 -6 -7 -8 -E -F -K -L -N -a -c -d -f -r -x -b=inert -e=inert -k=inert -l=inert -n=write
  -X=inert
ftp: -4 -6 -A -a -d -e -g -i -n -p -t -v -P=inert
socat: @single -V -h -D -s -u -U -g -v -x -4 -6 -d -b=inert -t=inert -T=inert -S=inert
  -lf=write -ls -lm?=inert -lp=inert -lu -lh -ly?=inert -L=write -W=write -r=write -R=write
aria2c: @noabbrev -d|--dir=write -o|--out=write -c|--continue?=inert --allow-overwrite?=inert
  --auto-file-renaming?=inert -x|--max-connection-per-server=inert -s|--split=inert
  -k|--min-split-size=inert -j|--max-concurrent-downloads=inert --header=inert
  -U|--user-agent=inert --referer=inert --http-user=inert --http-passwd=inert
  --check-certificate?=inert --ca-certificate=read --certificate=read --private-key=read
  -q|--quiet?=inert --summary-interval=inert --console-log-level=inert --log-level=inert
  -l|--log=write -m|--max-tries=inert --retry-wait=inert -t|--timeout=inert
  --connect-timeout=inert --max-download-limit=inert --max-overall-download-limit=inert
  --file-allocation=inert --checksum=inert -V|--check-integrity?=inert --all-proxy=inert
  --http-proxy=inert --https-proxy=inert --no-proxy=inert -h|--help?=inert -v|--version
  --dry-run?=inert --remote-time?=inert -Z|--force-sequential?=inert --no-conf?=inert
  --show-console-readout?=inert --download-result=inert --max-file-not-found=inert
  --lowest-speed-limit=inert --conditional-get?=inert --async-dns?=inert
  -T|--torrent-file=read -M|--metalink-file=read --follow-torrent=inert --follow-metalink=inert
  --seed-time=inert --seed-ratio=inert
  --on-download-complete=exec --on-download-error=exec --on-download-pause=exec
  --on-download-start=exec --on-download-stop=exec --on-bt-download-complete=exec
http https: @noabbrev -j|--json -f|--form --multipart --boundary=inert --raw=inert -x|--compress
  --pretty=inert -s|--style=inert --unsorted --sorted --response-charset=inert
  --response-mime=inert --format-options=inert -p|--print=inert -h|--headers -m|--meta -b|--body
  -v|--verbose --all -S|--stream -o|--output=write -d|--download -c|--continue -q|--quiet
  --session=write --session-read-only=read -a|--auth=inert -A|--auth-type=inert --ignore-netrc
  --offline --proxy=inert -F|--follow --max-redirects=inert --max-headers=inert --timeout=inert
  --check-status --path-as-is --chunked --verify=inert --ssl=inert --ciphers=inert --cert=read
  --cert-key=read --cert-key-pass=inert -I|--ignore-stdin --help --manual --version --traceback
  --default-scheme=inert --debug
gh: @noabbrev --version --help
rclone: ` + rcloneGlobal + `
`

func init() {
	specSources = append(specSources, specSource{"network tools", netToolSpecs})
}

// netTools are the programs netToolEffect reads further.
var netTools = setOf("telnet ftp nslookup host dig nc netcat ncat socat http https aria2c rclone gh ping traceroute")

// netToolEffect adds to e what the words of a network program do beyond
// the kinds of its options (specs_net_tools.go): the commands telnet, ftp
// and nslookup read, dig's query options, socat's addresses, the files
// httpie's request items read, what aria2c and rclone write, and what gh's
// subcommands read, write and run.
func netToolEffect(base string, args []string, dyn []bool, p *Parsed, e *Effect) {
	run := func(why string) {
		e.Level, e.Known = Max(e.Level, Execute), false
		if e.Exec == "" {
			e.Exec = why
		}
	}
	unknown := func(word string) {
		e.Level, e.Known = Max(e.Level, Execute), false
		if e.UnknownOption == "" {
			e.UnknownOption = word
		}
	}
	var ops []string
	idx := p.Operands
	if p.Sub != nil {
		// The subcommand's operands follow its name.
		idx = slices.Concat(idx, p.Sub.Operands)
	}
	for _, i := range idx {
		if static(dyn, i) {
			ops = append(ops, args[i])
		}
	}
	switch base {
	case "telnet", "ftp":
		run(base + " runs the commands its input gives it, and \"!\" among them runs a local shell")
	case "nslookup", "host":
		if base == "nslookup" && (len(p.Operands) == 0 || !static(dyn, p.Operands[0]) || args[p.Operands[0]] == "-") {
			run("nslookup without a name to look up runs the commands its input gives it")
		}
		if len(ops) >= 2 {
			e.Hosts = appendHost(e.Hosts, ops[1]) // NAME SERVER: the server asked
		}
	case "dig":
		for _, o := range ops {
			if server, ok := strings.CutPrefix(o, "@"); ok {
				e.Hosts = appendHost(e.Hosts, server) // the server dig asks
			}
		}
		for _, o := range ops {
			if !strings.HasPrefix(o, "+") {
				continue
			}
			name, val, hasVal := strings.Cut(o[1:], "=")
			name = strings.ToLower(name)
			if k, ok := digQueryOptions[strings.TrimPrefix(name, "no")]; ok {
				if k == ValRead && hasVal {
					e.Reads = append(e.Reads, val)
				}
				continue
			}
			unknown(o)
			return
		}
	case "nc", "netcat", "ncat":
		switch {
		case p.Has("-l") && len(ops) > 0:
			// nc -l [ADDRESS] PORT: the first operand is the port or the
			// local address to listen on, no host reached.
			e.Hosts = slices.DeleteFunc(e.Hosts, func(h string) bool { return h == strings.ToLower(ops[0]) })
		case len(ops) > 0:
			e.Hosts = appendHost(e.Hosts, ops[0])
		}
		for _, v := range p.Values("-x", "--proxy") {
			e.Hosts = appendHost(e.Hosts, v)
		}
	case "ping":
		// ping [OPTION...] HOST...: each operand is a host it reaches.
		for _, o := range ops {
			e.Hosts = appendHost(e.Hosts, o)
		}
	case "traceroute":
		// traceroute [OPTION...] HOST [PACKETLEN]; -g names a gateway the
		// packets are routed through.
		if len(ops) > 0 {
			e.Hosts = appendHost(e.Hosts, ops[0])
		}
		for _, v := range p.Values("-g") {
			for _, g := range strings.Split(v, ",") {
				e.Hosts = appendHost(e.Hosts, g)
			}
		}
	case "gh":
		ghEffect(args, ops, p, e, run, unknown)
	case "rclone":
		rcloneEffect(ops, p, e, unknown)
	case "aria2c":
		for _, v := range p.Values("--all-proxy", "--http-proxy", "--https-proxy") {
			var ok bool
			if e.Hosts, ok = appendURLHost(e.Hosts, v); !ok {
				e.Problem, e.Unknown = "the host of aria2c's proxy "+v+" cannot be read", true
			}
		}
		if !p.Has("-d") {
			e.Writes = append(e.Writes, ".")
		}
		e.Level, e.Opaque = Max(e.Level, Write), "aria2c writes files named by the server, a torrent or a metalink"
		for _, o := range ops {
			if !strings.Contains(o, "://") && !strings.HasPrefix(o, "magnet:") {
				e.Reads = append(e.Reads, o) // a torrent or metalink file
			}
		}
	case "http", "https":
		// http [METHOD] URL [ITEM...]: METHOD is a word of letters only.
		first := 1
		if len(p.Operands) >= 2 && static(dyn, p.Operands[0]) && isLetters(args[p.Operands[0]]) {
			first = 2
		}
		for k, i := range p.Operands {
			if k == first-1 && static(dyn, i) {
				var ok bool
				if e.Hosts, ok = appendURLHost(e.Hosts, args[i]); !ok {
					e.Problem, e.Unknown = fmt.Sprintf("the host of %s's URL %s cannot be read", base, args[i]), true
				}
			}
			if k < first {
				continue
			}
			if !static(dyn, i) {
				e.Problem, e.Unknown = fmt.Sprintf("the request item %s of %s is not known until the line runs: it may read a file", args[i], base), true
				continue
			}
			if f, ok := httpieItemFile(args[i]); ok {
				e.Reads = append(e.Reads, f)
				if before, _, cut := strings.Cut(f, ";"); cut {
					e.Reads = append(e.Reads, before) // FILE;type=MIME
				}
			} else if f != "" {
				unknown(args[i])
				return
			}
		}
		// A session named without a "/" is a file in httpie's config
		// directory (sessions/HOST/NAME.json), which the words do not
		// name: it is written, and may hold the credentials of earlier
		// requests.
		for _, v := range p.Values("--session", "--session-read-only") {
			if !strings.Contains(v, "/") {
				e.Problem, e.Unknown = fmt.Sprintf("%s's session %s is a file in its config directory, which the words do not name", base, v), true
			}
		}
		// --proxy=PROTOCOL:URL: the proxy's host is reached.
		for _, v := range p.Values("--proxy") {
			_, u, _ := strings.Cut(v, ":")
			var ok bool
			if e.Hosts, ok = appendURLHost(e.Hosts, u); !ok {
				e.Problem, e.Unknown = fmt.Sprintf("the host of %s's proxy %s cannot be read", base, v), true
			}
		}
		if p.Has("-d") && !p.Has("-o") {
			e.Level, e.Writes = Max(e.Level, Write), append(e.Writes, ".")
			e.Opaque = base + " --download writes a file the server names"
		}
	case "socat":
		for _, o := range ops {
			if why := socatAddress(o, e); why != "" {
				unknown(why)
				return
			}
		}
	}
}

// appendHost adds the host of HOST[:PORT] (or [V6]:PORT) to hosts.
func appendHost(hosts []string, w string) []string {
	h := w
	if strings.HasPrefix(h, "[") {
		if end := strings.IndexByte(h, ']'); end > 0 {
			h = h[1:end]
		}
	} else if strings.Count(h, ":") == 1 {
		h, _, _ = strings.Cut(h, ":")
	}
	h = strings.ToLower(h)
	if h == "" || slices.Contains(hosts, h) {
		return hosts
	}
	return append(hosts, h)
}

// digQueryOptions are dig's +options, by name without a "no" prefix, and
// the kind of their value: the TLS files are read.
var digQueryOptions = func() map[string]ValueKind {
	m := map[string]ValueKind{}
	for _, n := range strings.Fields(`aaflag aaonly additional adflag all answer authority badcookie besteffort
		bufsize cdflag class cmd comments cookie crypto defname dns64prefix dnssec domain edns ednsflags
		ednsnegotiation ednsopt expandaaaa expire fail header-only https https-get https-post http-plain
		http-plain-get http-plain-post identify idnin idnout ignore keepalive keepopen multiline ndots nsid
		nssearch onesoa opcode padding qid qr question raflag rdflag recurse retry rrcomments search short
		showbadcookie showsearch sigchase split stats subnet tcflag tcp timeout tls tls-hostname topdown
		trace tries ttlid ttlunits unexpectedsrc unknownformat vc yaml zflag`) {
		m[n] = ValInert
	}
	for _, n := range []string{"tls-ca", "tls-certfile", "tls-keyfile"} {
		m[n] = ValRead
	}
	return m
}()

// socatNetAddresses are the socat address types that reach the network
// or the standard streams, by their upper-case names.
var socatNetAddresses = setOf(`TCP TCP4 TCP6 TCP-CONNECT TCP4-CONNECT TCP6-CONNECT TCP-LISTEN TCP4-LISTEN
	TCP6-LISTEN TCP-L TCP4-L TCP6-L UDP UDP4 UDP6 UDP-CONNECT UDP4-CONNECT UDP6-CONNECT UDP-LISTEN
	UDP4-LISTEN UDP6-LISTEN UDP-L UDP4-L UDP6-L UDP-SENDTO UDP4-SENDTO UDP6-SENDTO UDP-DATAGRAM
	UDP4-DATAGRAM UDP6-DATAGRAM OPENSSL OPENSSL-CONNECT OPENSSL-LISTEN SSL SSL-L OPENSSL-L
	STDIO STDIN STDOUT STDERR PROXY PROXY-CONNECT SOCKS4 SOCKS4A`)

// socatAddressOptions are the address options socat may be given after an
// address of socatNetAddresses, and the kind of their value.
var socatAddressOptions = func() map[string]ValueKind {
	m := map[string]ValueKind{}
	for _, n := range strings.Fields(`fork reuseaddr reuseport keepalive nodelay connect-timeout bind
		sourceport sp crlf crnl cr ignoreeof retry interval forever rcvbuf sndbuf pf range max-children
		backlog verify commonname cn snihost cipher ciphers method openssl-method raw echo so-reuseaddr
		so-keepalive tcp-nodelay ipv4 ipv6 proxyport proxyauth resolve shut-none shut-down shut-close
		socksport socksuser readbytes rb nonblock`) {
		m[n] = ValInert
	}
	for _, n := range []string{"cert", "certificate", "key", "cafile", "capath", "dhparam", "dh"} {
		m[n] = ValRead
	}
	return m
}()

// socatAddress reads one socat address, adding to e the files its options
// read and the hosts a proxy address reaches; it returns the part it does
// not know, or "". An address of any other type (OPEN, CREATE, GOPEN and
// the like write files, EXEC and SYSTEM run programs, UNIX-CONNECT reaches
// a local daemon), one written with quotes, brackets or escapes that
// socat reads as nested addresses, or an option not listed is unknown.
func socatAddress(a string, e *Effect) string {
	if a == "-" {
		return ""
	}
	for _, part := range strings.Split(a, "!!") {
		if part == "-" {
			continue
		}
		if strings.ContainsAny(part, "'\"\\{}()|%`$<>;!") {
			return a
		}
		head, opts, _ := strings.Cut(part, ",")
		typ, rest, _ := strings.Cut(head, ":")
		typ = strings.ToUpper(typ)
		if !socatNetAddresses[typ] {
			return a
		}
		if strings.HasPrefix(typ, "PROXY") || strings.HasPrefix(typ, "SOCKS") {
			f := strings.Split(rest, ":")
			for _, h := range f[:max(0, len(f)-1)] {
				e.Hosts = appendHost(e.Hosts, h)
			}
		}
		if opts == "" {
			continue
		}
		for _, o := range strings.Split(opts, ",") {
			name, val, hasVal := strings.Cut(o, "=")
			k, ok := socatAddressOptions[strings.ToLower(name)]
			if !ok {
				return a
			}
			if k == ValRead && hasVal {
				e.Reads = append(e.Reads, val)
			}
		}
	}
	return ""
}

// ghSubcommands are gh's subcommands the gate knows, two words deep
// ("pr.list" is gh pr list), with their options. In the text, $R stands
// for the repository option and $J for the options that choose and
// format JSON fields; every subcommand takes --help.
const ghSubcommands = `
api: -X|--method=inert -H|--header=inert -f|--raw-field=inert -F|--field=inert --input=read
  -i|--include --paginate --slurp $J --cache=inert --hostname=inert -p|--preview=inert --silent
  --verbose
browse: $R -n|--no-browser -b|--branch=inert -c|--commit?=inert -p|--projects -r|--releases
  -s|--settings -w|--wiki -a|--actions
status: -o|--org=inert -e|--exclude=inert
version:
auth.status: -h|--hostname=inert -a|--active
pr.list: $R -s|--state=inert -L|--limit=inert -l|--label=inert -a|--assignee=inert -A|--author=inert
  -B|--base=inert -H|--head=inert -S|--search=inert -d|--draft --app=inert $J
pr.view: $R -c|--comments $J
pr.diff: $R --color=inert --patch --name-only
pr.checks: $R --required --watch -i|--interval=inert --fail-fast $J
pr.status: $R -c|--conflict-status $J
pr.create: $R -t|--title=inert -b|--body=inert -F|--body-file=read -B|--base=inert -H|--head=inert
  -d|--draft -f|--fill --fill-first --fill-verbose -l|--label=inert -a|--assignee=inert
  -r|--reviewer=inert -m|--milestone=inert -p|--project=inert --no-maintainer-edit --dry-run
  -T|--template=inert
pr.comment: $R -b|--body=inert -F|--body-file=read --edit-last --create-if-none
pr.checkout: $R -b|--branch=inert -f|--force --detach --recurse-submodules
pr.merge: $R -m|--merge -r|--rebase -s|--squash --auto --disable-auto -d|--delete-branch
  -b|--body=inert -F|--body-file=read -t|--subject=inert --admin --match-head-commit=inert
  -A|--author-email=inert
pr.close: $R -c|--comment=inert -d|--delete-branch
pr.reopen: $R -c|--comment=inert
pr.ready: $R --undo
pr.review: $R -a|--approve -r|--request-changes -c|--comment -b|--body=inert -F|--body-file=read
pr.edit: $R -t|--title=inert -b|--body=inert -F|--body-file=read -B|--base=inert
  --add-label=inert --remove-label=inert --add-reviewer=inert --remove-reviewer=inert
  --add-assignee=inert --remove-assignee=inert --add-project=inert --remove-project=inert
  -m|--milestone=inert --remove-milestone
issue.list: $R -s|--state=inert -L|--limit=inert -l|--label=inert -a|--assignee=inert
  -A|--author=inert --mention=inert -m|--milestone=inert -S|--search=inert --app=inert $J
issue.view: $R -c|--comments $J
issue.status: $R $J
issue.create: $R -t|--title=inert -b|--body=inert -F|--body-file=read -l|--label=inert
  -a|--assignee=inert -m|--milestone=inert -p|--project=inert -T|--template=inert
issue.comment: $R -b|--body=inert -F|--body-file=read --edit-last --create-if-none
issue.close: $R -c|--comment=inert -r|--reason=inert
issue.reopen: $R -c|--comment=inert
issue.edit: $R -t|--title=inert -b|--body=inert -F|--body-file=read --add-label=inert
  --remove-label=inert --add-assignee=inert --remove-assignee=inert --add-project=inert
  --remove-project=inert -m|--milestone=inert --remove-milestone
repo.view: $R -b|--branch=inert $J
repo.list: -L|--limit=inert --visibility=inert --fork --source -l|--language=inert --topic=inert
  --archived --no-archived $J
repo.clone: -u|--upstream-remote-name=inert
repo.set-default: -u|--unset -v|--view
pr.update-branch: $R --rebase
secret.list variable.list: $R -e|--env=inert -o|--org=inert -u|--user $J
org.list: -L|--limit=inert
ssh-key.list gpg-key.list:
run.list: $R -L|--limit=inert -b|--branch=inert -u|--user=inert -w|--workflow=inert -e|--event=inert
  -s|--status=inert --created=inert -c|--commit=inert -a|--all $J
run.view: $R --log --log-failed -j|--job=inert -a|--attempt=inert -v|--verbose --exit-status $J
run.watch: $R -i|--interval=inert --exit-status --compact
run.rerun: $R --failed -j|--job=inert -d|--debug
run.cancel: $R
run.download: $R -D|--dir=write -n|--name=pat -p|--pattern=pat
workflow.list: $R -a|--all -L|--limit=inert $J
workflow.view: $R -r|--ref=inert -y|--yaml $J
workflow.run: $R -r|--ref=inert -f|--raw-field=inert -F|--field=inert --json
workflow.enable: $R
workflow.disable: $R
release.list: $R -L|--limit=inert --exclude-drafts --exclude-pre-releases -O|--order=inert $J
release.view: $R $J
release.download: $R -D|--dir=write -O|--output=write -p|--pattern=pat -A|--archive=inert
  --clobber --skip-existing
release.create: $R -t|--title=inert -n|--notes=inert -F|--notes-file=read --target=inert -d|--draft
  -p|--prerelease --latest?=inert --generate-notes --notes-start-tag=inert --verify-tag
  --discussion-category=inert
release.upload: $R --clobber
label.list: $R -L|--limit=inert -S|--search=inert --sort=inert --order=inert $J
label.create: $R -c|--color=inert -d|--description=inert -f|--force
cache.list: $R -L|--limit=inert -k|--key=inert -r|--ref=inert -S|--sort=inert -O|--order=inert $J
gist.list: -L|--limit=inert --public --secret
gist.view: -r|--raw -f|--filename=inert --files
gist.create: -d|--desc=inert -f|--filename=inert -p|--public
search.repos search.issues search.prs search.code search.commits: -L|--limit=inert --owner=inert
  -R|--repo=inert --language=inert --state=inert --sort=inert --order=inert --match=inert
  --label=inert --author=inert --assignee=inert --created=inert --updated=inert
  --visibility=inert --archived?=inert --topic=inert --stars=inert --extension=inert
  --filename=inert $J
`

// ghGroups are gh's subcommands that have subcommands of their own.
var ghGroups = setOf("auth pr issue repo run workflow release label cache gist search alias extension config " +
	"codespace secret variable ssh-key gpg-key org project ruleset attestation")

// ghWords joins a group of gh and its subcommand into the one word the
// table names them by (gh pr list: "pr.list"), so that one level of
// subcommands reads both. A group followed by anything else (an option,
// a word not known until the line runs) stays as it is, which no entry
// names: the line is unknown.
func ghWords(args []string, dyn []bool) ([]string, []bool) {
	if len(args) < 2 || !static(dyn, 0) || !static(dyn, 1) || !ghGroups[args[0]] || strings.HasPrefix(args[1], "-") {
		return args, dyn
	}
	out := slices.Concat([]string{args[0] + "." + args[1]}, args[2:])
	var outDyn []bool
	if len(dyn) > 0 {
		outDyn = slices.Concat([]bool{false}, dyn[min(2, len(dyn)):])
	}
	return out, outDyn
}

// ghSubcommandSource is the table of gh's subcommands, with $R and $J
// written out and --help added to each.
func ghSubcommandSource() string {
	var b strings.Builder
	for _, line := range strings.Split(ghSubcommands, "\n") {
		line = strings.ReplaceAll(line, "$R", "-R|--repo=inert")
		line = strings.ReplaceAll(line, "$J", "--json=inert -q|--jq=inert -t|--template=inert")
		if line != "" && line[0] != ' ' {
			line = "\n" + line + " @noabbrev --help"
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func netSubcommandSources() []subcommandSource {
	return []subcommandSource{
		{name: "gh subcommands", program: "gh", lazy: ghSubcommandSource},
		{name: "rclone subcommands", program: "rclone", lazy: rcloneSubcommandSource},
	}
}

// ghEffect adds to e what a gh subcommand reads, writes and runs beyond
// the kinds of its options; ops are the static operands, the subcommand
// first.
func ghEffect(args, ops []string, p *Parsed, e *Effect, run func(string), unknown func(string)) {
	if p.Sub == nil || len(ops) == 0 {
		return
	}
	q, rest := p.Sub, ops[1:]
	for _, v := range q.Values("-F") {
		// -F key=@FILE reads the value from a file, - being the input.
		if _, val, _ := strings.Cut(v, "="); strings.HasPrefix(val, "@") && val != "@-" {
			e.Reads = append(e.Reads, val[1:])
		}
	}
	// The host gh sends the request, and a token, to: --hostname, and
	// -R HOST/OWNER/REPO.
	for _, v := range q.Values("--hostname") {
		e.Hosts = appendHost(e.Hosts, v)
	}
	for _, v := range q.Values("-R") {
		if f := strings.Split(v, "/"); len(f) == 3 {
			e.Hosts = appendHost(e.Hosts, f[0])
		}
	}
	if p.SubName == "api" {
		for _, m := range q.Values("-X") {
			if strings.EqualFold(m, "DELETE") {
				e.Level, e.Destructive = Destructive, "gh api -X DELETE deletes what the endpoint names"
			}
		}
	}
	for _, v := range q.Values("-q") {
		prog := JqProgram(v)
		switch {
		case prog.Secret != "":
			e.Level, e.Secret = Max(e.Level, Credential), "--jq "+prog.Secret
		case prog.Unknown != "":
			unknown("--jq " + v)
			return
		}
	}
	switch p.SubName {
	case "browse":
		if !q.Has("-n") {
			run("gh browse opens a web browser, a program the environment chooses")
		}
	case "repo.clone":
		if slices.Contains(args[p.Operands[0]+1:], "--") {
			unknown("--") // the words after -- are git clone's options
			return
		}
		switch {
		case len(rest) >= 2:
			e.Writes = append(e.Writes, rest[1])
		case len(rest) == 1:
			e.Writes = append(e.Writes, path.Base(strings.TrimSuffix(rest[0], ".git")))
		}
		e.Level, e.Opaque = Max(e.Level, Write), "gh repo clone writes the repository's files"
	case "pr.checkout":
		e.Level, e.Writes = Max(e.Level, Write), append(e.Writes, ".")
		e.Opaque = "gh pr checkout writes the files of the pull request's branch"
	case "run.download", "release.download":
		if !q.Has("-D", "-O") {
			e.Writes = append(e.Writes, ".")
		}
		e.Level, e.Opaque = Max(e.Level, Write), "gh "+strings.Replace(p.SubName, ".", " ", 1)+" writes the files the artifacts or assets hold"
	case "release.create", "release.upload":
		// TAG FILE...: a file may carry a label after "#".
		if len(rest) > 1 {
			for _, f := range rest[1:] {
				f, _, _ = strings.Cut(f, "#")
				e.Reads = append(e.Reads, f)
			}
		}
	case "gist.create":
		for _, f := range rest {
			if f != "-" {
				e.Reads = append(e.Reads, f)
			}
		}
	}
}

// isLetters reports whether w is a non-empty word of ASCII letters.
func isLetters(w string) bool {
	return w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// httpieItemFile reads one request item of httpie (Header:Value,
// field=value, field:=json, param==value, field@FILE, field=@FILE,
// field:=@FILE): it returns the file the item reads and true, or "" and
// false when it reads none. An item with a backslash, which escapes a
// separator, returns itself and false: it is not read.
func httpieItemFile(it string) (string, bool) {
	if strings.Contains(it, `\`) {
		return it, false
	}
	i := strings.IndexAny(it, ":=@;")
	if i < 0 {
		return "", false
	}
	j := i
	for j < len(it) && strings.IndexByte(":=@", it[j]) >= 0 {
		j++
	}
	if !strings.Contains(it[i:j], "@") || it[j:] == "-" {
		return "", false
	}
	return it[j:], true
}

// rcloneSubcommands are rclone's subcommands the gate knows, with their
// own options; $G stands for the global options, which rclone takes
// after the subcommand too.
const rcloneSubcommands = `
ls lsl md5sum sha1sum size copy sync copyto moveto deletefile purge mkdir rmdir: $G
lsd: $G -R|--recursive
lsf: $G -F|--format=inert -s|--separator=inert -d|--dir-slash --dirs-only --files-only -R|--recursive
  --absolute --hash=inert --csv
lsjson: $G -R|--recursive --dirs-only --files-only --hash --hash-type=inert --original --encrypted
  --no-mimetype --no-modtime --stat
cat: $G --head=inert --tail=inert --offset=inert --count=inert --discard
check: $G --one-way --combined=write --differ=write --missing-on-src=write --missing-on-dst=write
  --match=write --error=write --download
hashsum: $G --base64 --download --output-file=write
about: $G --json --full
move: $G --delete-empty-src-dirs
delete: $G --rmdirs
rmdirs: $G --leave-root
touch: $G -C|--no-create -t|--timestamp=inert -R|--recursive --localtime
copyurl: $G -a|--auto-filename --no-clobber -p|--print-filename --stdout
rcat: $G --size=inert
listremotes: $G --long
version: $G --check
`

// rcloneGlobal are the options rclone takes before or after any
// subcommand. --config (a configuration file, whose remotes may name an
// ssh command), --password-command and the backends' own options are
// left out.
const rcloneGlobal = `@noabbrev -v|--verbose -q|--quiet -P|--progress -n|--dry-run -i|--interactive
  --transfers=inert --checkers=inert --include=pat --exclude=pat --include-from=read --exclude-from=read
  --filter=pat --filter-from=read --files-from=read --files-from-raw=read --min-size=inert
  --max-size=inert --min-age=inert --max-age=inert --max-depth=inert --stats=inert --stats-one-line
  --log-file=write --log-level=inert --retries=inert --low-level-retries=inert --timeout=inert
  --contimeout=inert --bwlimit=inert -c|--checksum --size-only --ignore-existing -u|--update
  --no-traverse --fast-list --human-readable --max-transfer=inert --max-backlog=inert
  --buffer-size=inert --use-json-log --header=inert --user-agent=inert --no-check-certificate
  --ca-cert=read --client-cert=read --client-key=read --ignore-case --ignore-size --ignore-times
  --no-update-modtime --order-by=inert -M|--metadata --immutable --exclude-if-present=inert
  --delete-excluded --delete-before --delete-during --delete-after --track-renames
  --create-empty-src-dirs --multi-thread-streams=inert -h|--help`

// rcloneLocal reports whether w, an operand of rclone, is a local path
// rather than REMOTE:PATH; it returns ok false for a remote rclone makes
// from the word itself (:BACKEND,OPTIONS:PATH or REMOTE,OPTIONS:PATH),
// whose options may name a program to run (the sftp backend's ssh).
func rcloneLocal(w string) (local, ok bool) {
	c := strings.IndexByte(w, ':')
	if c < 0 || strings.Contains(w[:c], "/") || c == 1 && isLetters(w[:1]) && len(w) > 2 && (w[2] == '\\' || w[2] == '/') {
		return true, true
	}
	if c == 0 || strings.ContainsAny(w[:c], ",'\"\\") {
		return false, false
	}
	return false, true
}

// rcloneEffect adds to e the local files an rclone subcommand reads and
// writes and what it deletes; ops are the static operands, the
// subcommand first.
func rcloneEffect(ops []string, p *Parsed, e *Effect, unknown func(string)) {
	if p.Sub == nil || len(ops) == 0 {
		return
	}
	rest := ops[1:]
	dry := p.Has("-n") || p.Sub.Has("-n")
	var local []bool
	for _, o := range rest {
		l, ok := rcloneLocal(o)
		if !ok {
			unknown(o)
			return
		}
		local = append(local, l)
	}
	read := func(k int) {
		if k >= 0 && k < len(rest) && local[k] {
			e.Reads, e.Recursive = append(e.Reads, rest[k]), true
		}
	}
	write := func(k int) {
		if k >= 0 && k < len(rest) && local[k] {
			e.Level, e.Writes = Max(e.Level, Write), append(e.Writes, rest[k])
		}
	}
	switch sub := p.SubName; sub {
	case "ls", "lsl", "lsd", "lsf", "lsjson", "md5sum", "sha1sum", "hashsum", "size", "cat", "check", "about":
		for k := range rest {
			read(k)
		}
	case "copy", "sync", "copyto", "move", "moveto":
		read(0)
		write(len(rest) - 1)
		if len(rest) > 1 && local[len(rest)-1] {
			e.Opaque = "rclone " + sub + " writes the files the source holds"
		}
		if sub == "move" || sub == "moveto" {
			write(0)
		}
		if sub == "sync" && !dry {
			e.Level, e.Destructive = Destructive, "rclone sync deletes the files of the destination that the source does not hold"
		}
	case "delete", "deletefile", "purge", "rmdir", "rmdirs", "mkdir", "touch":
		for k := range rest {
			write(k)
		}
		if sub != "mkdir" && sub != "touch" {
			e.Deletes = true
		}
		if (sub == "delete" || sub == "deletefile" || sub == "purge") && !dry {
			e.Level, e.Destructive = Destructive, "rclone "+sub+" deletes files without a way back"
		}
	case "copyurl", "rcat":
		write(len(rest) - 1)
	}
}

func rcloneSubcommandSource() string {
	return strings.ReplaceAll(rcloneSubcommands, "$G", rcloneGlobal)
}

// appendURLHost adds the host of u, a URL as httpie takes it, to hosts:
// without a scheme it is http://u, and ":PORT/PATH" is localhost. ok is
// false when u has no host that can be read (a path Go's parser refuses,
// such as %zz, which httpie sends as it is).
func appendURLHost(hosts []string, u string) (_ []string, ok bool) {
	if strings.HasPrefix(u, ":") {
		return appendHost(hosts, "localhost"), true
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
		return appendHost(hosts, pu.Hostname()), true
	}
	return hosts, false
}
