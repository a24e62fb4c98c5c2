package gate

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

// ids is the generator of the gate's identifiers: a ChaCha8 stream,
// cryptographically strong, seeded once from the operating system when
// the first identifier is made (not at start-up: most runs of the
// program make none). An identifier costs no system call, where reading
// the kernel's random source for each one was a measurable part of a
// decision.
var ids struct {
	sync.Mutex
	r *rand.ChaCha8 // nil until the first identifier
}

func seed() [32]byte {
	var s [32]byte
	// crypto/rand.Read never returns an error: where the system has no
	// random source it stops the program, rather than hand out a
	// predictable seed.
	_, _ = crand.Read(s[:])
	return s
}

// randomHex returns 64 random bits as 16 hex digits.
func randomHex() string {
	ids.Lock()
	if ids.r == nil {
		ids.r = rand.NewChaCha8(seed())
	}
	v := ids.r.Uint64()
	ids.Unlock()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return hex.EncodeToString(b[:])
}

// NewToolCallID returns a fresh, unpredictable tool call id ("tc_" and 16
// hex digits): the default of [Options.NewID].
func NewToolCallID() string { return "tc_" + randomHex() }
