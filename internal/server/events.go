package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Limits of GET /v1/events as JSON.
const (
	// DefaultEventLimit is how many events a JSON query returns when it
	// gives no limit; page on with after= the last id.
	DefaultEventLimit = 1000
	// MaxEventLimit is the largest limit a JSON query may ask for.
	MaxEventLimit = 10_000
)

// MaxEventPageBytes bounds the payloads of one page of GET /v1/events as
// JSON: a page holds at least one event, and past this many bytes of
// payloads it ends early with "more": true, so that a session whose calls
// carry a megabyte each cannot make one request hold gigabytes.
const MaxEventPageBytes = 4 << 20

// MaxAgentEvent is the largest payload an agent may post in one event,
// in bytes; a larger one is refused with 413.
const MaxAgentEvent = 64 << 10

// eventQuery reads the filter of an events request from its query
// parameters. session, when not empty, is the session of the path.
func (s *Server) eventQuery(r *http.Request, session string) (eventlog.Filter, error) {
	q := r.URL.Query()
	var f eventlog.Filter
	bad := func(param, format string, args ...any) error {
		return errorf(http.StatusBadRequest, "query parameter %q: %s", param, fmt.Sprintf(format, args...))
	}
	for k := range q {
		switch k {
		case "session", "type", "decision", "tool", "since", "until", "after", "limit":
		default:
			return f, errorf(http.StatusBadRequest, "unknown query parameter %q: the filters are session, type, decision, tool, since, until, after and limit", clip(k, 40))
		}
	}
	f.Session = session
	if v := q.Get("session"); v != "" {
		if session != "" && v != session {
			return f, bad("session", "%q differs from the session of the path", clip(v, 40))
		}
		if !validID(v) {
			return f, bad("session", "%q is not a valid id", clip(v, 40))
		}
		f.Session = v
	}
	for _, v := range list(q["type"]) {
		f.Types = append(f.Types, eventlog.Type(v))
	}
	for _, v := range list(q["decision"]) {
		if v != "allow" && v != "ask" && v != "deny" {
			return f, bad("decision", "%q is not allow, ask or deny", clip(v, 40))
		}
		f.Decisions = append(f.Decisions, v)
	}
	f.Tools = list(q["tool"])
	var err error
	if f.Since, err = parseWhen(q.Get("since"), s.clock()); err != nil {
		return f, bad("since", "%v", err)
	}
	if f.Until, err = parseWhen(q.Get("until"), s.clock()); err != nil {
		return f, bad("until", "%v", err)
	}
	if v := q.Get("after"); v != "" {
		if f.AfterID, err = strconv.ParseInt(v, 10, 64); err != nil || f.AfterID < 0 {
			return f, bad("after", "%q is not an event id (a whole number ≥ 0)", clip(v, 40))
		}
	}
	if v := q.Get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > MaxEventLimit {
			return f, bad("limit", "%q is not a number from 1 to %d", clip(v, 40), MaxEventLimit)
		}
	}
	return f, nil
}

// list splits repeated and comma-separated values.
func list(vs []string) []string {
	var out []string
	for _, v := range vs {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// parseWhen reads an RFC 3339 time or a duration back from now ("24h").
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration such as 90m or 24h", clip(s, 40))
}

// handleEvents: GET /v1/events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	f, err := s.eventQuery(r, "")
	if err != nil {
		return err
	}
	if p.role != RoleApprover {
		if f.Session == "" {
			return errorf(http.StatusForbidden, "the agent token may read only its own sessions: give session=ID or use /v1/sessions/{id}/events")
		}
		if err := s.readable(r.Context(), p, f.Session); err != nil {
			return err
		}
	}
	return s.serveEvents(w, r, p, f)
}

// handleSessionEvents: GET /v1/sessions/{id}/events.
func (s *Server) handleSessionEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	f, err := s.eventQuery(r, session)
	if err != nil {
		return err
	}
	if err := s.readable(r.Context(), p, session); err != nil {
		return err
	}
	return s.serveEvents(w, r, p, f)
}

func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request, p principal, f eventlog.Filter) error {
	if wantsStream(r) {
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			after, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
			if err != nil || after < 0 {
				return errorf(http.StatusBadRequest, "header Last-Event-ID %q is not an event id", clip(id, 40))
			}
			// A browser's reconnection repeats the first URL's after=;
			// the later of the two is where the client is.
			f.AfterID = max(f.AfterID, after)
		}
		return s.stream(w, r, p, f)
	}
	if f.Limit == 0 {
		f.Limit = DefaultEventLimit
	}
	events := []eventlog.Event{}
	size, more := 0, false
	for e, err := range s.store.Query(r.Context(), f) {
		if err != nil {
			return fmt.Errorf("read the event log: %w", err)
		}
		if len(events) > 0 && size+len(e.Payload) > MaxEventPageBytes {
			more = true
			break
		}
		size += len(e.Payload)
		events = append(events, e)
	}
	out := map[string]any{"events": events}
	if more {
		out["more"] = true
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func wantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/event-stream") {
			return true
		}
	}
	return false
}

// sseField keeps a value on one line of an event stream.
func sseField(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// postedEvent is one event an agent posts.
type postedEvent struct {
	Type    eventlog.Type   `json:"type"`
	Turn    string          `json:"turn"`
	Payload json.RawMessage `json:"payload"`
}

// postEventsRequest is the body of POST /v1/sessions/{id}/events: one
// event, or several under "events".
type postEventsRequest struct {
	postedEvent
	Events []postedEvent `json:"events"`
}

// handlePostEvents: POST /v1/sessions/{id}/events. An agent posts what
// it says about its session — the types of [eventlog.PostedByAgent] —
// never what the gate decided: the payload it sends is stored whole under
// [eventlog.AgentContentField], {"content": {…}}, so that no field of it
// stands where readers look for a decision, an actor, a rule or a tool
// call id, and the store indexes no decision or tool for it. A payload
// over [MaxAgentEvent] bytes is refused with 413, and a session started
// with another agent token with 403.
func (s *Server) handlePostEvents(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	var body postEventsRequest
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	evs := body.Events
	switch {
	case body.Events != nil && (body.Type != "" || body.Turn != "" || body.Payload != nil):
		return errorf(http.StatusBadRequest, `send either one event ("type", "turn", "payload") or "events", not both`)
	case body.Events == nil:
		evs = []postedEvent{body.postedEvent}
	case len(body.Events) == 0:
		return errorf(http.StatusBadRequest, `field "events" is empty`)
	}
	drafts := make([]eventlog.Draft, len(evs))
	now := s.clock()
	for i, e := range evs {
		field := func(name string) string {
			if body.Events != nil {
				return fmt.Sprintf("events[%d].%s", i, name)
			}
			return name
		}
		switch {
		case e.Type == "":
			return errorf(http.StatusBadRequest, "field %q is required", field("type"))
		case !eventlog.PostedByAgent(e.Type):
			return errorf(http.StatusBadRequest, "field %q: %q is not a type an agent may post; use session.started, turn.started, user.message or turn.completed", field("type"), clip(string(e.Type), 60))
		case e.Turn != "" && !validID(e.Turn):
			return errorf(http.StatusBadRequest, "field %q: %q is not a valid id", field("turn"), clip(e.Turn, 40))
		}
		payload := e.Payload
		if len(payload) == 0 || string(payload) == "null" {
			payload = json.RawMessage("{}")
		}
		if !isObject(payload) {
			return errorf(http.StatusBadRequest, "field %q must be a JSON object", field("payload"))
		}
		if len(payload) > MaxAgentEvent {
			return errorf(http.StatusRequestEntityTooLarge, "field %q is %d bytes; an event an agent posts may hold at most %d (%d KiB)",
				field("payload"), len(payload), MaxAgentEvent, MaxAgentEvent>>10)
		}
		// No secret at rest: a user message that quotes a key is stored
		// with the key redacted.
		red, err := s.gate.Redactor().Payload(payload)
		if err != nil {
			return errorf(http.StatusBadRequest, "field %q: %v", field("payload"), err)
		}
		payload, err = json.Marshal(map[string]json.RawMessage{eventlog.AgentContentField: red})
		if err != nil {
			return errorf(http.StatusBadRequest, "field %q: %v", field("payload"), err)
		}
		drafts[i] = eventlog.Draft{Turn: e.Turn, Time: now, Type: e.Type, Payload: payload}
	}
	if err := eventlog.Validate(session, drafts); err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	if _, err := s.claim(r.Context(), session, p, "", ""); err != nil {
		return err
	}
	ctx, cancel := s.appendContext()
	defer cancel()
	stored, err := s.store.Append(ctx, session, drafts...)
	if err != nil {
		return fmt.Errorf("write the event log: %w", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": stored})
	return nil
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}
