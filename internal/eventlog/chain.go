package eventlog

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"iter"
)

// ChainHashSize is the length of a [ChainHash].
const ChainHashSize = sha256.Size

// ChainHasher computes the chain hashes of one store; it is not safe for
// concurrent use, and a store's single writer keeps one.
type ChainHasher struct {
	mac hash.Hash
	buf []byte
}

// unkeyed is the chain key of a store opened without one: its chains show
// accidental damage, but anyone can recompute them.
var unkeyed = []byte("toolgate event chain without a key")

// NewChainHasher returns a hasher for the chain key key. An empty key
// gives chains that anyone can recompute: they reveal damage, not
// tampering.
func NewChainHasher(key []byte) *ChainHasher {
	if len(key) == 0 {
		key = unkeyed
	}
	return &ChainHasher{mac: hmac.New(sha256.New, key)}
}

// Hash returns the chain hash of the event e whose session's previous
// event has hash prev (empty for a session's first chained event). ID is
// not covered: it is assigned by the storage, and may be known only once
// the row is written.
func (h *ChainHasher) Hash(prev []byte, e Event) []byte {
	b := h.buf[:0]
	b = append(b, "toolgate event chain v1\x00"...)
	field := func(p []byte) {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	field(prev)
	field([]byte(e.Session))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Seq))
	field([]byte(e.Turn))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	field([]byte(e.Type))
	field(e.Payload)
	h.buf = b
	h.mac.Reset()
	h.mac.Write(b)
	return h.mac.Sum(nil)
}

// ChainRow is one event as a store keeps it, with what a verifier needs
// besides the event: the chain's Prev and Hash (both nil for a row
// written before the store had chains) and the decision and tool the
// store indexed for it.
type ChainRow struct {
	Event
	Prev, Hash     []byte
	Decision, Tool string
}

// ChainHead is a store's own record of a session's last event, kept in
// the append transaction: the seq and hash the next event chains from.
type ChainHead struct {
	Seq  int64
	Hash []byte
}

// ChainReader is implemented by the stores that chain their events, for
// [Verify].
type ChainReader interface {
	// ChainRows yields the rows of session, or of every session when
	// session is empty, ordered by session and then seq, and ends with an
	// error if reading fails.
	ChainRows(ctx context.Context, session string) iter.Seq2[ChainRow, error]
	// ChainHeads returns the last event recorded for each session (only
	// session's when it is not empty).
	ChainHeads(ctx context.Context, session string) (map[string]ChainHead, error)
	// ChainOrigin returns the highest ID of the events that were stored
	// before the store had chains; rows above it must be chained.
	ChainOrigin(ctx context.Context) (int64, error)
}

// Problem kinds that [Verify] reports.
const (
	// ProblemEdited: the row does not match its hash; something it says
	// (payload, type, time, turn, seq) was changed after it was written,
	// or it was written by someone without the chain key.
	ProblemEdited = "edited"
	// ProblemDeleted: sequence numbers are missing from the session.
	ProblemDeleted = "deleted"
	// ProblemBroken: the row's Prev is not the hash of the event before
	// it: an event between them was deleted or replaced, or rows were
	// reordered.
	ProblemBroken = "broken link"
	// ProblemUnchained: a row written after the store had chains carries
	// no hash: it was inserted, or its hash was removed.
	ProblemUnchained = "unchained"
	// ProblemIndex: the decision or tool the store indexed for the row is
	// not what its payload says, so filters on them select it wrongly.
	ProblemIndex = "index edited"
	// ProblemTail: the store's record of the session's last event does not
	// match the last row: the newest events were deleted or replaced.
	ProblemTail = "tail"
)

// Problem is one way a session's stored events differ from what was
// appended.
type Problem struct {
	Session string `json:"session"`
	// ID and Seq name the row where the problem shows; ID is 0 when no row
	// holds it (deleted events).
	ID   int64  `json:"id"`
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	// Detail says what differs, in words for a person.
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	if p.ID == 0 {
		return fmt.Sprintf("session %s seq %d: %s: %s", p.Session, p.Seq, p.Kind, p.Detail)
	}
	return fmt.Sprintf("session %s seq %d (event id %d): %s: %s", p.Session, p.Seq, p.ID, p.Kind, p.Detail)
}

// VerifyReport is what [Verify] found.
type VerifyReport struct {
	// Sessions and Events count what was read.
	Sessions, Events int
	// Unchained counts the rows stored before the store had chains: they
	// cannot be checked, and are not problems.
	Unchained int
	// Problems lists every difference found, by session and seq.
	Problems []Problem
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify checks the chains of the events of session (of every session
// when session is empty) in r under the chain key key: every row must
// match its hash, link to the event before it, carry the decision and tool
// its payload gives, and the sessions' last events must be those the
// store recorded. It reports each difference with the session, seq and
// event id; an error means the store could not be read, and then nothing
// is known. Rows from before the store had chains are counted as
// unchained, not reported.
//
// Verify is what `toolgate audit --verify` runs, and what a health check
// of a store can call.
func Verify(ctx context.Context, r ChainReader, key []byte, session string) (*VerifyReport, error) {
	origin, err := r.ChainOrigin(ctx)
	if err != nil {
		return nil, fmt.Errorf("verify the event log: %w", err)
	}
	heads, err := r.ChainHeads(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("verify the event log: %w", err)
	}
	rep := &VerifyReport{}
	h := NewChainHasher(key)
	v := verifier{rep: rep, heads: heads}
	for row, err := range r.ChainRows(ctx, session) {
		if err != nil {
			return nil, fmt.Errorf("verify the event log: %w", err)
		}
		if row.Session != v.session {
			v.end()
			v.start(row.Session)
		}
		v.row(h, origin, row)
	}
	v.end()
	for s, head := range heads {
		if !v.seen[s] {
			rep.Problems = append(rep.Problems, Problem{Session: s, Seq: head.Seq, Kind: ProblemTail,
				Detail: fmt.Sprintf("the store recorded %d event(s) for this session, and none is left", head.Seq)})
		}
	}
	return rep, nil
}

// verifier walks the rows of one session after another.
type verifier struct {
	rep     *VerifyReport
	heads   map[string]ChainHead
	seen    map[string]bool
	session string
	last    *ChainRow // the previous row of the session
}

func (v *verifier) add(row *ChainRow, kind, format string, args ...any) {
	p := Problem{Session: v.session, Kind: kind, Detail: fmt.Sprintf(format, args...)}
	if row != nil {
		p.ID, p.Seq = row.ID, row.Seq
	}
	v.rep.Problems = append(v.rep.Problems, p)
}

func (v *verifier) start(session string) {
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	v.session, v.last = session, nil
	v.seen[session] = true
	v.rep.Sessions++
}

func (v *verifier) row(h *ChainHasher, origin int64, row ChainRow) {
	v.rep.Events++
	prevSeq := int64(0)
	if v.last != nil {
		prevSeq = v.last.Seq
	}
	if row.Seq != prevSeq+1 {
		if row.Seq <= prevSeq {
			v.add(&row, ProblemBroken, "seq %d follows seq %d: the rows were reordered or renumbered", row.Seq, prevSeq)
		} else if row.Seq == prevSeq+2 {
			v.rep.Problems = append(v.rep.Problems, Problem{Session: v.session, Seq: prevSeq + 1, Kind: ProblemDeleted,
				Detail: fmt.Sprintf("seq %d is missing (before event id %d)", prevSeq+1, row.ID)})
		} else {
			v.rep.Problems = append(v.rep.Problems, Problem{Session: v.session, Seq: prevSeq + 1, Kind: ProblemDeleted,
				Detail: fmt.Sprintf("seq %d to %d are missing (before event id %d)", prevSeq+1, row.Seq-1, row.ID)})
		}
	}
	defer func() { v.last = &row }()

	if want, err := IndexedFieldsOf(row.Type, row.Payload); err != nil {
		v.add(&row, ProblemEdited, "the payload is not a JSON object: %v", err)
	} else if want.Decision != row.Decision || want.Tool != row.Tool {
		v.add(&row, ProblemIndex, "indexed as decision %q, tool %q; the payload says decision %q, tool %q",
			row.Decision, row.Tool, want.Decision, want.Tool)
	}

	if row.Hash == nil {
		if row.ID > origin {
			v.add(&row, ProblemUnchained, "the row has no hash, but it was stored after the log was chained (from event id %d on)", origin+1)
		} else if v.last != nil && v.last.Hash != nil {
			v.add(&row, ProblemUnchained, "the row has no hash, but the event before it has one")
		} else {
			v.rep.Unchained++
		}
		return
	}
	if !hmac.Equal(h.Hash(row.Prev, row.Event), row.Hash) {
		v.add(&row, ProblemEdited, "the row does not match its hash: what it says was changed after it was written (or it was written without this log's key)")
	}
	switch {
	case v.last == nil || v.last.Hash == nil:
		// The first chained event of the session: at seq 1, or after the
		// rows from before the log was chained.
		if len(row.Prev) != 0 {
			v.add(&row, ProblemBroken, "the row chains from an event that is not there: the events before it were deleted")
		}
	case !bytes.Equal(row.Prev, v.last.Hash):
		v.add(&row, ProblemBroken, "the row does not chain from seq %d (event id %d) before it: an event between them was deleted or replaced, or rows were reordered", v.last.Seq, v.last.ID)
	}
}

// end checks the session's last row against the store's record of it.
func (v *verifier) end() {
	if v.session == "" || v.last == nil {
		return
	}
	head, ok := v.heads[v.session]
	switch {
	case !ok:
		if v.last.Hash != nil {
			v.add(v.last, ProblemTail, "the store has no record of the session's last event")
		}
	case head.Seq > v.last.Seq:
		v.rep.Problems = append(v.rep.Problems, Problem{Session: v.session, Seq: v.last.Seq + 1, Kind: ProblemDeleted,
			Detail: fmt.Sprintf("the newest events, seq %d to %d, are missing", v.last.Seq+1, head.Seq)})
	case head.Seq < v.last.Seq:
		v.add(v.last, ProblemTail, "the store recorded the session's last event as seq %d: the rows after it were added outside the log", head.Seq)
	case !bytes.Equal(head.Hash, v.last.Hash):
		v.add(v.last, ProblemTail, "the last event is not the one the store recorded: it was replaced")
	}
}
