//go:build !unix

package fslock

import "sync"

var mu sync.Mutex

func lockDir(string) (func(), error) {
	mu.Lock()
	return mu.Unlock, nil
}
