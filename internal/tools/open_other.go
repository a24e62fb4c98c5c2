//go:build !linux

package tools

import (
	"fmt"
	"os"
	"path/filepath"
)

// openWithin opens p, a path resolved inside root, for reading, and
// returns it only when p still resolves inside root. Without /proc the
// check and the open are two steps, so a swap between them is not caught.
func openWithin(root, p string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !within(root, real) {
		return nil, fmt.Errorf("%s now leads outside the workspace %s (to %s): not read", p, root, real)
	}
	return os.Open(real)
}
