package gate

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// FuzzAdopt feeds Adopt event payloads as a log writer could write them.
// It must never panic, and a grant it takes up must carry a signature
// that verifies under the gate's key.
func FuzzAdopt(f *testing.F) {
	key := []byte("fuzz key")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	for _, rec := range []grantRecord{
		{ID: "sa_1", Kind: KindSessionApproval, Agent: "main", Tool: "Read", ArgsHash: "h", Granted: now, Actor: ActorUser,
			Resources: []Resource{{Path: "/p", Access: "read", Version: "absent"}}},
		{ID: "ls_1", Kind: KindLease, Path: "/p", Capability: CapWrite, Version: "absent", Expires: &exp, Granted: now, Actor: ActorUser},
		{ID: "ls_2", Kind: KindLease, Path: "/p", Capability: CapRead, Expires: &exp, From: "ls_1", Granted: now},
	} {
		rec.Sig = grantSig(key, "s1", rec)
		raw, _ := json.Marshal(rec)
		f.Add(raw, false)
	}
	f.Add([]byte(`{"id":"ls_1"}`), true)
	f.Add([]byte(`{"id":"sa_1","kind":"session_approval","sig":"00"}`), false)
	f.Add([]byte(`null`), false)
	f.Fuzz(func(t *testing.T, payload []byte, revoke bool) {
		g := &Gate{opts: Options{LogKey: key, Clock: func() time.Time { return now }}}
		g.grants = newGrants(g)
		typ := eventlog.TypeLeaseGranted
		if revoke {
			typ = eventlog.TypeLeaseRevoked
		}
		changed, _ := g.Adopt(eventlog.Event{ID: 1, Session: "s1", Type: typ, Payload: payload})
		if !changed || revoke {
			return
		}
		var rec grantRecord
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("adopted an unreadable payload %q: %v", payload, err)
		}
		if !hmac.Equal([]byte(rec.Sig), []byte(grantSig(key, "s1", rec))) {
			t.Fatalf("adopted a grant whose signature does not verify: %q", payload)
		}
		if len(g.Grants("s1")) != 1 {
			t.Fatalf("adopted, but %d grants held", len(g.Grants("s1")))
		}
	})
}

// FuzzQuestionSignature: a question signed by a gate verifies on another
// gate with the same key, whatever arguments the agent sent (decoded as
// requests are, numbers keeping their text), and not under another key
// or with its arguments changed.
func FuzzQuestionSignature(f *testing.F) {
	for _, s := range []string{
		`{"command":"make build"}`, `{"n":1.0,"m":1e400,"o":-0.0,"big":12345678901234567890123}`,
		`{"s":"<&>\u2028\u2029\ufffd","a":[null,true,{"k":[]}]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	key := []byte("fuzz key")
	deadline := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, input []byte) {
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.UseNumber()
		var args map[string]any
		if dec.Decode(&args) != nil || args == nil {
			return
		}
		p := PermissionRequested{ToolCallID: "tc_1", Tool: "Bash", Args: args, AskedOf: ActorUser, Deadline: deadline, Summary: "Bash: x"}
		p.Sig = questionSig(key, "s1", p)
		raw, err := json.Marshal(p)
		if err != nil {
			return // arguments encoding/json cannot encode: no question is recorded
		}
		g := &Gate{opts: Options{LogKey: key}}
		if _, err := g.VerifyQuestion("s1", raw); err != nil {
			t.Fatalf("a signed question does not verify: %v\n%s", err, raw)
		}
		if _, err := g.VerifyQuestion("s2", raw); err == nil {
			t.Fatal("the question verifies in another session")
		}
		other := &Gate{opts: Options{LogKey: []byte("other key")}}
		if _, err := other.VerifyQuestion("s1", raw); err == nil {
			t.Fatal("the question verifies under another key")
		}
	})
}
