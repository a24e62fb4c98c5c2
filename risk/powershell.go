package risk

import (
	"net/url"
	"strings"
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
	"import-module": "name", "invoke-item": "path",
}

// PowerShellCommand returns the effect of one PowerShell command, named and
// with parameters as shell.AnalyzePowerShell gives them (lower-case cmdlet
// names, completed parameter names).
func PowerShellCommand(name string, args []string, dyn []bool) Effect {
	e := Effect{Level: Execute}
	if strings.HasPrefix(name, "[") || strings.Contains(name, "::") || strings.Contains(name, ".invoke") {
		// A .NET call ([IO.File]::Delete(…), [scriptblock]::Create(…)):
		// it may do anything.
		return Effect{Level: Execute, Exec: "a .NET method call may do anything"}
	}
	named := map[string][]string{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			p, v, hasV := strings.Cut(a[1:], ":")
			switch {
			case hasV:
				named[p] = append(named[p], splitList(v)...)
			case psValue[p] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
				// A parameter known to take a value. An unknown one is
				// read as a switch, so the word after it still counts as
				// a path: the cautious reading.
				if i+1 < len(dyn) && dyn[i+1] {
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
	e.Known = true
	switch name {
	case "get-content", "select-string", "test-path", "get-item", "resolve-path":
		e.Level, e.Reads = Read, paths()
		if name == "select-string" {
			e.Reads = append(append(append([]string{}, named["path"]...), named["literalpath"]...), positional[min(1, len(positional)):]...)
		}
	case "get-childitem":
		e.Level, e.Reads = Read, paths()
		if len(e.Reads) == 0 {
			e.Reads = []string{"."}
		}
		e.Recursive = has("recurse")
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
				return Effect{Level: Execute, Unknown: true, Exec: "ForEach-Object " + a + " calls a method on every object"}
			}
		}
		if _, ok := named["membername"]; ok {
			return Effect{Level: Execute, Unknown: true, Exec: "ForEach-Object -MemberName calls a method on every object"}
		}
	case "test-connection", "resolve-dnsname", "test-netconnection", "send-mailmessage":
		e.Level, e.Network = Network, true
	case "write-output", "write-host", "where-object", "select-object", "sort-object",
		"measure-object", "format-table", "format-list", "out-string", "out-null", "get-date", "get-command",
		"get-alias", "get-help", "get-process", "get-service", "convertto-json", "convertfrom-json", "clear-host",
		"get-variable", "get-filehash", "join-path", "split-path":
		e.Level = Read
		if name == "get-filehash" {
			e.Reads = paths()
		}

	default:
		// Not a cmdlet the gate knows: a native program, judged by the
		// bash knowledge base as far as it applies.
		ne := Command(name, args, dyn)
		return ne
	}
	for _, p := range append(append([]string{}, e.Reads...), paths()...) {
		lp := strings.ToLower(p)
		if strings.HasPrefix(lp, "env:") || strings.Contains(lp, "environment::") || strings.HasPrefix(lp, "variable:") {
			e.Level, e.Secret, e.Reads = Credential, "reads the environment, which holds secrets", nil
			break
		}
	}
	return e
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
