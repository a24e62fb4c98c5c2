//go:build !linux

package cli

import "os"

// isTerminal reports false: toolgate run asks on a terminal only on Linux,
// where its shell calls can be confined.
func isTerminal(*os.File) bool { return false }
