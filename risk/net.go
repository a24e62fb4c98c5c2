package risk

import (
	"net/url"
	"path"
	"strings"
)

// netEffect adds to e what curl's or wget's words do beyond what their
// spec types (specs_net.go): the files named inside option values (curl
// -d @FILE, -F name=<FILE, -H @FILE), the files written under names taken
// from the URLs, the hosts the URLs and the proxy and resolver options
// name, and the options that read more options, commands or URLs from
// elsewhere, which no rule for the program covers. p may be a parse that
// stopped at an unknown option: what it read stands.
func netEffect(base string, args []string, dyn []bool, p *Parsed, e *Effect) {
	if base == "curl" {
		curlEffect(args, dyn, p, e)
	} else {
		wgetEffect(args, dyn, p, e)
	}
}

// runs marks e as running what its words do not show, for the reason why.
func runs(e *Effect, why string) {
	e.Level, e.Known = Max(e.Level, Execute), false
	if e.Exec == "" {
		e.Exec = why
	}
}

func addRead(e *Effect, f string) {
	if f != "" && f != "-" {
		e.Reads = append(e.Reads, f)
	}
}

func addWrite(e *Effect, f string) {
	if f != "" && f != "-" {
		e.Writes = append(e.Writes, f)
		e.Level = Max(e.Level, Write)
	}
}

func addHost(e *Effect, h string) {
	if h = strings.ToLower(strings.Trim(h, "[]")); h != "" {
		e.Hosts = append(e.Hosts, h)
	}
}

// urlScheme splits u as curl reads it: a scheme is a letter, then
// letters, digits, "+", "-" or ".", before a ":" that a "/" follows
// (file:/etc/passwd and http:/host are URLs to curl, which takes one to
// three slashes before the host). rest starts with the slashes; ok is
// false when u has no scheme.
func urlScheme(u string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(u, ':')
	if i <= 0 || i+1 >= len(u) || u[i+1] != '/' {
		return "", u, false
	}
	for j := 0; j < i; j++ {
		c := u[j]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", u, false
		}
	}
	return u[:i], u[i+1:], true
}

// hostOf returns the host of a URL or a host[:port], with or without a
// scheme, and whether it could be read: a URL whose authority does not
// parse, or that has more slashes after its scheme than curl takes, names
// a host the words do not show.
func hostOf(v string) (string, bool) {
	u := "http://" + v
	if scheme, rest, ok := urlScheme(v); ok {
		auth := strings.TrimLeft(rest, "/")
		if len(rest)-len(auth) > 3 {
			return "", false
		}
		u = scheme + "://" + auth
	} else if strings.Contains(v, "://") {
		u = v
	}
	p, err := url.Parse(u)
	if err != nil {
		return "", false
	}
	return p.Hostname(), true
}

// addURLHost adds the host of the URL or host[:port] v, or makes e
// unknown when its host cannot be read.
func addURLHost(e *Effect, v string) {
	h, ok := hostOf(v)
	if !ok {
		e.Unknown = true
		if e.Problem == "" {
			e.Problem = "the host of " + v + " cannot be read"
		}
		return
	}
	addHost(e, h)
}

// curlGlob reports whether curl expands v as a glob ({a,b}, [1-9]), the
// brackets of an IPv6 address aside.
func curlGlob(v string) bool {
	s := v
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if at := strings.IndexByte(s, '@'); at >= 0 && at < strings.IndexAny(s+"/", "/?#") {
		s = s[at+1:]
	}
	if strings.HasPrefix(s, "[") {
		if j := strings.IndexByte(s, ']'); j > 0 && strings.Trim(s[1:j], "0123456789abcdefABCDEF:.%") == "" {
			s = s[j+1:]
		}
	}
	return strings.ContainsAny(s, "{[")
}

// formFiles returns the files a curl -F value reads: those after "@" or
// "<" (name=@FILE, name=<FILE, name=@A,B, ;headers=@FILE), quoted or up
// to the next ";" or ",". It may name more than curl reads, never fewer.
func formFiles(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		if v[i] != '@' && v[i] != '<' {
			continue
		}
		for j := i + 1; j <= len(v); {
			var f string
			if j < len(v) && v[j] == '"' {
				end := strings.IndexByte(v[j+1:], '"')
				if end < 0 {
					f, j = v[j+1:], len(v)
				} else {
					f, j = v[j+1:j+1+end], j+2+end
				}
				f = strings.ReplaceAll(f, `\`, "")
			} else {
				end := strings.IndexAny(v[j:], ";,")
				if end < 0 {
					end = len(v) - j
				}
				f, j = v[j:j+end], j+end
			}
			out = append(out, f)
			if j < len(v) && v[j] == ',' {
				j++
				continue
			}
			i = j
			break
		}
	}
	return out
}

// curlWriteOutFiles returns the files a -w format writes with
// %output{FILE} (or %output{>>FILE}, appended).
func curlWriteOutFiles(v string) []string {
	var out []string
	for {
		i := strings.Index(v, "%output{")
		if i < 0 {
			return out
		}
		v = v[i+len("%output{"):]
		end := strings.IndexByte(v, '}')
		if end < 0 {
			end = len(v)
		}
		out = append(out, strings.TrimPrefix(v[:end], ">>"))
		v = v[end:]
	}
}

func curlEffect(args []string, dyn []bool, p *Parsed, e *Effect) {
	globs := !p.Has("-g") || p.Has("--no-globoff")
	remoteName := p.Has("-O") || p.Has("--remote-name-all")
	upload := p.Has("-T")
	if p.Has("-n", "--netrc-optional") {
		// The user's .netrc: its login for the URL's host, or its
		// default one for any host, goes with the request.
		addRead(e, "~/.netrc")
	}
	var outDir string
	fileDefault := false
	for _, o := range p.Options {
		if !o.HasValue {
			continue
		}
		v := o.Value
		if o.ValueIndex >= 0 && o.ValueIndex < len(dyn) && dyn[o.ValueIndex] {
			if why := curlDynamicValue(o.Name, v); why != "" {
				e.Unknown = true
				if e.Problem == "" {
					e.Problem = "the value of " + o.Spelled + " is not known until the line runs: " + why
				}
			}
			continue
		}
		switch o.Name {
		case "-d", "--data-ascii", "--data-binary", "--json":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				addRead(e, f)
			}
		case "--data-urlencode", "--url-query":
			// [name]=content sends the text; [name]@file a file.
			v = strings.TrimPrefix(v, "+")
			if _, f, ok := strings.Cut(v, "@"); ok && !strings.Contains(v[:strings.IndexByte(v, '@')], "=") {
				addRead(e, f)
			}
		case "-F":
			for _, f := range formFiles(v) {
				addRead(e, f)
			}
		case "-H", "--proxy-header":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				addRead(e, f)
			}
		case "-w":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				addRead(e, f)
			}
			for _, f := range curlWriteOutFiles(v) {
				addWrite(e, f)
			}
		case "-b":
			// A value without "=" is a file of cookies.
			if !strings.Contains(v, "=") {
				addRead(e, v)
			}
		case "-E", "--proxy-cert":
			// FILE:PASSWORD: the file is the part before the colon.
			if f, _, ok := strings.Cut(v, ":"); ok && !strings.HasPrefix(v, "pkcs11:") {
				addRead(e, f)
			}
		case "-K":
			runs(e, "curl -K reads more options from "+v+", which may read, write or send any file and reach any host")
		case "--variable":
			// name=text, name@file, %ENVNAME; the value reaches a request
			// only through an --expand- option, which is unknown.
			switch {
			case strings.HasPrefix(v, "%"):
				runs(e, "curl --variable "+v+" takes the value of an environment variable, which may hold a secret")
			case strings.Contains(v, "@") && !strings.Contains(v[:strings.IndexByte(v, '@')], "="):
				addRead(e, v[strings.IndexByte(v, '@')+1:])
			}
		case "--unix-socket", "--abstract-unix-socket":
			runs(e, "curl "+o.Spelled+" talks to the local service listening on "+v+", which may do anything")
		case "--url":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				addRead(e, f)
				runs(e, "curl --url @FILE reads the URLs from a file: the hosts it reaches are not in the words")
				continue
			}
			curlURL(v, globs, remoteName, upload, fileDefault, &outDir, e)
		case "-x", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname", "--proxy1.0", "--doh-url", "--ipfs-gateway":
			addURLHost(e, v)
		case "--dns-servers":
			for _, s := range strings.Split(v, ",") {
				addURLHost(e, s)
			}
		case "--connect-to", "--resolve":
			// --connect-to H1:P1:H2:P2 and --resolve H:P:ADDR send the
			// request elsewhere than the URL says.
			parts := strings.Split(strings.TrimPrefix(v, "+"), ":")
			if len(parts) >= 3 {
				host := strings.Join(parts[2:len(parts)-min(1, len(parts)-3)], ":")
				if o.Name == "--resolve" {
					host = strings.Join(parts[2:], ":")
				}
				for _, h := range strings.Split(host, ",") {
					addHost(e, h)
				}
			}
		case "--output-dir":
			outDir = v
		case "-T":
			if globs && curlGlob(v) {
				runs(e, "curl expands the glob in -T "+v+" into names that are not in the words")
			}
		case "--proto-default":
			fileDefault = strings.EqualFold(v, "file")
		}
	}
	for _, i := range p.Operands {
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		curlURL(args[i], globs, remoteName, upload, fileDefault, &outDir, e)
	}
	if p.Has("-J") {
		e.Opaque = "curl -J writes the file under the name the server gives"
	}
}

// curlDynamicValue says why a value of curl's option that is known only
// when the line runs (src is its source text) may name a file or a host,
// or "" when it cannot: inert text, or data whose literal start rules out
// the file forms (-H "Authorization: Bearer $TOKEN", -d "x=$V").
func curlDynamicValue(name, src string) string {
	s := strings.TrimLeft(src, `"'`)
	lit := s
	if i := strings.IndexAny(s, "$`\\"); i >= 0 {
		lit = s[:i]
	}
	switch name {
	case "-d", "--data-ascii", "--data-binary", "--json", "-H", "--proxy-header":
		if lit == "" || lit[0] == '@' {
			return "it may be @FILE, a file sent"
		}
	case "--data-urlencode", "--url-query", "-b":
		if !strings.Contains(lit, "=") || strings.ContainsAny(lit[:strings.IndexByte(lit, '=')], "@") {
			return "it may name a file sent"
		}
	case "-F", "-w", "--variable":
		return "it may name a file read or written"
	case "--url", "-x", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname", "--proxy1.0",
		"--doh-url", "--ipfs-gateway", "--dns-servers", "--connect-to", "--resolve", "--proto-default":
		return "it names a host or how a URL is read"
	}
	return ""
}

// curlURL adds what one URL of curl's reaches: its host, the local file of
// a file: URL (written when curl uploads), and the file -O writes.
func curlURL(u string, globs, remoteName, upload, fileDefault bool, outDir *string, e *Effect) {
	if globs && curlGlob(u) {
		runs(e, "curl expands the glob in "+u+" into URLs whose hosts and names are not in the words")
		return
	}
	scheme, rest, ok := urlScheme(u)
	if !ok && fileDefault {
		scheme, rest, ok = "file", "/"+strings.TrimPrefix(u, "/"), true
		if !strings.HasPrefix(u, "/") {
			runs(e, "curl --proto-default file reads "+u+" as a local file")
			return
		}
	}
	if ok && strings.EqualFold(scheme, "file") {
		// file://[host]/path or file:/path: a local file, its %XX
		// escapes decoded.
		local := rest
		if r, ok := strings.CutPrefix(rest, "//"); ok {
			i := strings.IndexByte(r, '/')
			if i < 0 {
				return
			}
			local = r[i:]
		}
		f, err := url.PathUnescape(strings.SplitN(strings.SplitN(local, "?", 2)[0], "#", 2)[0])
		if err != nil {
			runs(e, "curl reads the local file of "+u+", whose name does not decode")
			return
		}
		addRead(e, f)
		if upload {
			addWrite(e, f)
		}
		return
	}
	addURLHost(e, u)
	if remoteName {
		if name := urlFileName(u); name != "" {
			if *outDir != "" {
				name = path.Join(*outDir, name)
			}
			addWrite(e, name)
		}
	}
}

// urlFileName returns the last segment of u's path, the name curl -O and
// wget give the file they save (escapes not decoded), or "" when the path
// has none: u without its query and fragment, and without its scheme,
// taken after its last "/" (a URL with no "/" after the host names none).
func urlFileName(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if _, r, ok := strings.Cut(u, "://"); ok {
		u = r
	}
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		return u[i+1:]
	}
	return ""
}

// wgetrcInert are the wgetrc commands (as wget compares them: lower case,
// without "-" and "_") that wget -e may run without reading, writing or
// sending a file the words do not show, and without reaching a host they
// do not name: retries, waits, recursion limits, output verbosity,
// headers and the like. Any other command (post_file, output_document,
// logfile, dir_prefix, load_cookies, use_askpass, http_proxy, input, …)
// makes the command unknown.
var wgetrcInert = map[string]bool{
	"robots": true, "tries": true, "timeout": true, "connecttimeout": true, "dnstimeout": true,
	"readtimeout": true, "wait": true, "waitretry": true, "randomwait": true, "limitrate": true,
	"quota": true, "verbose": true, "quiet": true, "serverresponse": true, "showprogress": true,
	"progress": true, "dotstyle": true, "dotbytes": true, "dotsinline": true, "dotspacing": true,
	"dotsperline": true, "reclevel": true, "recursive": true, "noparent": true, "spanhosts": true,
	"domains": true, "excludedomains": true, "accept": true, "reject": true, "acceptregex": true,
	"rejectregex": true, "regextype": true, "includedirectories": true, "excludedirectories": true,
	"followtags": true, "ignoretags": true, "followftp": true, "pagerequisites": true,
	"convertlinks": true, "convertfileonly": true, "adjustextension": true, "htmlextension": true,
	"timestamping": true, "noclobber": true, "continue": true, "checkcertificate": true,
	"httpsonly": true, "inet4only": true, "inet6only": true, "preferfamily": true, "maxredirect": true,
	"header": true, "useragent": true, "referer": true, "retryconnrefused": true,
	"retryonhttperror": true, "retryonhosterror": true, "cache": true, "cookies": true,
	"keepsessioncookies": true, "dnscache": true, "ignorecase": true, "ignorelength": true, "iri": true,
	"localencoding": true, "remoteencoding": true, "restrictfilenames": true, "httpkeepalive": true,
	"compression": true, "cutdirs": true, "dirstruct": true, "addhostdir": true,
	"protocoldirectories": true, "relativeonly": true, "strictcomments": true, "contentonerror": true,
	"saveheaders": true, "spider": true, "deleteafter": true, "backupconverted": true, "backups": true,
	"useservertimestamps": true, "ifmodifiedsince": true, "passiveftp": true, "glob": true,
	"removelisting": true, "retrsymlinks": true, "secureprotocol": true, "method": true,
	"startpos": true, "defaultpage": true, "authnochallenge": true, "hsts": true, "unlink": true,
	"useproxy": true,
}

// wgetrcCommand returns the name of the wgetrc command in line as wget
// compares it, and whether line is one ("name = value").
func wgetrcCommand(line string) (string, bool) {
	name, _, ok := strings.Cut(line, "=")
	if !ok {
		return "", false
	}
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.NewReplacer("-", "", "_", "").Replace(name)
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return "", false
	}
	return name, true
}

func wgetEffect(args []string, dyn []bool, p *Parsed, e *Effect) {
	for _, o := range p.Options {
		if !o.HasValue {
			continue
		}
		switch o.Name {
		case "-e":
			if name, ok := wgetrcCommand(o.Value); !ok || !wgetrcInert[name] {
				e.Level, e.Known = Max(e.Level, Execute), false
				if e.UnknownOption == "" {
					e.UnknownOption = o.Spelled + " " + o.Value
				}
			}
		case "--config":
			runs(e, "wget --config reads wgetrc commands from "+o.Value+", which may read, write or send any file or run a program")
		case "-i":
			runs(e, "wget -i reads the URLs to fetch from "+o.Value+": the hosts it reaches are not in the words")
		}
	}
	// Without -O each URL is saved under its last path segment, in the
	// -P directory; a recursive fetch, or names the server gives, write
	// what the words do not name.
	dir := "."
	if ds := p.Values("-P"); len(ds) > 0 {
		dir = ds[len(ds)-1]
	}
	tree := p.Has("-r") || p.Has("-m") || p.Has("-p")
	switch {
	case tree:
		e.Opaque = "wget -r, -m and -p write the files the pages link to, under names the server's links give"
	case p.Has("--content-disposition") || p.Has("--trust-server-names"):
		e.Opaque = "wget writes the file under the name the server gives"
	}
	if p.Has("-b") && !p.Has("-o") && !p.Has("-a") {
		addWrite(e, "wget-log")
	}
	for _, i := range p.Operands {
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		u := args[i]
		addURLHost(e, u)
		if p.Has("-O") || p.Has("--spider") || tree {
			continue
		}
		name := urlFileName(u)
		if name == "" {
			name = "index.html"
		}
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		if strings.ContainsAny(name, "*?[") && !p.Has("--no-glob") {
			// An FTP glob: the files the server's listing names.
			e.Opaque = "wget writes the files an FTP glob matches, under the names the server lists"
			addWrite(e, dir)
			continue
		}
		addWrite(e, path.Join(dir, name))
	}
}
