package policy

import "fmt"

// Layer is where a rule or setting comes from. Layers are listed from the
// highest to the lowest precedence; rules of all layers are pooled, while a
// setting comes from the highest layer that sets it.
type Layer uint8

// The layers, highest first.
const (
	// LayerManaged is the administrator's policy; it can lock what lower
	// layers may do.
	LayerManaged Layer = iota
	// LayerCLI holds flags given to this run.
	LayerCLI
	// LayerLocal is <project>/.toolgate/policy.local.toml, personal.
	LayerLocal
	// LayerProject is <project>/.toolgate/policy.toml, committed.
	LayerProject
	// LayerUser is $XDG_CONFIG_HOME/toolgate/policy.toml.
	LayerUser
	// LayerSession holds rules granted for one session.
	LayerSession
)

var layerNames = [...]string{"managed", "cli", "local", "project", "user", "session"}

// String returns the layer's name.
func (l Layer) String() string {
	if int(l) < len(layerNames) {
		return layerNames[l]
	}
	return fmt.Sprintf("Layer(%d)", l)
}

// MarshalText encodes the layer as its name.
func (l Layer) MarshalText() ([]byte, error) { return []byte(l.String()), nil }
