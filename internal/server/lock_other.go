//go:build !unix

package server

import (
	"errors"
	"os"
)

var errNoLocks = errors.New("file locks are not supported here")

func tryLock(*os.File) (bool, error) { return false, errNoLocks }
