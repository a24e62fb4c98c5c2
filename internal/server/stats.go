package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Bounds of GET /v1/stats.
const (
	// DefaultStatsWindow is how far back the statistics look when no
	// since= is given.
	DefaultStatsWindow = 24 * time.Hour
	// maxStatsEvents bounds the events one statistics request reads.
	maxStatsEvents = 500_000
	// statsTop is how many reasons, rules, sessions and agents are listed.
	statsTop = 20
)

// Stats is the answer to GET /v1/stats.
type Stats struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Truncated reports that the window held more events than one request
	// reads; the counts cover the oldest ones.
	Truncated bool `json:"truncated"`
	// Totals counts calls, the final decisions, and how many asked a
	// person.
	Totals Counts `json:"totals"`
	// Hourly holds the counts per hour, oldest first.
	Hourly []HourCounts `json:"hourly"`
	// TopReasons and TopRules are what asked or denied most.
	TopReasons []Ranked `json:"top_reasons"`
	TopRules   []Ranked `json:"top_rules"`
	// Sessions and Agents are the calls per session and per agent, most
	// first.
	Sessions []Ranked `json:"sessions"`
	Agents   []Ranked `json:"agents"`
}

// Counts are the outcomes of calls.
type Counts struct {
	Calls int `json:"calls"`
	Allow int `json:"allow"`
	Ask   int `json:"ask"`
	Deny  int `json:"deny"`
}

// HourCounts are the [Counts] of one hour.
type HourCounts struct {
	Hour time.Time `json:"hour"`
	Counts
}

// Ranked is one entry of a top list: a reason, rule, session or agent.
type Ranked struct {
	Name     string `json:"name"`
	Decision string `json:"decision,omitempty"`
	Count    int    `json:"count"`
}

// handleStats: GET /v1/stats?since= (approver).
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request, _ principal) error {
	for k := range r.URL.Query() {
		if k != "since" && k != "until" {
			return errorf(http.StatusBadRequest, "unknown query parameter %q: stats takes since and until", clip(k, 40))
		}
	}
	now := s.clock().UTC()
	since, err := parseWhen(r.URL.Query().Get("since"), now)
	if err != nil {
		return errorf(http.StatusBadRequest, "query parameter \"since\": %v", err)
	}
	if since.IsZero() {
		since = now.Add(-DefaultStatsWindow)
	}
	until, err := parseWhen(r.URL.Query().Get("until"), now)
	if err != nil {
		return errorf(http.StatusBadRequest, "query parameter \"until\": %v", err)
	}
	if until.IsZero() {
		until = now
	}
	st, err := s.stats(r, since.UTC(), until.UTC())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

type rankKey struct{ name, decision string }

func (s *Server) stats(r *http.Request, since, until time.Time) (*Stats, error) {
	st := &Stats{Since: since, Until: until}
	hours := map[time.Time]*Counts{}
	reasons, rules := map[rankKey]int{}, map[rankKey]int{}
	sessions, agents := map[rankKey]int{}, map[rankKey]int{}
	hour := func(t time.Time) *Counts {
		h := t.UTC().Truncate(time.Hour)
		c := hours[h]
		if c == nil {
			c = &Counts{}
			hours[h] = c
		}
		return c
	}
	f := eventlog.Filter{
		Types: []eventlog.Type{eventlog.TypeToolCallRequested, eventlog.TypePermissionRequested, eventlog.TypePermissionResolved},
		Since: since, Until: until, Limit: maxStatsEvents,
	}
	var payload struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Rule     string `json:"rule"`
		Agent    string `json:"agent"`
	}
	n := 0
	for e, err := range s.store.Query(r.Context(), f) {
		if err != nil {
			return nil, fmt.Errorf("read the event log: %w", err)
		}
		n++
		payload.Decision, payload.Reason, payload.Rule, payload.Agent = "", "", "", ""
		_ = json.Unmarshal(e.Payload, &payload)
		c := hour(e.Time)
		switch e.Type {
		case eventlog.TypeToolCallRequested:
			c.Calls++
			st.Totals.Calls++
			sessions[rankKey{e.Session, ""}]++
			if payload.Agent != "" {
				agents[rankKey{payload.Agent, ""}]++
			}
		case eventlog.TypePermissionRequested:
			c.Ask++
			st.Totals.Ask++
			reasons[rankKey{payload.Reason, "ask"}]++
			if payload.Rule != "" {
				rules[rankKey{payload.Rule, "ask"}]++
			}
		case eventlog.TypePermissionResolved:
			switch payload.Decision {
			case "allow":
				c.Allow++
				st.Totals.Allow++
			case "deny":
				c.Deny++
				st.Totals.Deny++
				reasons[rankKey{payload.Reason, "deny"}]++
				if payload.Rule != "" {
					rules[rankKey{payload.Rule, "deny"}]++
				}
			}
		}
	}
	st.Truncated = n >= maxStatsEvents
	st.Hourly = make([]HourCounts, 0, len(hours))
	for h, c := range hours {
		st.Hourly = append(st.Hourly, HourCounts{Hour: h, Counts: *c})
	}
	slices.SortFunc(st.Hourly, func(a, b HourCounts) int { return a.Hour.Compare(b.Hour) })
	st.TopReasons, st.TopRules = top(reasons), top(rules)
	st.Sessions, st.Agents = top(sessions), top(agents)
	return st, nil
}

// top returns the statsTop largest counts of m, largest first.
func top(m map[rankKey]int) []Ranked {
	out := make([]Ranked, 0, len(m))
	for k, n := range m {
		out = append(out, Ranked{Name: k.name, Decision: k.decision, Count: n})
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Decision, b.Decision))
	})
	if len(out) > statsTop {
		out = out[:statsTop]
	}
	return out
}
