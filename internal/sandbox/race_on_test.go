//go:build race

package sandbox

// raceEnabled: the race detector slows every goroutine; timings mean
// nothing under it.
const raceEnabled = true
