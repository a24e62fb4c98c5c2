package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// PolicyFiles is a [RuleWriter] that saves rules in the files toolgate
// loads its policy from, with [policy.AddRule]: an answer for the project
// goes to the project's local file (<root>/.toolgate/policy.local.toml,
// personal and not committed) or, with Committed, to its project file; an
// answer for the user goes to the user's policy file.
type PolicyFiles struct {
	// User is the user's policy file; "" means the default location
	// ($XDG_CONFIG_HOME/toolgate/policy.toml).
	User string
	// Committed writes project answers to <root>/.toolgate/policy.toml,
	// which is shared with everyone who checks the project out.
	Committed bool
}

// SaveRule implements [RuleWriter].
func (p PolicyFiles) SaveRule(_ context.Context, scope, root, rule string) (SavedRule, error) {
	var path string
	var layer policy.Layer
	switch scope {
	case "project":
		home, _ := os.UserHomeDir()
		if root == "" || root == "/" || (home != "" && pathres.Real(root) == pathres.Real(home)) {
			return SavedRule{}, fmt.Errorf("the call was made outside any project, so %q cannot be saved for one (a policy file in %q would make it one project)", rule, root)
		}
		path, layer = filepath.Join(root, policy.LocalFile), policy.LayerLocal
		if p.Committed {
			path, layer = filepath.Join(root, policy.ProjectFile), policy.LayerProject
		}
	case "user":
		path, layer = p.User, policy.LayerUser
		if path == "" {
			path = policy.DefaultLocations("").User
		}
		if path == "" {
			return SavedRule{}, fmt.Errorf("no user policy file to save %q in: set $XDG_CONFIG_HOME or $HOME", rule)
		}
	default:
		return SavedRule{}, fmt.Errorf("unknown scope %q for saving a rule", scope)
	}
	c, err := policy.AddRule(path, layer, policy.Allow, rule)
	if err != nil {
		return SavedRule{}, err
	}
	return SavedRule{File: c.File, Line: c.Line}, nil
}
