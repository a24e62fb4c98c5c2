//go:build race

package secrets

// matchesPerRule is how many matches of each rule's regex
// TestEveryMatchHoldsAKeyword makes: fewer under the race detector, which
// slows it several times over and finds nothing in a test of one goroutine.
const matchesPerRule = 200
