package risk

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// psPositional names, per cmdlet, the parameter its first positional
// argument binds to.
var psPositional = map[string]string{
	"remove-item": "path", "get-content": "path", "set-content": "path", "add-content": "path",
	"out-file": "filepath", "copy-item": "path", "move-item": "path", "new-item": "path",
	"get-childitem": "path", "invoke-webrequest": "uri", "invoke-restmethod": "uri",
	"start-process": "filepath", "invoke-expression": "command", "set-location": "path",
	"tee-object": "filepath", "rename-item": "path", "clear-content": "path", "mkdir": "path",
	"select-string": "pattern", "test-path": "path", "get-item": "path", "resolve-path": "path",
	"import-module": "name", "invoke-item": "path", "import-csv": "path", "import-clixml": "path", "format-hex": "path",
	"get-filehash": "path", "get-variable": "name",
}

// PowerShellCommand returns the effect of one PowerShell command, named and
// with parameters as shell.AnalyzePowerShell gives them (lower-case cmdlet
// names, completed parameter names). A cmdlet that takes its paths from
// the pipeline (gci | Get-Content) works on what the earlier stages,
// described after a PipeMark, give it. A parameter the cmdlet does
// not take makes the command unknown (see [PowerShellUnknownParameter]);
// what the rest of its words say still counts.
func PowerShellCommand(name string, args []string, dyn []bool) Effect {
	args, dyn, items := splitItems(args, dyn)
	own, ownDyn, stages := splitPipe(args, dyn)
	e, explicit := psCommand(name, own, ownDyn, items != nil)
	if e.Known && len(stages) > 0 && !explicit {
		bindPipe(&e, name, stages)
		psProviders(&e, e.Reads)
	}
	if items != nil {
		bindItems(&e, name, items)
		psProviders(&e, e.Reads)
	}
	if p := PowerShellUnknownParameter(name, own); p != "" {
		e.Known = false
		e.Level = max(e.Level, Execute)
		if name == "remove-item" && e.Destructive == "" {
			// rm -rf outside Windows is the native rm, and a parameter
			// not known may make the removal recursive.
			e.Level, e.Destructive = Destructive, "Remove-Item with "+p+", a parameter the gate does not know, may delete whole trees"
		}
	}
	return e
}

// psStage is an earlier stage of a pipeline, as PipeMark describes
// it.
type psStage struct {
	name    string
	nameDyn bool
	args    []string
	dyn     []bool
}

// splitItems splits off, behind a ItemMark, the stages that $_ comes
// from in a command of a ForEach-Object or Where-Object block; they are
// nil when the command has none, and one unknown stage when the mark is
// followed by no description.
func splitItems(args []string, dyn []bool) ([]string, []bool, []psStage) {
	i := slices.Index(args, ItemMark)
	if i < 0 {
		return args, dyn, nil
	}
	items := parseStages(args[i+1:])
	if len(items) == 0 || !strings.HasPrefix(args[i+1], PipeMark) {
		items = []psStage{{nameDyn: true}}
	}
	return args[:i], dyn[:min(i, len(dyn))], items
}

// splitPipe splits a command's words into its own and the descriptions of
// the earlier stages of its pipeline, nearest first. A description whose
// flags do not fit its words is read as an unknown stage.
func splitPipe(args []string, dyn []bool) ([]string, []bool, []psStage) {
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, PipeMark) })
	if i < 0 {
		return args, dyn, nil
	}
	return args[:i], dyn[:min(i, len(dyn))], parseStages(args[i:])
}

// parseStages reads the descriptions of stages, each behind a
// PipeMark, from the start of args.
func parseStages(args []string) []psStage {
	var stages []psStage
	i := 0
	for i < len(args) {
		flags := strings.TrimPrefix(args[i], PipeMark)
		j := i + 1
		for j < len(args) && !strings.HasPrefix(args[j], PipeMark) {
			j++
		}
		words := args[i+1 : j]
		st := psStage{nameDyn: true}
		if len(words) > 0 && len(words) == len(flags) && strings.Trim(flags, "01") == "" {
			st = psStage{name: words[0], nameDyn: flags[0] == '1', args: words[1:]}
			for _, f := range flags[1:] {
				st.dyn = append(st.dyn, f == '1')
			}
		}
		stages = append(stages, st)
		i = j
	}
	return stages
}

// psBlockOK are the cmdlets to which a script block is an ordinary
// argument: a filter, a sort key, a calculated property or the code run
// for each object, whose commands are judged as commands of the line.
var psBlockOK = map[string]bool{
	"foreach-object": true, "where-object": true, "sort-object": true, "select-object": true,
	"group-object": true, "measure-object": true, "format-table": true, "format-list": true,
}

// psCommand returns the effect of a command from its own words, and
// whether they name the paths it works on. With items, the command is in
// a ForEach-Object or Where-Object block, and a $_ given to a cmdlet that
// takes paths is kept as a path for bindItems to replace.
func psCommand(name string, args []string, dyn []bool, items bool) (Effect, bool) {
	e := Effect{Level: Execute}
	if strings.HasPrefix(name, "[") || strings.Contains(name, "::") || strings.Contains(name, ".invoke") {
		// A .NET call ([IO.File]::Delete(…), [scriptblock]::Create(…)):
		// it may do anything.
		return Effect{Level: Execute, Exec: "a .NET method call may do anything"}, true
	}
	c := psCmdlets()[name]
	takes := func(p string) bool {
		if c != nil {
			return c.value[p]
		}
		return psValue[p]
	}
	named := map[string][]string{}
	var positional []string
	item := items && (psPipeReads[name] || psPipeWrites[name])
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i < len(dyn) && dyn[i] && !(item && IsItemRef(a)) {
			if a != BlockWord || !psBlockOK[name] {
				// A block anywhere else may be a value bound late to
				// each object (-Path { $_.FullName }): not known.
				e.Unknown = true
			}
			continue
		}
		if psParamWord(a) {
			p, v, hasV := strings.Cut(a[1:], ":")
			p = strings.ToLower(p)
			if c != nil {
				if full, ok := c.param(p); ok {
					p = full
				}
			}
			switch {
			case hasV:
				named[p] = append(named[p], splitList(v)...)
			case takes(p) && i+1 < len(args) && !psParamWord(args[i+1]):
				// A parameter known to take a value. An unknown one is
				// read as a switch, so the word after it still counts as
				// a path: the cautious reading.
				if i+1 < len(dyn) && dyn[i+1] && !(args[i+1] == BlockWord && psBlockOK[name]) && !(item && IsItemRef(args[i+1])) {
					e.Unknown = true
				}
				named[p] = append(named[p], splitList(args[i+1])...)
				i++
			default:
				named[p] = append(named[p], "")
			}
			continue
		}
		positional = append(positional, splitList(a)...)
	}
	if named["path"] == nil && name == "out-file" {
		named["path"] = named["filepath"]
	}
	if v, ok := named["path"]; ok && (name == "out-file" || name == "tee-object") {
		named["filepath"] = append(named["filepath"], v...)
	}
	get := func(p string) []string {
		v := append([]string{}, named[p]...)
		if p == psPositional[name] && len(positional) > 0 {
			// A list (a,b) binds as a whole to the first positional
			// parameter; any other positional word is judged too.
			v = append(v, positional...)
		}
		return v
	}
	has := func(p string) bool { _, ok := named[p]; return ok }
	paths := func() []string { return append(get("path"), named["literalpath"]...) }
	explicit := len(paths()) > 0
	e.Known = true
	switch name {
	case "get-content", "select-string", "test-path", "get-item", "resolve-path", "import-csv", "import-clixml", "format-hex":
		e.Level, e.Reads = Read, paths()
		if name == "select-string" {
			e.Reads = append(append(append([]string{}, named["path"]...), named["literalpath"]...), positional[min(1, len(positional)):]...)
			explicit = len(e.Reads) > 0
		}
		if psPipeReads[name] && (has("filter") || has("include")) {
			// A name filter picks the files in a directory named: what it
			// keeps is read (Get-Content . -Filter *nv reads .env).
			e.Recursive, e.NameGlob = true, psNameGlob(named)
		}
	case "get-childitem":
		e.Level, e.Reads = Read, paths()
		if len(e.Reads) == 0 {
			e.Reads = []string{"."}
		}
		// A listing gives names, as ls -R does, not what the files hold;
		// a stage after it that takes the listed files reads their tree
		// (bindPipe).
		e.FollowsLinks = has("followsymlink")
		e.NameGlob = psNameGlob(named)
	case "set-content", "add-content", "clear-content", "new-item", "mkdir", "rename-item":
		e.Level, e.Writes = Write, paths()
		if name == "new-item" {
			e.Writes = append(e.Writes, named["name"]...)
		}
	case "out-file", "tee-object":
		e.Level, e.Writes = Write, append(get("filepath"), named["literalpath"]...)
	case "copy-item", "move-item":
		e.Level = Write
		src := paths()
		dst := named["destination"]
		if len(dst) == 0 && len(positional) > 1 {
			dst = positional[1:2]
		}
		e.Reads, e.Writes = src, dst
		if name == "move-item" {
			e.Writes = append(e.Writes, src...)
		}
		if has("recurse") {
			e.Opaque, e.Recursive = "a recursive copy writes whatever the source tree holds", true
		}
	case "remove-item":
		e.Level, e.Writes, e.Deletes = Write, paths(), true
		if has("recurse") || has("force") {
			e.Level, e.Destructive = Destructive, "Remove-Item -Recurse/-Force deletes without a way back"
		}
	case "invoke-webrequest", "invoke-restmethod":
		e.Level, e.Network = Network, true
		for _, u := range get("uri") {
			if !strings.Contains(u, "://") {
				u = "http://" + u
			}
			if p, err := url.Parse(u); err == nil && p.Hostname() != "" {
				e.Hosts = append(e.Hosts, strings.ToLower(p.Hostname()))
			}
		}
		e.Reads = named["infile"]
		e.Writes = named["outfile"]
	case "invoke-expression", "invoke-command", "start-process", "invoke-item", "set-alias", "new-alias", "import-module", "add-type":
		e.Level, e.Known = Execute, false
		e.Exec = name + " runs code its words do not show"
		for _, f := range get("filepath") {
			// A shell started with arguments runs a script the gate does
			// not open: that cannot be judged.
			switch strings.ToLower(strings.TrimSuffix(strings.ToLower(f), ".exe")) {
			case "pwsh", "powershell", "cmd", "bash", "sh", "wsl", "python", "python3", "node", "wscript", "cscript", "mshta":
				e.Unknown = true
			}
		}
	case "set-location", "push-location", "pop-location", "get-location":
		e.Level, e.Navigation = Read, true
	case "foreach-object", "%":
		e.Level = Read
		for _, a := range positional {
			if !strings.HasPrefix(a, "{") && !strings.HasPrefix(a, "(") {
				// ForEach-Object Delete calls that method on every object:
				// what it does cannot be told from the words.
				return Effect{Level: Execute, Unknown: true, Exec: "ForEach-Object " + a + " calls a method on every object"}, true
			}
		}
		if _, ok := named["membername"]; ok {
			return Effect{Level: Execute, Unknown: true, Exec: "ForEach-Object -MemberName calls a method on every object"}, true
		}
	case "test-connection", "resolve-dnsname", "test-netconnection", "send-mailmessage":
		e.Level, e.Network = Network, true
	case "get-variable":
		e.Level = Read
		names := get("name")
		if len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return strings.ContainsAny(n, "*?[") }) {
			// The session's variables may hold what earlier commands
			// read: a token, a password.
			e.Level, e.Secret = Credential, "lists the session's variables, which may hold secrets"
		}
	case "write-output", "write-host", "where-object", "select-object", "sort-object",
		"measure-object", "format-table", "format-list", "out-string", "out-null", "get-date", "get-command",
		"get-alias", "get-help", "get-process", "get-service", "convertto-json", "convertfrom-json", "clear-host",
		"get-filehash", "join-path", "split-path", "get-unique":
		e.Level = Read
		if name == "get-filehash" {
			e.Reads = paths()
		}
	default:
		// Not a cmdlet the gate knows: a native program, judged by the
		// bash knowledge base as far as it applies.
		return Command(name, args, dyn), true
	}
	psProviders(&e, append(append([]string{}, e.Reads...), paths()...))
	return e, explicit
}

// psProviders judges the paths of another PowerShell provider than the
// file system: the environment and the session's variables hold secrets,
// and the registry, the certificate store and the others are nothing the
// gate can resolve. A path qualified with the FileSystem provider
// (FileSystem::/etc/passwd) is the path after the qualifier.
func psProviders(e *Effect, paths []string) {
	for _, p := range paths {
		lp := strings.ToLower(p)
		if strings.HasPrefix(lp, "env:") || strings.Contains(lp, "environment::") || strings.HasPrefix(lp, "variable:") {
			e.Level, e.Secret, e.Reads = Credential, "reads the environment, which holds secrets", nil
			return
		}
	}
	strip := func(ps []string) []string {
		out := ps[:0:0]
		for _, p := range ps {
			lp := strings.ToLower(p)
			if i := strings.Index(lp, "filesystem::"); i >= 0 {
				p = p[i+len("filesystem::"):]
			} else if strings.Contains(lp, "::") || psDrive(lp) {
				e.Unknown = true
			}
			if !strings.HasPrefix(p, `\\`) && !(len(p) >= 2 && p[1] == ':') {
				p = strings.ReplaceAll(p, `\`, "/")
			}
			segs := strings.Split(p, "/")
			for i, seg := range segs {
				if psShortName().MatchString(seg) {
					// An 8.3 short name (ENV~1) may stand for any long one.
					e.Unknown = true
				}
				if t := strings.TrimRight(seg, " ."); t != "" && seg != "." && seg != ".." {
					segs[i] = t
				}
			}
			out = append(out, strings.Join(segs, "/"))
		}
		return out
	}
	e.Reads, e.Writes = strip(e.Reads), strip(e.Writes)
}

// psShortName matches a Windows 8.3 short name with a ~N tail.
var psShortName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^~]{1,6}~[0-9]{1,6}(\.[^.]{0,3})?$`) })

// psDrive reports whether p starts with a PowerShell drive other than a
// one-letter file system drive: hklm:, cert:, function:, alias:, wsman:.
func psDrive(p string) bool {
	d, _, ok := strings.Cut(p, ":")
	if !ok || len(d) < 2 || strings.ContainsAny(d, `/\.~*?[`) {
		return false
	}
	for _, r := range d {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// psNameGlob returns the one name pattern a listing keeps (-Filter, or a
// single -Include), or "" when it keeps every name or several patterns. A
// filter with a three-letter extension also matches longer ones, as the
// Windows file system matches *.htm with x.html.
func psNameGlob(named map[string][]string) string {
	var globs []string
	globs = append(globs, named["filter"]...)
	if inc := named["include"]; len(inc) == 1 {
		globs = append(globs, inc...)
	} else if len(inc) > 1 {
		return ""
	}
	if len(globs) != 1 || globs[0] == "" {
		return ""
	}
	g := globs[0]
	if i := strings.LastIndexByte(g, '.'); i >= 0 && len(g)-i == 4 && !strings.ContainsAny(g[i:], "*?[") {
		g += "*"
	}
	return g
}

// psPipeReads are the cmdlets that read the files the pipeline gives them
// when their words name none, psPipeWrites those that write them, and
// psPipeText those that take text from the pipeline as what they work on
// and only a file object as a file (Select-String).
var (
	psPipeReads  = map[string]bool{"get-content": true, "select-string": true, "get-filehash": true, "import-csv": true, "import-clixml": true, "format-hex": true}
	psPipeWrites = map[string]bool{"set-content": true, "add-content": true, "clear-content": true, "rename-item": true, "remove-item": true, "copy-item": true, "move-item": true}
	psPipeText   = map[string]bool{"select-string": true, "format-hex": true}
)

// psTextSources are the cmdlets whose output is text, not file objects.
var psTextSources = map[string]bool{
	"get-content": true, "write-output": true, "out-string": true, "convertto-json": true, "get-date": true, "join-path": true, "split-path": true,
}

// pipeSource is what the earlier stages of a pipeline give a cmdlet.
type pipeSource struct {
	paths   []string // the items, as paths
	tree    bool     // the paths are listings: every file below them
	glob    string   // the name pattern a listing keeps
	links   bool     // the listing follows links
	text    bool     // text, no file objects
	secret  string   // why the items are secrets
	unknown string   // why what it gives cannot be told, "" if it can
}

// source returns what the stages give the stage after them.
func source(stages []psStage) pipeSource {
	for _, st := range stages {
		if st.nameDyn {
			return pipeSource{unknown: "a command of the pipeline is not known until the line runs"}
		}
		switch st.name {
		case "where-object", "sort-object", "get-unique", "tee-object":
			continue // passes on some of what it is given
		case "select-object":
			if !psSubset(st) {
				return pipeSource{unknown: "Select-Object gives properties of what the pipeline holds"}
			}
			continue
		case "":
			// An expression: 'a','b' | Remove-Item.
			if slices.Contains(st.dyn, true) {
				return pipeSource{unknown: "the pipeline starts with a value not known until the line runs"}
			}
			var ps []string
			for _, a := range st.args {
				ps = append(ps, splitList(a)...)
			}
			return pipeSource{paths: ps}
		case "get-childitem", "get-item", "resolve-path":
			e, explicit := psCommand(st.name, st.args, st.dyn, false)
			if !explicit && st.name != "get-childitem" {
				continue // gives on what it is given
			}
			if e.Unknown || !e.Known || PowerShellUnknownParameter(st.name, st.args) != "" {
				return pipeSource{unknown: st.name + " in the pipeline cannot be judged"}
			}
			src := pipeSource{paths: e.Reads, secret: e.Secret}
			if st.name == "get-childitem" {
				// A listing is read as the whole tree below it, hidden
				// names included: on Windows a dot-name is not hidden.
				src.tree, src.glob, src.links = true, e.NameGlob, e.FollowsLinks
				if psHas(st, "name") && !slices.Equal(e.Reads, []string{"."}) {
					// Names relative to the listing, resolved against the
					// working directory.
					return pipeSource{unknown: "Get-ChildItem -Name gives names relative to " + strings.Join(e.Reads, ", ")}
				}
			}
			return src
		}
		if !strings.Contains(st.name, "-") || psTextSources[st.name] {
			return pipeSource{text: true}
		}
		return pipeSource{unknown: st.name + " gives objects whose paths cannot be told"}
	}
	return pipeSource{unknown: "the pipeline gives nothing the gate can tell"}
}

// psSubset reports whether a Select-Object stage passes on some of the
// objects it is given, unchanged.
func psSubset(st psStage) bool {
	for i, a := range st.args {
		if st.dyn[i] {
			continue
		}
		if !psParamWord(a) {
			if i > 0 && psParamWord(st.args[i-1]) {
				continue // a count
			}
			return false // a property
		}
		p, _, _ := strings.Cut(a[1:], ":")
		full, _ := psCmdlets()["select-object"].param(p)
		switch full {
		case "first", "last", "skip", "skiplast", "unique", "index", "skipindex", "wait", "casesensitive":
		default:
			return false
		}
	}
	return true
}

// psHas reports whether a stage gives the parameter p.
func psHas(st psStage, p string) bool {
	c := psCmdlets()[st.name]
	for i, a := range st.args {
		if st.dyn[i] || !psParamWord(a) {
			continue
		}
		n, _, _ := strings.Cut(a[1:], ":")
		if full, ok := c.param(n); ok && full == p {
			return true
		}
	}
	return false
}

// bindItems replaces, in the paths of e, the $_ of a ForEach-Object or
// Where-Object block with what the stages before the block's stage give:
// gci | % { Get-Content $_ } reads the listing's tree.
func bindItems(e *Effect, name string, items []psStage) {
	ref := func(p string) bool { return IsItemRef(p) }
	if !slices.ContainsFunc(e.Reads, ref) && !slices.ContainsFunc(e.Writes, ref) {
		return // $_ is a value, a pattern or text to write
	}
	src := source(items)
	inReads, inWrites := slices.ContainsFunc(e.Reads, ref), slices.ContainsFunc(e.Writes, ref)
	e.Reads, e.Writes = slices.DeleteFunc(e.Reads, ref), slices.DeleteFunc(e.Writes, ref)
	if src.text {
		src.unknown = "the block takes its paths from text"
	}
	switch {
	case src.unknown != "":
		e.Unknown = true
		return
	case src.secret != "":
		e.Level, e.Secret = Credential, src.secret
		return
	}
	if inReads {
		e.Reads = append(e.Reads, src.paths...)
	}
	if inWrites {
		e.Writes = append(e.Writes, src.paths...)
		e.Opaque = name + " works on every item the pipeline gives it"
	}
	if src.tree && inReads {
		e.Recursive, e.FollowsLinks = true, src.links
		if e.NameGlob == "" {
			e.NameGlob = src.glob
		}
	}
	if name == "remove-item" && inWrites {
		e.Level, e.Deletes = Destructive, true
		e.Destructive = "Remove-Item deletes every item the pipeline gives it"
	}
}

// bindPipe adds to e, the effect of a cmdlet whose words name no path,
// the paths the earlier stages of its pipeline give it.
func bindPipe(e *Effect, name string, stages []psStage) {
	if !psPipeReads[name] && !psPipeWrites[name] {
		return
	}
	src := source(stages)
	switch {
	case src.text && psPipeText[name]:
		return // text to search or show, not files
	case src.text:
		src.unknown = name + " takes its paths from text the pipeline gives it"
	}
	if src.unknown != "" {
		e.Unknown = true
		return
	}
	if src.secret != "" {
		e.Level, e.Secret = Credential, src.secret
		return
	}
	if psPipeReads[name] || name == "copy-item" || name == "move-item" {
		// What a listing gives is read: the credential walk of its tree
		// finds the .env a consumer would read or carry elsewhere.
		e.Reads = append(e.Reads, src.paths...)
		if src.tree {
			e.Recursive, e.NameGlob, e.FollowsLinks = true, src.glob, src.links
		}
	}
	if !psPipeWrites[name] {
		return
	}
	if name != "copy-item" {
		e.Writes = append(e.Writes, src.paths...)
	}
	e.Opaque = name + " works on every item the pipeline gives it"
	if name == "remove-item" {
		e.Level, e.Deletes = Destructive, true
		e.Destructive = "Remove-Item deletes every item the pipeline gives it"
	}
}

// psValue lists the parameters (of the cmdlets judged here) that take a
// value; any other parameter is read as a switch.
var psValue = map[string]bool{
	"path": true, "literalpath": true, "filepath": true, "destination": true, "value": true, "encoding": true,
	"uri": true, "method": true, "body": true, "infile": true, "outfile": true, "headers": true, "proxy": true,
	"credential": true, "contenttype": true, "argumentlist": true, "workingdirectory": true, "verb": true,
	"command": true, "include": true, "exclude": true, "filter": true, "name": true, "itemtype": true,
	"totalcount": true, "tail": true, "delimiter": true, "readcount": true, "depth": true, "pattern": true,
	"newname": true, "membername": true, "windowstyle": true, "width": true, "stream": true, "variable": true,
}

// splitList splits a PowerShell list a,b,c into its items.
func splitList(v string) []string {
	if !strings.Contains(v, ",") {
		return []string{v}
	}
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// PipeMark and ItemMark are the marks with which the PowerShell analysis
// (shell.AnalyzePowerShell, which documents them as shell.PipeMark and
// shell.ItemMark) hands a command the earlier stages of its pipeline and
// the object of a script block. A line cannot hold them: the NUL byte
// they start with is replaced when a line is read.
const (
	PipeMark = "\x00|"
	ItemMark = "\x00$"
)

// BlockWord stands, among the arguments of a PowerShell command, for a
// script block {…} given to it; the block's own commands are commands of
// the line. It is a dynamic word: the block runs, or gives a value, only
// when the command runs.
const BlockWord = "{...}"

// psItemRefs are the words that stand for the object a ForEach-Object or
// Where-Object block is given, or for its path.
var psItemRefs = map[string]bool{
	"$_": true, "$psitem": true, "$_.fullname": true, "$psitem.fullname": true, "$_.pspath": true, "$psitem.pspath": true,
}

// IsItemRef reports whether a dynamic word stands for the object a
// ForEach-Object or Where-Object block is given, or for its path.
func IsItemRef(w string) bool { return psItemRefs[strings.ToLower(w)] }
