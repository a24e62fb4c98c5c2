//go:build !unix

package fslock

import (
	"os"
	"sync"
)

var mu sync.Mutex

func lockDir(string) (func(), error) {
	mu.Lock()
	return mu.Unlock, nil
}

func tryFile(*os.File) (bool, error) { return false, ErrUnsupported }
