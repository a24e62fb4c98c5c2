package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
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

// statsBuckets are the periods GET /v1/stats counts by (bucket=).
var statsBuckets = []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour}

// Stats is the answer to GET /v1/stats.
type Stats struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Truncated reports that the window held more events than one request
	// reads; the counts cover the oldest ones.
	Truncated bool `json:"truncated"`
	// Totals counts the calls that came in the window by how they ended:
	// Calls = Allow + Deny + Pending. Ask counts those of them that were
	// put to a person (or a hook or classifier), whatever the answer.
	Totals Counts `json:"totals"`
	// Bucket is the length of the periods Hourly counts by: "1h0m0s"
	// unless bucket= asked for another.
	Bucket string `json:"bucket"`
	// Hourly holds the counts per period (an hour, or the bucket asked
	// for) a call came in, oldest first: a call answered an hour later is
	// counted in the period it came.
	Hourly []HourCounts `json:"hourly"`
	// TopReasons and TopRules are what asked or denied most.
	TopReasons []Ranked `json:"top_reasons"`
	TopRules   []Ranked `json:"top_rules"`
	// Sessions and Agents are the calls per session and per agent, most
	// first.
	Sessions []Ranked `json:"sessions"`
	Agents   []Ranked `json:"agents"`
}

// Counts are the outcomes of calls. Calls = Allow + Deny + Pending; Ask
// is a part of Calls, not a fourth outcome.
type Counts struct {
	Calls   int `json:"calls"`
	Allow   int `json:"allow"`
	Deny    int `json:"deny"`
	Pending int `json:"pending"`
	Ask     int `json:"ask"`
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
		if k != "since" && k != "until" && k != "bucket" {
			return errorf(http.StatusBadRequest, "unknown query parameter %q: stats takes since, until and bucket", clip(k, 40))
		}
	}
	bucket := time.Hour
	if v := r.URL.Query().Get("bucket"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || !slices.Contains(statsBuckets, d) {
			return errorf(http.StatusBadRequest, "query parameter \"bucket\" %q: one of 1m, 5m, 10m, 15m, 30m, 1h", clip(v, 40))
		}
		bucket = d
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
	st, err := s.stats(r, since.UTC(), until.UTC(), bucket)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

type rankKey struct{ name, decision string }

func (s *Server) stats(r *http.Request, since, until time.Time, bucket time.Duration) (*Stats, error) {
	st := &Stats{Since: since, Until: until, Bucket: bucket.String()}
	hours := map[time.Time]*Counts{}
	reasons, rules := map[rankKey]int{}, map[rankKey]int{}
	sessions, agents := map[rankKey]int{}, map[rankKey]int{}
	hour := func(t time.Time) *Counts {
		h := t.UTC().Truncate(bucket)
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
		ToolCallID string          `json:"toolCallId"`
		Decision   string          `json:"decision"`
		Reason     string          `json:"reason"`
		Rule       string          `json:"rule"`
		Agent      string          `json:"agent"`
		Input      json.RawMessage `json:"input"`
	}
	// Each call is counted in the hour it came, by how it ended; a call
	// that came before since is not counted, even when it ended after.
	type call struct {
		hour   time.Time
		asked  bool
		ending string // "allow", "deny", "" while pending
	}
	calls := map[[2]string]*call{}
	n := 0
	for e, err := range s.store.Query(r.Context(), f) {
		if err != nil {
			return nil, fmt.Errorf("read the event log: %w", err)
		}
		n++
		payload.ToolCallID, payload.Decision, payload.Reason, payload.Rule, payload.Agent = "", "", "", "", ""
		payload.Input = nil
		_ = json.Unmarshal(e.Payload, &payload)
		key := [2]string{e.Session, payload.ToolCallID}
		c := calls[key]
		// A call comes with the event that carries it
		// ([gate.CarriesCall]); any other ends a call that came before.
		if c == nil && payload.ToolCallID != "" && gate.CarriesCall(e.Type, payload.Input) {
			c = &call{hour: e.Time.UTC().Truncate(bucket)}
			calls[key] = c
			sessions[rankKey{e.Session, ""}]++
			if payload.Agent != "" {
				agents[rankKey{payload.Agent, ""}]++
			}
		}
		switch e.Type {
		case eventlog.TypePermissionRequested:
			reasons[rankKey{payload.Reason, "ask"}]++
			if payload.Rule != "" {
				rules[rankKey{payload.Rule, "ask"}]++
			}
			if c != nil {
				c.asked = true
			}
		case eventlog.TypePermissionResolved:
			if payload.Decision == "deny" {
				reasons[rankKey{payload.Reason, "deny"}]++
				if payload.Rule != "" {
					rules[rankKey{payload.Rule, "deny"}]++
				}
			}
			if c != nil && c.ending == "" && (payload.Decision == "allow" || payload.Decision == "deny") {
				c.ending = payload.Decision
			}
		}
	}
	for _, c := range calls {
		for _, k := range []*Counts{hour(c.hour), &st.Totals} {
			k.Calls++
			switch c.ending {
			case "allow":
				k.Allow++
			case "deny":
				k.Deny++
			default:
				k.Pending++
			}
			if c.asked {
				k.Ask++
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
