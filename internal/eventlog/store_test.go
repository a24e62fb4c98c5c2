package eventlog_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

func TestMatchAfterID(t *testing.T) {
	e := eventlog.Event{ID: 10, Seq: 3, Session: "s", Type: eventlog.TypeToolStarted, Payload: json.RawMessage(`{}`)}
	for _, tc := range []struct {
		name string
		f    eventlog.Filter
		want bool
	}{
		{"no bound", eventlog.Filter{}, true},
		{"ReplayAll", eventlog.Filter{AfterID: eventlog.ReplayAll}, true},
		{"below", eventlog.Filter{AfterID: 9}, true},
		{"equal", eventlog.Filter{AfterID: 10}, false},
		{"above", eventlog.Filter{AfterID: 11}, false},
		{"below, other session", eventlog.Filter{AfterID: 9, Session: "t"}, false},
		{"below, seq too low", eventlog.Filter{AfterID: 9, Session: "s", AfterSeq: 3}, false},
		{"below, seq above", eventlog.Filter{AfterID: 9, Session: "s", AfterSeq: 2}, true},
	} {
		if got := tc.f.Match(e); got != tc.want {
			t.Errorf("%s: Filter%+v.Match(ID 10, seq 3) = %v, want %v", tc.name, tc.f, got, tc.want)
		}
	}
}

func TestEventJSON(t *testing.T) {
	e := eventlog.Event{ID: 42, Seq: 7, Session: "s1", Turn: "t1", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Type: eventlog.TypeToolStarted, Payload: json.RawMessage(`{"tool":"shell"}`)}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":42,"seq":7,"session":"s1","turn":"t1","time":"2026-01-02T03:04:05Z","type":"tool.started","payload":{"tool":"shell"}}`
	if string(b) != want {
		t.Errorf("json.Marshal(Event) =\n%s\nwant\n%s", b, want)
	}
}
