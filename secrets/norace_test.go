//go:build !race

package secrets

// matchesPerRule is how many matches of each rule's regex
// TestEveryMatchHoldsAKeyword makes.
const matchesPerRule = 1000
