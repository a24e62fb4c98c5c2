// Package risk names how much harm a tool call can do.
//
// Every call is given a [Level] from the tool's own metadata, then raised by
// what its arguments reveal: a recursive forced delete is destructive, a
// path under ~/.ssh is a credential, a path outside the workspace raises the
// level one step. Levels are ordered, so combining the levels of the parts of
// a call is a maximum.
package risk

import "fmt"

// Level is how much harm a call can do. Levels are ordered from least to
// most harmful; the zero value is Read.
type Level uint8

// The levels, from least to most harmful.
const (
	// Read only looks at data.
	Read Level = iota
	// Write changes files or other local state.
	Write
	// Execute runs code whose effect is not known in advance.
	Execute
	// Network reaches another host.
	Network
	// Credential reads or uses secrets.
	Credential
	// Destructive cannot be undone.
	Destructive
)

var levelNames = [...]string{"read", "write", "execute", "network", "credential", "destructive"}

// String returns the level's name as used in decisions and policy files.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", l)
}

// MarshalText encodes the level as its name.
func (l Level) MarshalText() ([]byte, error) {
	if int(l) >= len(levelNames) {
		return nil, fmt.Errorf("risk: invalid level %d", l)
	}
	return []byte(levelNames[l]), nil
}

// UnmarshalText decodes a level name.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// ParseLevel returns the level with the given name.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("risk: unknown level %q (want read, write, execute, network, credential or destructive)", s)
}

// Max returns the more harmful of a and b.
func Max(a, b Level) Level {
	if a > b {
		return a
	}
	return b
}

// Raise returns the level one step above l, for an argument that takes a
// call outside the workspace. Raising never reaches Credential or
// Destructive: those come only from what a call touches, not from where.
func (l Level) Raise() Level {
	if l < Network {
		return l + 1
	}
	return l
}
