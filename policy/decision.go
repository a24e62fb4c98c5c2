package policy

import "fmt"

// Decision is the gate's answer to a call. Decisions are ordered
// Allow < Ask < Deny, so combining the answers for the parts of one call is a
// maximum: the call is allowed only if every part is, and denied if any is.
type Decision uint8

// The three answers.
const (
	Allow Decision = iota
	Ask
	Deny
)

var decisionNames = [...]string{"allow", "ask", "deny"}

// String returns "allow", "ask" or "deny".
func (d Decision) String() string {
	if int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return fmt.Sprintf("Decision(%d)", d)
}

// MarshalText encodes the decision as its name.
func (d Decision) MarshalText() ([]byte, error) {
	if int(d) >= len(decisionNames) {
		return nil, fmt.Errorf("policy: invalid decision %d", d)
	}
	return []byte(decisionNames[d]), nil
}

// UnmarshalText decodes "allow", "ask" or "deny".
func (d *Decision) UnmarshalText(b []byte) error {
	for i, n := range decisionNames {
		if n == string(b) {
			*d = Decision(i)
			return nil
		}
	}
	return fmt.Errorf("policy: unknown decision %q (want allow, ask or deny)", b)
}

// MaxDecision returns the stricter of a and b.
func MaxDecision(a, b Decision) Decision {
	if a > b {
		return a
	}
	return b
}
