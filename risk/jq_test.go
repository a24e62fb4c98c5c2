package risk

import (
	"testing"
)

var jqCases = []progCase{
	{src: `.`},
	{src: `.name`},
	{src: `.dependencies | keys[]`},
	{src: `.environment`},
	{src: `.env`},
	{src: `."env"`},
	{src: `"env"`},
	{src: `{env}`},
	{src: `{a: 1, env: .x}`},
	{src: `. as {env: $e} | $e`},
	{src: `[.[] | select(.name | test("env"))]`},
	{src: `"\(.a) and \(.b | length)"`},
	{src: `@sh "echo \(.cmd)"`},
	{src: `$__loc__`},
	{src: `input_filename, input, [inputs]`},
	{src: `def f: .a; f # env`},
	{src: `reduce .[] as $x (0; . + $x)`},
	{src: `.a // "default" | ascii_downcase`},
	{src: `$ARGS.named`},

	{src: `env`, kind: "secret"},
	{src: `env.HOME`, kind: "secret"},
	{src: `env|keys`, kind: "secret"},
	{src: `[env]`, kind: "secret"},
	{src: `$ENV`, kind: "secret"},
	{src: `$ENV.X`, kind: "secret"},
	{src: `$ ENV`, kind: "secret"},
	{src: `{$ENV}`, kind: "secret"},
	{src: `{a: env}`, kind: "secret"},
	{src: `{a: 1, b: 2 | env}`, kind: "secret"},
	{src: `"\(env.AWS_SECRET_ACCESS_KEY)"`, kind: "secret"},
	{src: `"a\("b\(env)")"`, kind: "secret"},
	{src: `strenv(TOKEN)`, kind: "secret"},
	{src: `.a = env(HOME)`, kind: "secret"},
	{src: `.a | envsubst`, kind: "secret"},

	{src: `import "lib" as lib; lib::f`, kind: "unknown"},
	{src: `include "lib"; .`, kind: "unknown"},
	{src: `"x" | modulemeta`, kind: "unknown"},
	{src: `load("secrets.yaml")`, reads: []string{"secrets.yaml"}},
	{src: `load_str(".env")`, reads: []string{".env"}},
	{src: `load(.path)`, kind: "unknown"},
	{src: `eval(.expr)`, kind: "unknown"},
	{src: `"unclosed`, kind: "unknown"},
	{src: `"\(env`, kind: "unknown"},
	{src: `. ! .`, kind: "unknown"},
}

func TestJqProgram(t *testing.T) {
	for _, tc := range jqCases {
		checkProgram(t, "jq", JqProgram(tc.src), tc)
	}
}

func TestJqCommand(t *testing.T) {
	for _, tc := range []cmdCase{
		{line: []string{"jq", ".name", "package.json"}, level: Read, reads: []string{"package.json"}},
		{line: []string{"jq", "-r", ".dependencies | keys[]", "package.json"}, level: Read, reads: []string{"package.json"}},
		{line: []string{"jq", "-nr", "--arg", "x", ".env", "$x"}, level: Read},
		{line: []string{"jq", "-n", "--indent", "4", "1", "a.json"}, level: Read, reads: []string{"a.json"}},
		{line: []string{"jq", ".", "a.json", "-c"}, level: Read, reads: []string{"a.json"}},
		{line: []string{"jq", "-n", "[env]"}, level: Credential, secret: true},
		{line: []string{"jq", "-n", "$ENV"}, level: Credential, secret: true},
		{line: []string{"jq", "--rawfile", "k", ".env", "-n", "$k"}, level: Read, reads: []string{".env"}},
		{line: []string{"jq", "--slurpfile", "k", "~/.aws/credentials", "-n", "$k"}, level: Read, reads: []string{"~/.aws/credentials"}},
		{line: []string{"jq", "-n", "$ARGS", "--args", "a", ".env"}, level: Read},
		{line: []string{"jq", "-L", "/tmp/mods", "."}, level: Read},
		{line: []string{"jq", "-L/tmp/mods", "import \"m\" as m; m::f"}, level: Execute, exec: true},
		{line: []string{"jq", "-f", "prog.jq", "in.json"}, level: Execute, reads: []string{"in.json", "prog.jq"}, exec: true},
		{line: []string{"jq", "--run-tests", "t.txt"}, level: Execute, exec: true},
		{line: []string{"jq", "-Q", "."}, level: Execute, exec: true},
		{line: []string{"yq", "-i", ".a = 2", "x.yml"}, level: Write, reads: []string{".a = 2"}, writes: []string{"x.yml"}},
		{line: []string{"yq", "eval", ".a", "x.yml"}, level: Read, reads: []string{".a", "x.yml"}},
		{line: []string{"yq", ".env"}, level: Read, reads: []string{".env"}},
		{line: []string{"yq", "-o", "json", ".a", "x.yml"}, level: Read, reads: []string{".a", "x.yml"}},
		{line: []string{"yq", "-oyaml", ".a", "x.yml"}, level: Read, reads: []string{".a", "x.yml"}},
		{line: []string{"yq", "-n", "strenv(GITHUB_TOKEN)"}, level: Credential, reads: []string{"strenv(GITHUB_TOKEN)"}, secret: true},
		{line: []string{"yq", "-n", "load(\".env\")"}, level: Read, reads: []string{"load(\".env\")", ".env"}},
		{line: []string{"yq", "-s", ".name", "x.yml"}, level: Execute, reads: []string{".name", "x.yml"}, exec: true},
		{line: []string{"yq", "--from-file", "e.yq", "x.yml"}, level: Execute, reads: []string{"x.yml", "e.yq"}, exec: true},
	} {
		checkCommand(t, tc, nil)
	}
	checkCommand(t, cmdCase{line: []string{"jq", "$P", "f"}, level: Execute, reads: []string{"f"}, exec: true, unknown: true}, []bool{true, false})
}

func FuzzJqProgram(f *testing.F) {
	for _, tc := range jqCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p := JqProgram(src)
		if p.ReadOnly() && (p.Secret != "" || p.Unknown != "") {
			t.Fatalf("read-only with a reason: %+v", p)
		}
		// No text before it hides a later read of the environment.
		q := JqProgram(src + "\n| env")
		if q.Secret == "" && q.Unknown == "" {
			t.Fatalf("%q hides env after it: %+v", src, q)
		}
	})
}
