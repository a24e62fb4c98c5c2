package risk

import (
	"path/filepath"
	"strings"
)

// PathClass says whether a path needs more than ordinary care.
type PathClass uint8

// The path classes.
const (
	// Ordinary paths follow the workspace and rule checks alone.
	Ordinary PathClass = iota
	// Protected paths change how code runs or how the agent is governed
	// (.git/, shell start-up files, editor task files, agent and toolgate
	// configuration). Writing them always asks, in every mode.
	Protected
	// Secret paths hold credentials. Reading or writing them is denied
	// unless an allow rule names them explicitly.
	Secret
)

// String returns "ordinary", "protected" or "credential".
func (c PathClass) String() string {
	switch c {
	case Protected:
		return "protected"
	case Secret:
		return "credential"
	}
	return "ordinary"
}

// homeSecrets are credential locations relative to the home directory; an
// entry ending in "/" covers the whole directory.
var homeSecrets = []string{
	".ssh/", ".aws/", ".config/gcloud/", ".azure/", ".gnupg/", ".kube/config", ".netrc",
	".npmrc", ".pypirc", ".docker/config.json", ".git-credentials", ".config/gh/hosts.yml",
	".config/toolgate/approver.token", ".local/state/toolgate/",
	".cargo/credentials", ".cargo/credentials.toml", ".config/hub", ".terraform.d/credentials.tfrc.json",
	".vault-token", ".password-store/", ".config/op/", ".gem/credentials", ".m2/settings.xml",
}

// systemSecrets are credential locations outside the home directory.
var systemSecrets = []string{"/etc/", "/proc/self/environ", "/root/", "/var/run/secrets/", "/run/secrets/"}

// secretNames are file names that hold credentials wherever they are.
var secretNames = []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".git-credentials", ".netrc", ".pgpass"}

// protectedDirs are directory names whose contents are protected at any
// depth; protectedFiles are protected file names.
var (
	protectedDirs  = []string{".git", ".toolgate", ".claude", ".gemini", ".codex", ".cursor", ".vscode", ".idea", ".husky"}
	protectedFiles = []string{
		".mcp.json", ".claude.json", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".zshrc", ".zprofile", ".zshenv", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".inputrc", ".gitconfig",
		".gitmodules", ".envrc",
	}
	protectedHome = []string{".config/fish/", ".config/toolgate/", ".config/git/", ".config/autostart/",
		".config/systemd/", ".local/bin/", ".local/share/applications/", "bin/", ".ssh/", ".gnupg/"}
)

// ClassifyPath returns the class of an absolute, resolved path for a user
// whose home is home. Names are compared both as written and in lower
// case, since on a case-insensitive file system .GIT/hooks is .git/hooks.
func ClassifyPath(abs, home string) PathClass {
	if isASCII(abs) && isASCII(home) {
		// Lower case only changes ASCII letters here, and every name
		// the checks look for is in lower case: one pass comparing
		// without regard to case finds what the two would.
		return classify(abs, home, true)
	}
	c := classify(abs, home, false)
	if l := strings.ToLower(abs); l != abs {
		if lc := classify(l, strings.ToLower(home), false); lc > c {
			c = lc
		}
	}
	return c
}

// classify returns the class of abs, comparing names as written or, with
// fold, without regard to ASCII case. A folded pass finds what a pass
// over the lower-cased path does and what one over abs as written does:
// a dotenv name such as .env.EXAMPLE is a credential as written (it is
// not .env.example) though not in lower case.
func classify(abs, home string, fold bool) PathClass {
	if abs == "" {
		return Ordinary
	}
	m := matcher(fold)
	base := filepath.Base(abs)
	if m.credentialName(base) || fold && isEnvFile(base) {
		return Secret
	}
	// Every process's environment, command line and memory: programs are
	// started with secrets in their environments and arguments.
	if m.hasPrefix(abs, "/proc/") && (m.hasSuffix(abs, "/environ") || m.hasSuffix(abs, "/cmdline") || m.hasSuffix(abs, "/mem")) {
		return Secret
	}
	for _, s := range systemSecrets {
		if m.under(abs, s) {
			return Secret
		}
	}
	if rel, ok := m.cutDir(abs, strings.TrimSuffix(home, "/")); ok && home != "" {
		for _, s := range homeSecrets {
			if m.under(rel, s) {
				return Secret
			}
		}
		for _, s := range protectedHome {
			if m.under(rel, s) {
				return Protected
			}
		}
	}
	if m.in(protectedFiles, base) {
		return Protected
	}
	for rest := abs; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if m.in(protectedDirs, seg) {
			return Protected
		}
	}
	return Ordinary
}

// matcher compares names as written (false) or without regard to ASCII
// case (true).
type matcher bool

func (m matcher) eq(a, b string) bool {
	if m {
		return len(a) == len(b) && strings.EqualFold(a, b)
	}
	return a == b
}

func (m matcher) hasPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && m.eq(s[:len(prefix)], prefix)
}

func (m matcher) hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && m.eq(s[len(s)-len(suffix):], suffix)
}

func (m matcher) in(list []string, s string) bool {
	for _, v := range list {
		if m.eq(v, s) {
			return true
		}
	}
	return false
}

// under reports whether abs equals prefix (a file entry) or lies below it
// (an entry ending in "/").
func (m matcher) under(abs, prefix string) bool {
	if dir, ok := strings.CutSuffix(prefix, "/"); ok {
		return m.eq(abs, dir) || m.hasPrefix(abs, prefix)
	}
	return m.eq(abs, prefix)
}

// cutDir returns what follows dir+"/" in abs, and whether abs starts
// with it.
func (m matcher) cutDir(abs, dir string) (string, bool) {
	if len(abs) <= len(dir) || abs[len(dir)] != '/' || !m.eq(abs[:len(dir)], dir) {
		return "", false
	}
	return abs[len(dir)+1:], true
}

// credentialName is IsCredentialName, comparing as m does.
func (m matcher) credentialName(base string) bool {
	return m.isEnvFile(base) || m.hasSuffix(base, ".pem") || m.hasSuffix(base, ".key") || m.hasSuffix(base, ".p12") ||
		m.hasSuffix(base, ".pfx") || m.hasSuffix(base, ".jks") || m.hasSuffix(base, ".keystore") || m.hasSuffix(base, ".ppk") ||
		m.in(secretNames, base)
}

// isEnvFile is isEnvFile, comparing as m does.
func (m matcher) isEnvFile(base string) bool {
	if m.eq(base, ".env") {
		return true
	}
	if !m.hasPrefix(base, ".env.") {
		return false
	}
	return !m.in(envTemplates, base[len(".env."):])
}

// envTemplates are the dotenv suffixes of files that hold examples, not
// values.
var envTemplates = []string{"example", "sample", "template", "dist", "defaults"}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// HomeCredentialPaths returns the credential locations below a home
// directory, relative to it, as the engine classes them; an entry ending
// in "/" is a whole directory. The caller owns the returned slice.
func HomeCredentialPaths() []string { return append([]string(nil), homeSecrets...) }

// IsCredentialName reports whether a file name alone marks a file as
// holding credentials wherever it lies: dotenv files with real values
// (.env, .env.local, not .env.example), private keys and key stores
// (*.pem, *.key, *.p12, id_rsa, …), .netrc, .pgpass, .git-credentials.
func IsCredentialName(base string) bool {
	return matcher(false).credentialName(base)
}

// isEnvFile reports whether a file name is a dotenv file holding real
// values: .env, .env.local, .env.production, but not .env.example,
// .env.sample or .env.template.
func isEnvFile(base string) bool { return matcher(false).isEnvFile(base) }

// ClassifyPattern returns the most sensitive class of any path that the
// glob pattern (absolute, path.Match syntax) could name among the known
// sensitive locations: a pattern such as ~/.bashr? or .e* is judged by what
// it could become, not only by what exists now.
func ClassifyPattern(pattern, home string) PathClass {
	dir := filepath.Dir(pattern)
	var cands []string
	for _, n := range append(append([]string{".env", ".env.local", "id_rsa", "key.pem", "x.key"}, secretNames...), protectedFiles...) {
		cands = append(cands, filepath.Join(dir, n))
	}
	for _, d := range protectedDirs {
		cands = append(cands, filepath.Join(dir, d))
	}
	if home != "" {
		for _, s := range append(append([]string{}, homeSecrets...), protectedHome...) {
			cands = append(cands, filepath.Join(home, strings.TrimSuffix(s, "/")))
		}
	}
	best := Ordinary
	for _, c := range cands {
		if ok, _ := filepath.Match(pattern, c); ok {
			if cl := ClassifyPath(c, home); cl > best {
				best = cl
			}
		}
	}
	return best
}
