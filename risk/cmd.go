package risk

import "strings"

// CmdCommand returns the effect of one cmd.exe command, named as
// shell.AnalyzeCmd names it (lower case, switches such as /s lower-cased).
func CmdCommand(name string, args []string, dyn []bool) Effect {
	e := Effect{Level: Execute, Known: true}
	var ops []string
	sw := map[string]bool{}
	for i, a := range args {
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		if strings.HasPrefix(a, "/") && len(a) <= 3 {
			sw[strings.ToLower(a)] = true
			continue
		}
		ops = append(ops, a)
	}
	switch name {
	case "del", "erase":
		e.Level, e.Writes, e.Deletes = Write, ops, true
		if sw["/s"] || sw["/q"] || sw["/f"] {
			e.Level, e.Destructive = Destructive, name+" /s /q /f deletes without asking and without a way back"
		}
	case "rd", "rmdir":
		e.Level, e.Writes, e.Deletes = Write, ops, true
		if sw["/s"] {
			e.Level, e.Destructive = Destructive, name+" /s deletes a whole tree"
		}
	case "copy", "xcopy", "robocopy":
		e.Level = Write
		if len(ops) > 0 {
			e.Reads, e.Writes = ops[:len(ops)-1], ops[len(ops)-1:]
		}
		if sw["/mir"] || sw["/purge"] {
			e.Level, e.Destructive = Destructive, "robocopy /mir deletes what the source lacks"
		}
	case "move", "ren", "rename", "mkdir", "md":
		e.Level, e.Writes = Write, ops
	case "type", "more", "findstr", "find", "fc", "comp", "certutil":
		e.Level, e.Reads = Read, ops
		if (name == "findstr" || name == "find") && len(ops) > 0 {
			e.Reads = ops[1:]
		}
		if name == "certutil" {
			e.Level, e.Known, e.Exec = Execute, false, "certutil can download and decode files"
		}
	case "dir", "tree":
		e.Level, e.Reads = Read, ops
		if len(ops) == 0 {
			e.Reads = []string{"."}
		}
	case "echo", "ver", "whoami", "where", "cls", "title", "color", "hostname", "date", "time", "vol", "rem", "pause":
		e.Level = Read
	case "cd", "chdir", "pushd", "popd":
		e.Level, e.Navigation = Read, true
	case "set":
		e.Level = Read
		if len(ops) == 0 || !strings.Contains(strings.Join(ops, " "), "=") {
			e.Level, e.Secret = Credential, "prints the environment, which holds secrets"
		}
	case "format", "diskpart", "cipher", "vssadmin", "bcdedit", "shutdown":
		e.Level, e.Destructive = Destructive, name+" cannot be undone"
	case "start", "call", "cmd", "powershell", "pwsh", "wscript", "cscript", "mshta", "rundll32", "regsvr32", "reg", "schtasks", "sc":
		e.Level, e.Known, e.Exec = Execute, false, name+" runs code its words do not show"
	case "bitsadmin":
		e.Level, e.Network = Network, true
	default:
		return Command(name, args, dyn)
	}
	return e
}
