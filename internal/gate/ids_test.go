package gate

import (
	"regexp"
	"sync"
	"testing"
)

func TestNewToolCallID(t *testing.T) {
	shape := regexp.MustCompile(`^tc_[0-9a-f]{16}$`)
	seen := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5000 {
				id := NewToolCallID()
				mu.Lock()
				if !shape.MatchString(id) {
					t.Errorf("id %q is not tc_ and 16 hex digits", id)
				}
				if seen[id] {
					t.Errorf("id %q handed out twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
