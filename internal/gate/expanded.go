package gate

import (
	"maps"

	"github.com/toolgate/toolgate/internal/engine"
)

// shellFields are the fields of a shell tool's input whose text the engine
// reads as a shell line (see the engine's router).
var shellFields = [...]string{"command", "cmd"}

// hasShellField reports whether req's input has a field the engine reads
// as a shell line when the tool is a shell.
func hasShellField(req *engine.Request) bool {
	for _, k := range shellFields {
		if _, ok := req.Input[k]; ok {
			return true
		}
	}
	return false
}

// loggedRequest returns req as its events record it and a person is shown
// it. That is req itself, unless the words the shell makes of its command
// hold a secret ([engine.Call.WordSecrets]) that the command's text,
// redacted as written, still gives back once read as a shell line (AK{IA,}…,
// $'\x41KIA…', a nested bash -c); then it is a copy whose command is only
// markers naming the secrets' kinds, and hidden is true. The command is
// read again only for a call whose words hold a secret.
func (g *Gate) loggedRequest(req *engine.Request, call *engine.Call) (out *engine.Request, hidden bool) {
	if req == nil || call == nil {
		return req, false
	}
	kinds := call.WordSecrets()
	if len(kinds) == 0 {
		return req, false
	}
	var in map[string]any
	for _, k := range shellFields {
		v, ok := req.Input[k]
		if !ok {
			continue
		}
		red, _ := g.redact.Value(v)
		if !call.LineHoldsSecret(red) {
			continue
		}
		if in == nil {
			in = maps.Clone(req.Input)
		}
		if _, argv := v.([]any); argv {
			in[k] = []any{engine.SecretMarkers(kinds)}
		} else {
			in[k] = engine.SecretMarkers(kinds)
		}
	}
	if in == nil {
		return req, false
	}
	c := *req
	c.Input = in
	return &c, true
}
