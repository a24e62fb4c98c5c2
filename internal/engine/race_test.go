//go:build race

package engine

// raceEnabled reports that the tests run under the race detector, which
// slows them several times over.
const raceEnabled = true
