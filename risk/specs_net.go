package risk

import "strings"

// The options of curl and GNU wget, in the spec language of ParseSpecs:
// every option of curl 8.x (with those of 7.x that later versions
// dropped) and of GNU wget 1.21. An option not listed makes the command
// unknown.
//
// curl 8 looks long options up by their full names only, and curl 7 took
// unambiguous prefixes: the table takes full names only (@noabbrev), so
// that an abbreviation is unknown under either. Every boolean option of
// curl has a --no- form, which curlSpec adds. curl's --expand-NAME forms
// (an option's value with {{variables}} replaced, which may hold an
// environment variable or a file's contents) are left out, and so is
// --url @FILE's reading of URLs, which the effect of curl refuses.
//
// wget parses its options with getopt_long, which takes unambiguous
// prefixes; the options left out are listed with "!" so that an
// abbreviation that may stand for one of them is unknown too. Every
// boolean option of wget has a --no- form as well. wget also takes a
// value attached to the long form of a boolean (--recursive=off); the
// table does not, so that the short and long forms stay one option, and
// such a word is unknown.
//
// Values that name files are typed read or write, so that what they name
// is checked; those that name a program or a library are exec. Options
// whose value is data that may name a file (curl -d @FILE, -F name=<FILE,
// -H @FILE, -w @FILE, -b FILE, --variable name@FILE) are typed inert here
// and read by the effect of curl (net.go), which also judges the options
// that read more options or commands from elsewhere (curl -K, wget
// --config, wget -e, wget -i).

// curlBools are curl's boolean options; each has a --no- form (or, for
// one named --no-X, an X form).
const curlBools = `-a|--append --basic -N|--no-buffer --ca-native --cert-status --no-clobber --compressed
  --compressed-ssh --create-dirs --crlf --digest -q|--disable --disable-eprt --disable-epsv
  --disallow-username-in-url --doh-cert-status --doh-insecure --eprt --epsv -f|--fail --fail-early
  --fail-with-body --false-start --follow --form-escape --ftp-create-dirs --ftp-pret --ftp-skip-pasv-ip
  --ftp-ssl --ftp-ssl-ccc --ftp-ssl-control --ftp-ssl-reqd -G|--get -g|--globoff --haproxy-protocol
  -I|--head --http0.9 --ignore-content-length --include -k|--insecure -j|--junk-session-cookies
  --no-keepalive -l|--list-only -L|--location --location-trusted --mail-rcpt-allowfails -M|--manual
  --mptcp --negotiate -n|--netrc --netrc-optional --npn --no-alpn --ntlm --out-null -Z|--parallel
  --parallel-immediate --path-as-is --post301 --post302 --post303 -#|--progress-bar
  --no-progress-meter --proxy-anyauth --proxy-basic --proxy-ca-native --proxy-digest --proxy-http2
  --proxy-insecure --proxy-negotiate --proxy-ntlm --proxy-ssl-allow-beast --proxy-ssl-auto-client-cert
  -p|--proxytunnel --raw -J|--remote-header-name -O|--remote-name --remote-name-all -R|--remote-time
  --remove-on-error --retry-all-errors --retry-connrefused --sasl-ir --no-sessionid -S|--show-error
  -i|--show-headers -s|--silent --skip-existing --socks5-basic --socks5-gssapi --socks5-gssapi-nec --ssl
  --ssl-allow-beast --ssl-auto-client-cert --ssl-no-revoke --ssl-reqd --ssl-revoke-best-effort
  --styled-output --suppress-connect-headers --tcp-fastopen --tcp-nodelay --tftp-no-options
  --tls-earlydata --tr-encoding --trace-ids --trace-time -B|--use-ascii -v|--verbose -V|--version --xattr`

// curlOptions are curl's other options: flags without a --no- form, and
// those that take a value.
const curlOptions = `
  --anyauth --ftp-pasv -0|--http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 --http3-only
  -4|--ipv4 -6|--ipv6 -:|--next --proxy-tlsv1 -2|--sslv2 -3|--sslv3 -1|--tlsv1 --tlsv1.0 --tlsv1.1
  --tlsv1.2 --tlsv1.3 --dump-ca-embed
  --abstract-unix-socket=exec --unix-socket=exec --engine=exec
  --alt-svc=write -c|--cookie-jar=write -D|--dump-header=write --etag-save=write --hsts=write
  --libcurl=write -o|--output=write --output-dir=write --ssl-sessions=write --stderr=write
  --trace=write --trace-ascii=write
  --cacert=read --capath=dir -E|--cert=read -K|--config=read --crlfile=read --egd-file=read
  --etag-compare=read --key=read --knownhosts=read --netrc-file=read --pinnedpubkey=read
  --proxy-cacert=read --proxy-capath=dir --proxy-cert=read --proxy-crlfile=read --proxy-key=read
  --proxy-pinnedpubkey=read --pubkey=read --random-file=read -z|--time-cond=read -T|--upload-file=read
  --aws-sigv4=inert --cert-type=inert --ciphers=inert --connect-timeout=inert --connect-to=inert
  -C|--continue-at=inert -b|--cookie=inert --create-file-mode=inert --curves=inert -d|--data=inert
  --data-ascii=inert --data-binary=inert --data-raw=inert --data-urlencode=inert --delegation=inert
  --dns-interface=inert --dns-ipv4-addr=inert --dns-ipv6-addr=inert --dns-servers=inert --doh-url=inert
  --ech=inert --expect100-timeout=inert -F|--form=inert --form-string=inert --ftp-account=inert
  --ftp-alternative-to-user=inert --ftp-method=inert -P|--ftp-port=inert --ftp-ssl-ccc-mode=inert
  --happy-eyeballs-timeout-ms=inert --haproxy-clientip=inert -H|--header=inert -h|--help=inert
  --hostpubmd5=inert --hostpubsha256=inert --interface=inert --ip-tos=inert --ipfs-gateway=inert
  --json=inert --keepalive-cnt=inert --keepalive-time=inert --key-type=inert --krb=inert
  --limit-rate=inert --local-port=inert --login-options=inert --mail-auth=inert --mail-from=inert
  --mail-rcpt=inert --max-filesize=inert --max-redirs=inert -m|--max-time=inert --noproxy=inert
  --oauth2-bearer=inert --parallel-max=inert --parallel-max-host=inert --pass=inert --preproxy=inert
  --proto=inert --proto-default=inert --proto-redir=inert -x|--proxy=inert --proxy-cert-type=inert
  --proxy-ciphers=inert --proxy-header=inert --proxy-key-type=inert --proxy-pass=inert
  --proxy-service-name=inert --proxy-tls13-ciphers=inert --proxy-tlsauthtype=inert
  --proxy-tlspassword=inert --proxy-tlsuser=inert -U|--proxy-user=inert --proxy1.0=inert
  -Q|--quote=inert -r|--range=inert --rate=inert -e|--referer=inert --request-target=inert
  -X|--request=inert --resolve=inert --retry=inert --retry-delay=inert --retry-max-time=inert
  --sasl-authzid=inert --service-name=inert --sigalgs=inert --socks4=inert --socks4a=inert
  --socks5=inert --socks5-gssapi-service=inert --socks5-hostname=inert -Y|--speed-limit=inert
  -y|--speed-time=inert -t|--telnet-option=inert --tftp-blksize=inert --tls-max=inert
  --tls13-ciphers=inert --tlsauthtype=inert --tlspassword=inert --tlsuser=inert --trace-config=inert
  --upload-flags=inert --url=inert --url-query=inert -u|--user=inert -A|--user-agent=inert
  --variable=inert --vlan-priority=inert -w|--write-out=inert`

// wgetBools are wget's boolean options; each has a --no- form.
const wgetBools = `-E|--adjust-extension --ask-password --auth-no-challenge -b|--background -K|--backup-converted
  --cache --check-certificate --clobber --content-disposition --content-on-error -c|--continue
  --convert-file-only -k|--convert-links --cookies -d|--debug --delete-after --directories --dns-cache
  --follow-ftp -x|--force-directories -F|--force-html --ftps-clear-data-connection --ftps-fallback-to-ftp
  --ftps-implicit --ftps-resume-ssl --glob --host-directories --hsts --html-extension --http-keep-alive
  --https-only --if-modified-since --ignore-case --ignore-length -4|--inet4-only -6|--inet6-only --iri
  --keep-session-cookies -m|--mirror --netrc -p|--page-requisites --parent --passive-ftp
  --preserve-permissions --protocol-directories --proxy -q|--quiet --random-wait -r|--recursive
  -L|--relative --remove-listing --retr-symlinks --retry-connrefused --retry-on-host-error
  --save-headers -S|--server-response --show-progress -H|--span-hosts --spider --strict-comments
  -N|--timestamping --trust-server-names --unlink --use-server-timestamps -v|--verbose --warc-cdx
  --warc-compression --warc-digests --warc-keep-log --xattr`

// wgetOptions are wget's other options.
const wgetOptions = `
  -h|--help -V|--version -n|--no=inert --dont-remove-listing --no-config
  -e|--execute=code --use-askpass=exec
  -o|--output-file=write -a|--append-output=write -O|--output-document=write
  -P|--directory-prefix=write --rejected-log=write --save-cookies=write --hsts-file=write
  --warc-file=write --warc-tempdir=write
  --config=read -i|--input-file=read --load-cookies=read --post-file=read --body-file=read
  --certificate=read --private-key=read --ca-certificate=read --ca-directory=dir --crl-file=read
  --pinnedpubkey=read --egd-file=read --random-file=read --warc-dedup=read
  -A|--accept=pat -R|--reject=pat --accept-regex=pat --reject-regex=pat -I|--include-directories=pat
  -X|--exclude-directories=pat
  -B|--base=inert --backups=inert --bind-address=inert --body-data=inert --certificate-type=inert
  --ciphers=inert --compression=inert --connect-timeout=inert --cut-dirs=inert --default-page=inert
  --dns-timeout=inert -D|--domains=inert --exclude-domains=inert --follow-tags=inert
  --ftp-password=inert --ftp-user=inert --header=inert --http-passwd|--http-password=inert
  --http-user=inert --ignore-tags=inert -l|--level=inert --limit-rate=inert --local-encoding=inert
  --max-redirect=inert --method=inert --password=inert --post-data=inert --prefer-family=inert
  --private-key-type=inert --progress=inert --proxy-passwd|--proxy-password=inert --proxy-user=inert
  -Q|--quota=inert --read-timeout=inert --referer=inert --regex-type=inert --remote-encoding=inert
  --report-speed=inert --restrict-file-names=inert --retry-on-http-error=inert --secure-protocol=inert
  --start-pos=inert -T|--timeout=inert -t|--tries=inert --user=inert -U|--user-agent=inert
  -w|--wait=inert --waitretry=inert --warc-header=inert --warc-max-size=inert -Y=inert
  !--input-metalink !--metalink-index !--metalink-over-http !--preferred-location !--keep-badhash
  !--bind-dns-address !--dns-servers !--htmlify !--no-htmlify !--dot-style !--no-keep-badhash`

// curlSpec and wgetSpec write curl's and wget's entries with the --no-
// forms of their boolean options, each at its program's first lookup
// (builtEntries), so that a process that looks neither up does not write
// them.
func curlSpec() string {
	return "curl: @noabbrev " + curlBools + "\n  " + noForms(curlBools) + curlOptions + "\n"
}

func wgetSpec() string {
	return "wget: " + wgetBools + "\n  " + noForms(wgetBools) + wgetOptions + "\n"
}

// noForms returns the opposite spellings of the boolean options in list:
// --no-X for --X, and --X for --no-X.
func noForms(list string) string {
	var b strings.Builder
	for _, tok := range strings.Fields(list) {
		long := tok[strings.LastIndexByte(tok, '|')+1:]
		if !strings.HasPrefix(long, "--") {
			continue
		}
		name := long[2:]
		if n, ok := strings.CutPrefix(name, "no-"); ok {
			b.WriteString(" --" + n)
		} else {
			b.WriteString(" --no-" + name)
		}
	}
	return b.String()
}
