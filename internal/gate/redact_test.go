package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/secrets"
)

// Secrets of the kinds the secrets package finds, planted in calls.
const (
	awsKey     = "AKIAQYLPMN5HHHFPZAM2"
	githubTok  = "ghp_R7gTq2Vx9LmN4pZs8KjW3hYb6FdC1eA0uXoI"
	urlPass    = "S3cr3tPassw0rd9x"
	bearerTok  = "abcdefghijkl0123456789XYZtokenvalue"
	privateKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAyZ2b3n0pQ8T7xV9k4L2mW6sR1tY3uI5oP7aS9dF0gH2jK4lZ\n-----END RSA PRIVATE KEY-----"
)

// rawSecrets are the substrings that must never be stored.
var rawSecrets = []string{awsKey, githubTok, urlPass, bearerTok, "MIIEowIBAAKCAQEAyZ2b3n0pQ8T7xV9k4L2mW6sR1tY3uI5oP7aS9dF0gH2jK4lZ"}

func TestRedactorString(t *testing.T) {
	keyed, plain := NewRedactor([]byte("k1")), NewRedactor(nil)
	cases := []struct {
		in, rule string
	}{
		{"aws " + awsKey + " end", "aws-access-key-id"},
		{"token=" + githubTok, "github-token"},
		{"git clone https://deploy:" + urlPass + "@git.example.com/r.git", "url-basic-auth"},
		{"curl -H 'Authorization: Bearer " + bearerTok + "' https://api.example.com", "authorization-header"},
		{"key:\n" + privateKey + "\n", "private-key"},
	}
	for _, tc := range cases {
		got := keyed.String(tc.in)
		if !strings.Contains(got, "[REDACTED:"+tc.rule+":") {
			t.Errorf("%q: got %q, want a %s marker with a hash", tc.in, got, tc.rule)
		}
		for _, s := range rawSecrets {
			if strings.Contains(got, s) {
				t.Errorf("%q: %q still holds %q", tc.in, got, s)
			}
		}
		if again := keyed.String(got); again != got {
			t.Errorf("redacting twice changed %q to %q", got, again)
		}
		if p := plain.String(tc.in); !strings.Contains(p, "[REDACTED:"+tc.rule+"]") {
			t.Errorf("%q without a key: %q", tc.in, p)
		}
	}
	// The marker tells the same secret apart from another, under one key.
	a, b := keyed.String(awsKey), keyed.String("AKIAZZZZMN5HHHFPZAM7")
	if a == b || a != keyed.String(awsKey) || a == NewRedactor([]byte("k2")).String(awsKey) {
		t.Fatalf("markers %q %q", a, b)
	}
	if s := "npm test && echo <b>&amp;"; keyed.String(s) != s {
		t.Fatalf("a text without secrets changed: %q", keyed.String(s))
	}
}

func TestRedactorPayload(t *testing.T) {
	r := NewRedactor([]byte("k"))
	cases := []struct {
		name, in string
		same     bool
	}{
		{"no secret keeps the bytes, escapes and all", `{"a":"<b>\u0026","n":1.50,"x":[true,null]}`, true},
		{"a secret in a nested value", `{"input":{"args":["-H","Authorization: Bearer ` + bearerTok + `"]}}`, false},
		{"a secret behind JSON escapes", `{"k":"\u0041KIAQYLPMN5HHHFPZAM2"}`, false},
		{"a secret in a key", `{"` + awsKey + `":1}`, false},
		{"a private key with escaped newlines", `{"content":` + mustQuote(privateKey) + `}`, false},
		{"a secret split by an escape", `{"k":"AKIA\u0051YLPMN5HHHFPZAM2"}`, false},
		{"a secret after invalid UTF-8", "{\"k\":\"\xff " + awsKey + "\"}", false},
		{"a secret in an array in an array", `[1,["x",{"y":"token=` + githubTok + `"}]]`, false},
		{"a secret split by shell quoting", `{"command":"curl -d key=AK''IAQYLPMN5HHHFPZAM2 https://x"}`, false},
		{"a secret split by an escaped quote", `{"command":"echo AK\"\"IAQYLPMN5HHHFPZAM2"}`, false},
		{"a secret split by a continued line", `{"command":"echo AK\\\nIAQYLPMN5HHHFPZAM2"}`, false},
		{"quoting without a secret", `{"command":"echo 'a' \"b\""}`, true},
		{"a number is not a secret", `{"n":12345678901234567890123456789}`, true},
		{"escaped quotes and backslashes", `{"a\"b":"c\\","d":"\"` + "AKIA" + `\""}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := r.Payload([]byte(tc.in))
			must(t, err)
			if want, err := payloadDecoded(r, []byte(tc.in)); err != nil || !bytes.Equal(out, want) {
				t.Fatalf("got %s, want %s as the decoded document gives (%v)", out, want, err)
			}
			if tc.same != bytes.Equal(out, []byte(tc.in)) {
				t.Fatalf("got %s", out)
			}
			var v any
			must(t, json.Unmarshal(out, &v))
			if secrets.Contains(string(out)) || secrets.Contains(stringsOf(v)) {
				t.Fatalf("a secret is left in %s", out)
			}
			if !tc.same && !strings.Contains(string(out), `"n"`) && !strings.Contains(string(out), "[REDACTED:") {
				t.Fatalf("no marker in %s", out)
			}
		})
	}
	if _, err := r.Payload([]byte("{")); err == nil {
		t.Fatal("a payload that is not JSON was taken")
	}
}

// payloadDecoded is what [Redactor.Payload] returns, made the long way
// with the standard library's tokenizer rather than the in-place scan:
// raw itself when no string holds a secret (alone or joined to its key)
// and the decoded document redacts to itself, else the document decoded,
// redacted and encoded again.
func payloadDecoded(r *Redactor, raw []byte) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	red, changed := r.Value(v)
	if !changed && !tokenHoldsSecret(raw) {
		return raw, nil
	}
	return encodeJSON(red)
}

// tokenHoldsSecret reports whether a string of raw, read token by token
// (the values of a key named twice too), holds a secret alone, joined to
// its key or joined to the string before it in an array, as
// [Redactor.Value] joins them.
func tokenHoldsSecret(raw []byte) bool {
	type level struct {
		object, wantKey bool
		key             string
		prev            *string // in an array, the element before when a string
	}
	var stack []level
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return err != io.EOF
		}
		var top *level
		if n := len(stack); n > 0 && stack[n-1].object {
			top = &stack[n-1]
		}
		var arr *level
		if n := len(stack); n > 0 && !stack[n-1].object {
			arr = &stack[n-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			if arr != nil {
				arr.prev = nil
			}
			if t == '{' || t == '[' {
				if top != nil {
					top.wantKey = true // after this value, a key
				}
				stack = append(stack, level{object: t == '{', wantKey: true})
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if secrets.ContainsQuoted(t) {
				return true
			}
			if top != nil && top.wantKey {
				top.key, top.wantKey = t, false
				continue
			}
			if top != nil && secrets.Contains(top.key+fieldSep+t) {
				return true
			}
			if arr != nil {
				if arr.prev != nil && secrets.Contains(*arr.prev+argSep+t) {
					return true
				}
				arr.prev = &t
				continue
			}
		default:
			if arr != nil {
				arr.prev = nil
			}
		}
		if top != nil {
			top.wantKey = true
		}
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// stringsOf joins every string and key of a decoded JSON value.
func stringsOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\n")
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

func FuzzRedactorPayload(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"<b>\u0026","n":1.50}`, `{"k":"\u0041KIAQYLPMN5HHHFPZAM2"}`,
		`{"` + awsKey + `":[1,"` + githubTok + `"]}`, `{"content":` + mustQuote(privateKey) + `}`, `[`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Add([]byte("{\"k\":\"\xff" + awsKey + "\",\"\\u0041KIA\":\"AKIA\\u0051YLPMN5HHHFPZAM2\"}"))
	r := NewRedactor([]byte("k"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := r.Payload(in)
		want, wantErr := payloadDecoded(r, in)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(out, want) {
			t.Fatalf("Payload(%q) = %q, %v; decoded and redacted it is %q, %v", in, out, err, want, wantErr)
		}
		if err != nil {
			return
		}
		// Decoded as the log's readers decode it: a number too large for
		// a float64 is still JSON.
		if _, err := decodeJSON(out); err != nil {
			t.Fatalf("redacted %q is not JSON: %v", out, err)
		}
		again, err := r.Payload(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("redacting %q twice changed it to %q (%v)", out, again, err)
		}
	})
}

// TestNoSecretAtRest: a call carrying secrets is decided on what it
// carries, while the events hold none of them, the person is shown none,
// and the question recorded without them still verifies.
func TestNoSecretAtRest(t *testing.T) {
	project, home := realDir(t), realDir(t)
	// The deny rule names the secret: only the real command matches it.
	f, err := policy.ParseRules(policy.LayerProject, nil, nil, []string{"Bash(echo " + awsKey + ")"})
	must(t, err)
	eng, store := engineAndStore(t, f, project, home)
	var shown *approval.Request
	approver := approval.ApproverFunc(func(_ context.Context, r *approval.Request) (approval.Answer, error) {
		shown = r
		return approval.Answer{Kind: approval.Deny, Message: "no; the key was " + githubTok}, nil
	})
	g, err := New(eng, store, approver, Options{LogKey: []byte("log key")})
	must(t, err)
	ctx := context.Background()

	d, err := g.Check(ctx, &engine.Request{Tool: "Bash", Input: map[string]any{"command": "echo " + awsKey}, Cwd: project, Session: "s1", Agent: "agent " + githubTok}, "")
	must(t, err)
	if d.Decision != policy.Deny || d.Reason != engine.ReasonRuleDeny {
		t.Fatalf("the call with the key: %s %s, want the deny rule's deny", d.Decision, d.Reason)
	}
	cmd := "make build AUTH='Authorization: Bearer " + bearerTok + "' URL=https://deploy:" + urlPass + "@example.com/ TOKEN=" + githubTok
	d, err = g.Check(ctx, &engine.Request{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: project, Session: "s1", Agent: "agent " + awsKey}, "")
	must(t, err)
	if d.Decision != policy.Deny || d.Reason != engine.ReasonUserDenied {
		t.Fatalf("the asked call: %s %s", d.Decision, d.Reason)
	}
	if shown == nil {
		t.Fatal("no one was asked")
	}
	b, _ := json.Marshal(shown)
	for _, s := range rawSecrets {
		if strings.Contains(string(b), s) {
			t.Fatalf("the person was shown %q: %s", s, b)
		}
	}
	if shown.SuggestedRule != "" {
		t.Fatalf("a rule was suggested from a redacted command: %q", shown.SuggestedRule)
	}
	n := 0
	for e, err := range store.Query(ctx, eventlog.Filter{Session: "s1"}) {
		must(t, err)
		n++
		for _, s := range rawSecrets {
			if strings.Contains(string(e.Payload), s) {
				t.Fatalf("event %d (%s) holds %q: %s", e.ID, e.Type, s, e.Payload)
			}
		}
		if e.Type == eventlog.TypePermissionRequested {
			if _, err := g.VerifyQuestion("s1", e.Payload); err != nil {
				t.Fatalf("the recorded question does not verify: %v", err)
			}
			if !bytes.Equal(e.Payload, shown.Recorded) {
				t.Fatalf("the question shown is not the one recorded:\n%s\n%s", shown.Recorded, e.Payload)
			}
		}
	}
	// The deny is one event that carries the call; the asked call is its
	// request, the question and the answer.
	if n != 4 {
		t.Fatalf("%d events, want 4", n)
	}
}

// TestRedactedGrantAdopted: a session approval of a call that carries a
// secret is recorded redacted and signed as recorded, so another gate with
// the key takes it up.
func TestRedactedGrantAdopted(t *testing.T) {
	project, home := realDir(t), realDir(t)
	f, err := policy.ParseRules(policy.LayerProject, nil, nil, nil)
	must(t, err)
	eng, store := engineAndStore(t, f, project, home)
	allow := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
		return approval.Answer{Kind: approval.AllowSession}, nil
	})
	key := []byte("log key")
	g, err := New(eng, store, allow, Options{LogKey: key})
	must(t, err)
	req := &engine.Request{Tool: "Bash", Input: map[string]any{"command": "make deploy TOKEN=" + githubTok}, Cwd: project, Session: "s1", Agent: "a " + awsKey}
	d, err := g.Check(context.Background(), req, "")
	must(t, err)
	if d.Decision != policy.Allow || d.Grant == "" {
		t.Fatalf("got %s %s", d.Decision, d.Reason)
	}
	g2, err := New(eng, store, nil, Options{LogKey: key})
	must(t, err)
	n := 0
	for e, err := range store.Query(context.Background(), eventlog.Filter{Session: "s1", Types: []eventlog.Type{eventlog.TypeLeaseGranted}}) {
		must(t, err)
		n++
		if strings.Contains(string(e.Payload), githubTok) || strings.Contains(string(e.Payload), awsKey) {
			t.Fatalf("the grant holds a secret: %s", e.Payload)
		}
		if ok, err := g2.Adopt(e); !ok || err != nil {
			t.Fatalf("the redacted grant was not adopted: %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d grants recorded", n)
	}
	for _, gr := range g2.Grants("s1") {
		if gr.ID == d.Grant && !strings.Contains(gr.Summary, "[REDACTED:github-token:") {
			t.Fatalf("the adopted grant shows %q", gr.Summary)
		}
	}
}

// TestSecretAcrossTheCut: a token placed where the one-line summary of a
// call, or an output preview, is cut is redacted whole; no part of it is
// shown, recorded or sent on, and the cut never splits a character.
func TestSecretAcrossTheCut(t *testing.T) {
	const tok = githubTok
	leaks := func(s string) string {
		for i := 0; i+8 <= len(tok)-4; i++ {
			if part := tok[4+i : 4+i+8]; strings.Contains(s, part) {
				return part
			}
		}
		return ""
	}
	ctx := context.Background()
	for _, at := range []int{200 - 34, 200 - 20, 200 - 6, 200 - 1} {
		t.Run(fmt.Sprintf("summary/%d", at), func(t *testing.T) {
			var shown *approval.Request
			approver := approval.ApproverFunc(func(_ context.Context, r *approval.Request) (approval.Answer, error) {
				shown = r
				return approval.Answer{Kind: approval.Deny}, nil
			})
			g, store, project := newTestGate(t, approver, Options{LogKey: []byte("log key")})
			// "Bash: " + the command; "é" is two bytes, so the cut may fall
			// inside one.
			pad := at - len("Bash: mkdir ") - 1
			cmd := "mkdir " + strings.Repeat("é", pad/2) + strings.Repeat("x", pad%2) + " " + tok + " done"
			_, err := g.Check(ctx, &engine.Request{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: project, Session: "s1"}, "")
			must(t, err)
			if shown == nil {
				t.Fatal("no one was asked")
			}
			if p := leaks(shown.Summary); p != "" || !utf8.ValidString(shown.Summary) {
				t.Fatalf("the summary shown holds %q of the token or a split character: %q", p, shown.Summary)
			}
			for e, err := range store.Query(ctx, eventlog.Filter{Session: "s1"}) {
				must(t, err)
				if p := leaks(string(e.Payload)); p != "" {
					t.Fatalf("event %s holds %q of the token: %s", e.Type, p, e.Payload)
				}
			}
		})
	}
	for _, at := range []int{PreviewBytes - 34, PreviewBytes - 6} {
		t.Run(fmt.Sprintf("preview/%d", at), func(t *testing.T) {
			out := strings.Repeat("a", at-1) + " " + tok + " " + strings.Repeat("b", 100)
			p, cut := Preview([]byte(out))
			if part := leaks(p); part != "" || !cut || len(p) > PreviewBytes {
				t.Fatalf("preview (%d bytes, cut %v) holds %q of the token", len(p), cut, part)
			}
		})
	}
}

// BenchmarkRedactorPayload redacts the permission.resolved payload of an
// allowed call that holds no secret, as the gate drafts one for every
// call decided: its strings scanned where they lie (Payload), and the
// document decoded and walked, as every payload was before the in-place
// scan.
//
//	go test ./internal/gate -run '^$' -bench RedactorPayload -benchmem
func BenchmarkRedactorPayload(b *testing.B) {
	raw, err := json.Marshal(PermissionResolved{
		ToolCallID: "tc_01JH6Z8Q4W3V5X7Y9A2B4C6D8E", Tool: "Bash", Decision: policy.Allow,
		Reason: engine.ReasonRuleAllow, Actor: ActorPolicy, Rule: "Bash(git status)",
		RuleOrigin: "/home/dev/project/.toolgate/policy.toml:3", PolicyVersion: "project=3f2a9c1b7d4e",
		Message: "allowed by the rule Bash(git status)",
		CallRequest: &CallRequest{
			Input: map[string]any{"command": "git status", "description": "Show the working tree status"},
			Cwd:   "/home/dev/project", Workspace: "/home/dev/project",
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	r := NewRedactor([]byte("k"))
	for _, bc := range []struct {
		name   string
		redact func([]byte) ([]byte, error)
	}{
		{"in-place", r.Payload},
		{"decoded", func(p []byte) ([]byte, error) {
			v, err := decodeJSON(p)
			if err != nil {
				return nil, err
			}
			if red, changed := r.Value(v); changed {
				return encodeJSON(red)
			}
			return p, nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				out, err := bc.redact(raw)
				if err != nil || len(out) != len(raw) {
					b.Fatalf("%s, %v", out, err)
				}
			}
		})
	}
}

// TestRedactorKeyValue: a secret whose kind only its key names (a
// password, an AWS secret key) is one the engine finds in a call's JSON
// input; the log must not hold it either, in the input of a call or in
// a payload.
func TestRedactorKeyValue(t *testing.T) {
	const (
		pass   = "S3cr3tPassw0rd9xQz"
		awsSec = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzKEYq9Xa1"
	)
	r := NewRedactor([]byte("k"))
	cases := []struct {
		name, in, secret string
	}{
		{"a password", `{"password":"` + pass + `"}`, pass},
		{"an AWS secret key", `{"aws_secret_access_key":"` + awsSec + `"}`, awsSec},
		{"spaces and escapes around the pair", `{"x":1, "pass\u0077ord" :  "` + pass + `"}`, pass},
		{"in an array", `[{"db":{"password":"` + pass + `"}}]`, pass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeJSON([]byte(tc.in))
			must(t, err)
			// What the engine sees: the input as JSON.
			if text, _ := json.Marshal(v); !secrets.Contains(string(text)) {
				t.Fatalf("the secrets package finds no secret in %s", text)
			}
			out, err := r.Payload([]byte(tc.in))
			must(t, err)
			if strings.Contains(string(out), tc.secret) {
				t.Errorf("Payload: %s", out)
			}
			if m, ok := v.(map[string]any); ok {
				if b, _ := json.Marshal(r.Input(m)); strings.Contains(string(b), tc.secret) {
					t.Errorf("Input: %s", b)
				}
			}
		})
	}
}

// TestRedactorDuplicateKeys: an object that names a key twice decodes to
// its last value; a secret in an earlier one must not reach the log in
// the bytes kept of a payload that decodes without one.
func TestRedactorDuplicateKeys(t *testing.T) {
	r := NewRedactor([]byte("k"))
	for _, in := range []string{
		`{"text":"token ` + githubTok + `","text":"hello"}`,
		`{"a":{"` + awsKey + `":1,"` + awsKey + `":2},"b":"` + awsKey + `"}`,
		`[{"k":"` + awsKey + `","k":"x"},"` + awsKey + `"]`,
	} {
		out, err := r.Payload([]byte(in))
		must(t, err)
		for _, s := range rawSecrets {
			if strings.Contains(string(out), s) {
				t.Errorf("Payload(%s) = %s", in, out)
			}
		}
	}
}

// TestRedactorArgv: a secret given to an option in the next word of an
// argv array is redacted, and only that word; a word that merely follows
// an option's name in an object, or in another array, is left alone.
func TestRedactorArgv(t *testing.T) {
	const pass = "S3cr3tPassw0rd9xQz"
	r := NewRedactor(nil)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"the word after --password", `{"command":["mysql","--password","` + pass + `","-e","select 1"]}`,
			`{"command":["mysql","--password","[REDACTED:option-secret]","-e","select 1"]}`},
		{"spaces around the comma", `{"command":[ "psql" , "--db-password"  ,  "` + pass + `" ]}`,
			`{"command":["psql","--db-password","[REDACTED:option-secret]"]}`},
		{"escaped option name", `{"argv":["x","--to\u006ben","` + pass + `"]}`,
			`{"argv":["x","--token","[REDACTED:option-secret]"]}`},
		{"a number between", `{"command":["--password",1,"` + pass + `"]}`, ""},
		{"a nested array between", `{"command":["--password",["` + pass + `"]]}`, ""},
		{"an object value then a key", `{"a":"--password","` + pass + `":1}`, ""},
		{"two arrays", `[["--password"],["` + pass + `"]]`, ""},
		{"the option's value low in entropy", `{"command":["tool","--password","aaaaaaaaaaaaaaaa"]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := r.Payload([]byte(tc.in))
			must(t, err)
			want := tc.want
			if want == "" {
				want = tc.in // nothing to redact: the bytes are kept
			}
			if string(out) != want {
				t.Fatalf("Payload(%s)\n got %s\nwant %s", tc.in, out, want)
			}
			if wantRef, err := payloadDecoded(r, []byte(tc.in)); err != nil || !bytes.Equal(out, wantRef) {
				t.Fatalf("got %s, the decoded document gives %s (%v)", out, wantRef, err)
			}
		})
	}
}
