package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/secrets"
)

// TestWordSecrets: a secret that only the words the shell makes of a line
// show is found in those words, the labels of the call's units give it
// back in no form, and LineHoldsSecret tells a text that still gives it
// back from one that does not.
func TestWordSecrets(t *testing.T) {
	const (
		key  = "AKIAQYLPMN5HHHFPZAM2"
		tail = "QYLPMN5HHHFPZAM2"
	)
	w := newWorld(t)
	set, err := policy.Merge()
	must(t, err)
	e, err := New(Options{Policy: Fixed(set), Home: w.home})
	must(t, err)
	for _, tc := range []struct {
		name    string
		command any
		// kinds are the kinds WordSecrets names; nil for a clean line.
		kinds []string
		// gives: the command's text, redacted as written, still gives
		// the secret back once read as a line.
		gives bool
	}{
		{"clean", "git status", nil, false},
		{"as written", "echo " + key, []string{"aws-access-key-id"}, false},
		{"quoted", `echo AK"IA"` + tail, []string{"aws-access-key-id"}, false},
		{"brace list", "echo AK{IA,}" + tail, []string{"aws-access-key-id"}, true},
		{"ANSI-C hex", `echo $'\x41KIA` + tail + "'", []string{"aws-access-key-id"}, true},
		{"assignment", `K=$'\x41KIA` + tail + "' env", []string{"aws-access-key-id"}, true},
		{"redirection", `echo hi > $'\x41KIA` + tail + "'", []string{"aws-access-key-id"}, true},
		{"nested shell", "sh -c 'echo AK{IA,}" + tail + "'", []string{"aws-access-key-id"}, true},
		{"argv", []any{"sh", "-c", "echo AK{IA,}" + tail}, []string{"aws-access-key-id"}, true},
		{"argv, plain words", []any{"echo", key}, []string{"aws-access-key-id"}, false},
		{"across words", `echo password = $'\x53'3cr3tPassw0rd9xQz`, []string{"generic-secret"}, true},
		{"header across words", `echo Authorization: Bearer $'\x41'bcdefghijklmnopqrstu`, []string{"authorization-header"}, true},
		{"across words, as written", "echo password = S3cr3tPassw0rd9xQz", []string{"generic-secret"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, call := e.Decide(context.Background(), &Request{Tool: "Bash", Input: map[string]any{"command": tc.command}, Cwd: w.project}, nil)
			if call == nil {
				t.Fatal("no call")
			}
			if got := call.WordSecrets(); !slices.Equal(got, tc.kinds) {
				t.Fatalf("WordSecrets() = %q, want %q", got, tc.kinds)
			}
			for _, u := range call.Units {
				if secrets.Contains(u.Label) || strings.Contains(u.Label, tail) && !strings.Contains(u.Label, "[REDACTED:") {
					t.Fatalf("label %q", u.Label)
				}
				if call.dialect.lineHoldsSecret(u.Label) && len(tc.kinds) > 0 {
					t.Fatalf("label %q gives the secret back", u.Label)
				}
			}
			var red any = secrets.RedactQuoted(stringOf(tc.command))
			if argv, ok := tc.command.([]any); ok {
				r := make([]any, len(argv))
				for i, a := range argv {
					r[i] = secrets.RedactQuoted(a.(string))
				}
				red = r
			}
			if got := call.LineHoldsSecret(red); got != tc.gives {
				t.Fatalf("LineHoldsSecret(%q) = %v, want %v", red, got, tc.gives)
			}
			if !call.LineHoldsSecret(tc.command) && tc.kinds != nil {
				t.Fatalf("LineHoldsSecret of the command itself is false")
			}
		})
	}
	// What cannot be read counts as holding a secret.
	var c *Call
	for _, v := range []any{"echo 'unclosed", 42, []any{"echo", 1}, []any{}} {
		if !c.LineHoldsSecret(v) {
			t.Errorf("LineHoldsSecret(%#v) = false", v)
		}
	}
	if got := SecretMarkers(nil); got != "[REDACTED:secret]" {
		t.Errorf("SecretMarkers(nil) = %q", got)
	}
}

// stringOf is v when it is a string, else "".
func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// TestUnescapeOutput: the escapes echo -e and printf read become the
// characters they stand for; anything else is kept as written.
func TestUnescapeOutput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`plain`, `plain`},
		{`\x41B`, `AB`},
		{`\101B`, `AB`},
		{`\0101B`, `AB`},
		{`\u0041B`, `AB`},
		{`\U00000041B`, `AB`},
		{`\q\x`, `\q\x`},
		{`a\`, `a\`},
		{`\xZZ`, `\xZZ`},
	} {
		if got := unescapeOutput(tc.in); got != tc.want {
			t.Errorf("unescapeOutput(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
