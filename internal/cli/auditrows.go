package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
)

// decisionTypes are the events a decision row is made of.
var decisionTypes = []eventlog.Type{
	server.TypeSessionBound, eventlog.TypeToolCallRequested,
	eventlog.TypePermissionRequested, eventlog.TypePermissionResolved,
}

// maxCallRunes is how much of what was run a row shows.
const maxCallRunes = 80

// decisionRow is one decision of the log: what was asked, by which agent,
// and who decided what.
type decisionRow struct {
	Time       time.Time `json:"time"`
	Session    string    `json:"session"`
	ToolCallID string    `json:"toolCallId"`
	Agent      string    `json:"agent,omitempty"`
	Tool       string    `json:"tool"`
	// Call is what was run: the command, path, URL or MCP tool with its
	// arguments, on one line.
	Call     string `json:"call"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Actor is who decided: policy, user, hook, classifier or system.
	Actor string `json:"actor,omitempty"`
	// Via is where a person answered: page, terminal, link, api, command,
	// webhook, mcp-elicitation or remote (approval.Answer.Via).
	Via  string `json:"via,omitempty"`
	Rule string `json:"rule,omitempty"`
	// RuleOrigin is the file and line of the rule.
	RuleOrigin string `json:"ruleOrigin,omitempty"`
	// Source is the stage of the pipeline that decided (sourcedFrom).
	Source string `json:"sourcedFrom,omitempty"`
	// Pending is true for a question still waiting for a person.
	Pending bool `json:"pending,omitempty"`
	// requested is set once the event that carries the call was read
	// ([gate.CarriesCall]): its Call and Agent come from there.
	requested bool
}

// by says who decided, for the table.
func (r decisionRow) by() string {
	switch {
	case r.Pending:
		return "waiting for a person"
	case r.Reason == "prior_approval":
		return "session approval"
	case r.Reason == "lease":
		return "lease"
	case r.Actor == "user" && r.Via != "":
		return "user via " + r.Via
	case r.Actor == "policy" && r.Rule != "":
		return "rule " + r.Rule
	case r.Actor == "policy" && r.Source != "":
		return "policy (" + r.Source + ")"
	}
	return dash(r.Actor)
}

// decisionRows turns events into decision rows: one per
// permission.resolved, and one per question still pending when flush is
// called. It must see the events of a call in log order.
type decisionRows struct {
	calls  map[string]*decisionRow // by session and tool call id, until resolved
	owners map[string]string       // session → the token that started it
	asked  []string                // keys of calls asked, in order
	names  map[string]string       // agent id → the name of its token file
}

// newDecisionRows returns an empty set of rows; names maps the agent ids
// of the log to the names of their token files (see server.AgentNames).
func newDecisionRows(names map[string]string) *decisionRows {
	return &decisionRows{calls: map[string]*decisionRow{}, owners: map[string]string{}, names: names}
}

// owner is how a row names the token that started session: the name of
// its token file when it is known, else its id.
func (d *decisionRows) owner(session string) string {
	id := d.owners[session]
	if name := d.names[id]; name != "" {
		return name
	}
	return id
}

// add takes one event and returns the row it completes, if any.
func (d *decisionRows) add(e eventlog.Event) (decisionRow, bool) {
	var p struct {
		ToolCallID     string          `json:"toolCallId"`
		Tool           string          `json:"tool"`
		Input          json.RawMessage `json:"input"`
		Agent          string          `json:"agent"`
		Owner          string          `json:"owner"`
		Decision       string          `json:"decision"`
		Reason         string          `json:"reason"`
		Actor          string          `json:"actor"`
		Via            string          `json:"via"`
		Rule           string          `json:"rule"`
		RuleOrigin     string          `json:"ruleOrigin"`
		SourcedFrom    string          `json:"sourcedFrom"`
		SuggestedRule  string          `json:"suggestedRule"`
		RiskAtDecision string          `json:"riskAtDecision"`
	}
	if json.Unmarshal(e.Payload, &p) != nil {
		return decisionRow{}, false
	}
	if e.Type == server.TypeSessionBound {
		d.owners[e.Session] = p.Owner
		return decisionRow{}, false
	}
	if p.ToolCallID == "" && e.Type != eventlog.TypePermissionResolved {
		return decisionRow{}, false
	}
	key := e.Session + "\x00" + p.ToolCallID
	if p.ToolCallID == "" {
		key = fmt.Sprintf("%s\x00#%d", e.Session, e.Seq) // a decision of no call named
	}
	r := d.calls[key]
	if r == nil {
		r = &decisionRow{Session: e.Session, ToolCallID: p.ToolCallID, Tool: p.Tool, Call: p.Tool}
		d.calls[key] = r
	}
	if !r.requested && gate.CarriesCall(e.Type, p.Input) {
		r.Call, r.Agent, r.requested = callText(p.Tool, p.Input), p.Agent, true
	}
	switch e.Type {
	case eventlog.TypePermissionRequested:
		r.Time, r.Decision, r.Reason, r.Pending = e.Time, "ask", p.Reason, true
		r.Source = p.SourcedFrom
		d.asked = append(d.asked, key)
	case eventlog.TypePermissionResolved:
		delete(d.calls, key)
		r.Time, r.Pending = e.Time, false
		r.Decision, r.Reason, r.Actor, r.Via = p.Decision, p.Reason, p.Actor, p.Via
		r.Rule, r.RuleOrigin, r.Source = p.Rule, p.RuleOrigin, p.SourcedFrom
		if r.Agent == "" {
			r.Agent = d.owner(e.Session)
		}
		return *r, true
	}
	return decisionRow{}, false
}

// pending returns the questions asked and not resolved, in the order they
// were asked.
func (d *decisionRows) pending() []decisionRow {
	var out []decisionRow
	for _, k := range d.asked {
		if r := d.calls[k]; r != nil && r.Pending {
			if r.Agent == "" {
				r.Agent = d.owner(r.Session)
			}
			out = append(out, *r)
		}
	}
	d.asked = nil
	return out
}

// callText says on one line what a call runs: the command, the path, the
// URL or, for another tool (an MCP tool), its arguments as JSON. An input
// that is no JSON object says nothing more than the tool.
func callText(tool string, raw json.RawMessage) string {
	var input map[string]any
	_ = json.Unmarshal(raw, &input)
	for _, k := range []string{"command", "cmd", "file_path", "path", "absolute_path", "notebook_path", "url", "pattern"} {
		switch v := input[k].(type) {
		case string:
			if v != "" {
				return tool + ": " + v
			}
		case []any:
			var parts []string
			for _, p := range v {
				s, _ := p.(string)
				parts = append(parts, s)
			}
			return tool + ": " + strings.Join(parts, " ")
		}
	}
	if len(input) == 0 {
		return tool
	}
	b, _ := json.Marshal(input)
	return tool + " " + string(b)
}

// clipRunes cuts s to n runes, marking the cut with "…".
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// rowFilter selects rows by the flags of audit.
type rowFilter struct {
	decisions, tools []string
	limit            int
	n                int
}

// keep reports whether r is shown, counting it against the limit.
func (f *rowFilter) keep(r decisionRow) bool {
	if len(f.decisions) > 0 && !slices.Contains(f.decisions, r.Decision) {
		return false
	}
	if len(f.tools) > 0 && !slices.Contains(f.tools, r.Tool) {
		return false
	}
	if f.limit > 0 && f.n >= f.limit {
		return false
	}
	f.n++
	return true
}

// rowWriter prints decision rows as a table or as JSON Lines.
type rowWriter struct {
	w    io.Writer
	json *json.Encoder
	tab  *tabwriter.Writer
	head bool
	n    int
}

func newRowWriter(w io.Writer, asJSON bool) *rowWriter {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return &rowWriter{w: w, json: enc}
	}
	return &rowWriter{w: w, tab: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (a *rowWriter) write(r decisionRow) {
	a.n++
	if a.json != nil {
		_ = a.json.Encode(r)
		return
	}
	if !a.head {
		fmt.Fprintln(a.tab, "TIME\tSESSION\tAGENT\tCALL\tDECISION\tBY\tREASON")
		a.head = true
	}
	fmt.Fprintf(a.tab, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Args(r.Time.UTC().Format(time.RFC3339), r.Session, dash(r.Agent),
		clipRunes(termtext.Escape(termtext.OneLine(r.Call, 4*maxCallRunes)), maxCallRunes), r.Decision, r.by(), dash(r.Reason))...)
}

// flush ends the table; with end, it says how many decisions were shown,
// and in which order.
func (a *rowWriter) flush(end bool) {
	if a.tab == nil {
		return
	}
	_ = a.tab.Flush()
	if !end {
		return
	}
	switch a.n {
	case 0:
		fmt.Fprintln(a.w, "no decisions match")
	case 1:
		fmt.Fprintln(a.w, "1 decision")
	default:
		fmt.Fprintf(a.w, "%d decisions, oldest first\n", a.n)
	}
}
