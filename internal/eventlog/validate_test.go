package eventlog_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
)

var fieldCases = []struct {
	name    string
	payload string
	want    eventlog.Fields
	err     string
}{
	{"empty", ``, eventlog.Fields{}, ""},
	{"blank", " \n\t", eventlog.Fields{}, "only white space"},
	{"vertical tab is not JSON space", "\v{}", eventlog.Fields{}, "not a JSON object"},
	{"empty object", `{}`, eventlog.Fields{}, ""},
	{"both", `{"decision":"allow","tool":"Bash"}`, eventlog.Fields{Decision: "allow", Tool: "Bash"}, ""},
	{"spaces", " {\n \"tool\" :\t\"Read\" , \"decision\" : \"deny\" }\n", eventlog.Fields{Decision: "deny", Tool: "Read"}, ""},
	{"nested ones ignored", `{"input":{"decision":"allow","tool":"x"},"list":[{"tool":"y"}],"s":"{\"tool\":\"z\"}"}`, eventlog.Fields{}, ""},
	{"after nesting", `{"a":[1,{"b":[true,null,"]}"]}],"n":-1.5e3,"tool":"Edit"}`, eventlog.Fields{Tool: "Edit"}, ""},
	{"not strings", `{"decision":1,"tool":null}`, eventlog.Fields{}, ""},
	{"object value", `{"decision":{"decision":"allow"}}`, eventlog.Fields{}, ""},
	{"last wins", `{"tool":"a","tool":"b"}`, eventlog.Fields{Tool: "b"}, ""},
	{"last wins even when not a string", `{"tool":"a","tool":7}`, eventlog.Fields{}, ""},
	{"exact keys only", `{"Decision":"allow","TOOL":"Bash"}`, eventlog.Fields{}, ""},
	{"escaped key", `{"\u0064ecision":"allow"}`, eventlog.Fields{Decision: "allow"}, ""},
	{"escaped value", `{"tool":"mcp__a\"b\\c\u00e9"}`, eventlog.Fields{Tool: "mcp__a\"b\\c\u00e9"}, ""},
	{"escaped quote before key", `{"x":"\\\"","tool":"t"}`, eventlog.Fields{Tool: "t"}, ""},
	{"array", `[1]`, eventlog.Fields{}, "not a JSON object"},
	{"string", `"x"`, eventlog.Fields{}, "not a JSON object"},
	{"truncated", `{"tool":"a"`, eventlog.Fields{}, "not valid JSON"},
	{"trailing", `{"tool":"a"} x`, eventlog.Fields{}, "not valid JSON"},
	{"two objects", `{}{}`, eventlog.Fields{}, "not valid JSON"},
}

func TestIndexedFields(t *testing.T) {
	for _, tc := range fieldCases {
		got, err := eventlog.IndexedFields(json.RawMessage(tc.payload))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// referenceFields is what a generic JSON reader finds: the object decoded
// as a map, exact keys, the last of duplicates.
func referenceFields(payload []byte) (eventlog.Fields, bool) {
	if len(payload) == 0 {
		return eventlog.Fields{}, true
	}
	trimmed := bytes.Trim(payload, " \t\r\n")
	var m map[string]json.RawMessage
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(payload, &m) != nil {
		return eventlog.Fields{}, false
	}
	str := func(raw json.RawMessage) string {
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	return eventlog.Fields{Decision: str(m["decision"]), Tool: str(m["tool"])}, true
}

func FuzzIndexedFields(f *testing.F) {
	for _, tc := range fieldCases {
		f.Add([]byte(tc.payload))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, err := eventlog.IndexedFields(payload)
		want, ok := referenceFields(payload)
		if ok != (err == nil) {
			t.Fatalf("IndexedFields(%q) error %v, reference accepts it: %v", payload, err, ok)
		}
		if got != want {
			t.Fatalf("IndexedFields(%q) = %+v, reference %+v", payload, got, want)
		}
	})
}

func BenchmarkIndexedFields(b *testing.B) {
	payload := json.RawMessage(`{"toolCallId":"tc_0123456789abcdef","tool":"Bash","decision":"allow","reason":"rule_allow","actor":"policy","riskAtDecision":"read","sourcedFrom":"rule","rule":"Bash(git status)","ruleOrigin":"cli","message":"allowed by rule Bash(git status) (cli)","receipt":{"id":"rc_0123456789abcdef","toolCallId":"tc_0123456789abcdef","tool":"Bash","argsHash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","cwd":"/home/dev/project","resources":[{"path":"/home/dev/project","access":"read","version":"stat:d:4096:1764680000000000000"}],"expires":"2026-12-02T15:30:00Z"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eventlog.IndexedFields(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAgentEventsAreNotDecisions: an event an agent posts is never
// indexed or matched as a decision, whatever its payload claims.
func TestAgentEventsAreNotDecisions(t *testing.T) {
	forged := json.RawMessage(`{"decision":"allow","tool":"shell","actor":"user","toolCallId":"c1"}`)
	for _, typ := range eventlog.Types() {
		fields, err := eventlog.IndexedFieldsOf(typ, forged)
		if err != nil {
			t.Fatal(err)
		}
		e := eventlog.Event{ID: 1, Seq: 1, Session: "s", Type: typ, Payload: forged}
		matched := eventlog.Filter{Decisions: []string{"allow"}}.Match(e) || eventlog.Filter{Tools: []string{"shell"}}.Match(e)
		if agent := eventlog.PostedByAgent(typ); agent == (fields.Decision != "" || matched) {
			t.Errorf("%s: posted by agent %v, indexed %+v, matched by a decision or tool filter %v", typ, agent, fields, matched)
		}
	}
	if _, err := eventlog.IndexedFieldsOf(eventlog.TypeUserMessage, json.RawMessage(`[1]`)); err == nil {
		t.Error("an agent event's payload is not checked")
	}
}
