//go:build race

package server

// raceEnabled: the race detector slows every goroutine; throughput
// measures mean nothing under it.
const raceEnabled = true
