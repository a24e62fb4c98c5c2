package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The token files of the state directory.
const (
	AgentTokenFile    = "agent.token"
	ApproverTokenFile = "approver.token"
)

// Tokens are the bearer tokens of a server.
type Tokens struct {
	// Agent may check calls and read its own sessions.
	Agent string
	// Agents are further agent tokens, one for each agent that must not
	// read another's sessions (the files agent-NAME.token of the state
	// directory). Each acts only in the sessions it started, as Agent
	// does.
	Agents []string
	// Approver may do everything, answering approvals included.
	Approver string
}

// LogKey is the key, derived from the approver token, that signs the
// grants and questions a gate records for other servers sharing the log
// and checks theirs (gate.Options.LogKey). Servers with the same approver
// token share their grants and list each other's questions.
func (t Tokens) LogKey() []byte {
	return []byte(mac(t.Approver, "toolgate log key v1"))
}

// ChainKey is the key, derived from the approver token, of the chain of
// hashes that makes the event log tamper-evident (the stores'
// Options.ChainKey, and what `toolgate audit --verify` checks with): an
// agent, which cannot read the approver token, cannot write rows that
// verify. Servers sharing one log must share the approver token.
func (t Tokens) ChainKey() []byte { return ChainKeyFor(t.Approver) }

// ChainKeyFor is [Tokens.ChainKey] for the approver token approver.
func ChainKeyFor(approver string) []byte {
	return []byte(mac(approver, "toolgate event chain key v1"))
}

// agentTokenGlob names the further agent token files of the state
// directory (Tokens.Agents).
const agentTokenGlob = "agent-*.token"

// check reports what is wrong with t: a token missing, or two the same.
func (t Tokens) check() error {
	if t.Agent == "" || t.Approver == "" {
		return errors.New("both the agent and the approver token are required")
	}
	seen := map[string]bool{t.Approver: true}
	for i, a := range append([]string{t.Agent}, t.Agents...) {
		switch {
		case a == "":
			return fmt.Errorf("agent token %d is empty", i)
		case a == t.Approver:
			return errors.New("the agent and approver tokens must differ")
		case seen[a]:
			return fmt.Errorf("agent token %d is given twice: each agent token must be its own", i)
		}
		seen[a] = true
	}
	return nil
}

// agentID is the identity of an agent token that sessions are bound to:
// a hash, so that the token itself is never recorded.
func agentID(tok string) string {
	sum := sha256.Sum256([]byte("toolgate agent id v1\x00" + tok))
	return "agent:" + hex.EncodeToString(sum[:8])
}

// AgentNames returns the names of the agent tokens kept in dir by the id
// the log records for each (a session.bound event's owner, "agent:…"):
// "agent" for agent.token and NAME for agent-NAME.token. It creates
// nothing; a token file it cannot read, or one other users may read, is
// left out.
func AgentNames(dir string) map[string]string {
	names := map[string]string{}
	if dir == "" {
		return names
	}
	files, _ := filepath.Glob(filepath.Join(dir, agentTokenGlob))
	files = append([]string{filepath.Join(dir, AgentTokenFile)}, files...)
	for _, path := range files {
		tok, err := ReadTokenFile(path)
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(path), ".token")
		names[agentID(tok)] = strings.TrimPrefix(name, "agent-")
	}
	return names
}

// DefaultStateDir is where toolgate keeps its state:
// $XDG_STATE_HOME/toolgate, or ~/.local/state/toolgate.
func DefaultStateDir() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "toolgate")
}

// LoadTokens returns the tokens kept in dir, creating the directory (mode
// 0700) and each missing token file (mode 0600, a fresh random token), and
// the further agent tokens of the files agent-NAME.token, which a person
// makes (mode 0600, one token each) to keep agents apart. It
// refuses a token file that other users may read or write, since either
// token lets its holder act on the server.
func LoadTokens(dir string) (Tokens, error) {
	if dir == "" {
		return Tokens{}, errors.New("no state directory: give --state-dir or set $XDG_STATE_HOME")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Tokens{}, fmt.Errorf("create the state directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return Tokens{}, fmt.Errorf("state directory: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return Tokens{}, fmt.Errorf("state directory %s has mode %04o, so other users could replace the tokens: run chmod 700 %s", dir, perm, dir)
	}
	var t Tokens
	if t.Agent, err = loadToken(filepath.Join(dir, AgentTokenFile)); err != nil {
		return Tokens{}, err
	}
	if t.Approver, err = loadToken(filepath.Join(dir, ApproverTokenFile)); err != nil {
		return Tokens{}, err
	}
	if t.Agent == t.Approver {
		return Tokens{}, fmt.Errorf("%s and %s hold the same token: delete both and start again to get fresh ones",
			filepath.Join(dir, AgentTokenFile), filepath.Join(dir, ApproverTokenFile))
	}
	more, err := filepath.Glob(filepath.Join(dir, agentTokenGlob))
	if err != nil {
		return Tokens{}, fmt.Errorf("agent tokens: %w", err)
	}
	slices.Sort(more)
	for _, path := range more {
		tok, err := ReadTokenFile(path)
		if err != nil {
			return Tokens{}, err
		}
		t.Agents = append(t.Agents, tok)
		if err := t.check(); err != nil {
			return Tokens{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	return t, nil
}

// loadToken reads the token at path, creating it when missing.
func loadToken(path string) (string, error) {
	tok, err := ReadTokenFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	tok = hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another server created it meanwhile: use that one.
		return ReadTokenFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("create token file: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("write token file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write token file %s: %w", path, err)
	}
	return tok, nil
}

// ReadTokenFile reads a token file. It refuses a file that other users
// may read or write, and an empty one. An error for a missing file wraps
// [fs.ErrNotExist].
func ReadTokenFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s has mode %04o, so other users can read it: run chmod 600 %s (and consider deleting it so a fresh token is made)", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty: delete it and start the server again to get a fresh token", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("token file %s holds more than one word: it must hold the token alone", path)
	}
	return tok, nil
}
