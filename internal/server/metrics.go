package server

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// metrics are the server's Prometheus counters, written in the text
// exposition format by hand.
type metrics struct {
	mu        sync.Mutex
	decisions map[[2]string]uint64 // {decision, reason} → count
	check     histogram
	wait      histogram
}

type histogram struct {
	bounds []float64
	counts []uint64 // per bound, not cumulative; one more for +Inf
	sum    float64
	count  uint64
}

func newHistogram(bounds ...float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i]++
	h.sum += v
	h.count++
}

func newMetrics() *metrics {
	return &metrics{
		decisions: map[[2]string]uint64{},
		check:     newHistogram(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
		wait:      newHistogram(0.5, 1, 2.5, 5, 10, 15, 20, 30, 45, 60, 120, 300),
	}
}

func (m *metrics) countDecision(decision, reason string) {
	m.mu.Lock()
	m.decisions[[2]string{decision, reason}]++
	m.mu.Unlock()
}

func (m *metrics) observeCheck(d time.Duration) {
	m.mu.Lock()
	m.check.observe(d.Seconds())
	m.mu.Unlock()
}

func (m *metrics) observeWait(d time.Duration) {
	m.mu.Lock()
	m.wait.observe(d.Seconds())
	m.mu.Unlock()
}

// handleMetrics: GET /metrics (approver), Prometheus text format 0.0.4.
func (s *Server) handleMetrics(w http.ResponseWriter, _ *http.Request, _ principal) error {
	pending := s.broker.Pending()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	m := s.met
	m.mu.Lock()
	keys := make([][2]string, 0, len(m.decisions))
	for k := range m.decisions {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	fmt.Fprintln(bw, "# HELP toolgate_decisions_total Final decisions of the checks made through this server, by decision and reason.")
	fmt.Fprintln(bw, "# TYPE toolgate_decisions_total counter")
	for _, k := range keys {
		fmt.Fprintf(bw, "toolgate_decisions_total{decision=\"%s\",reason=\"%s\"} %d\n", labelValue(k[0]), labelValue(k[1]), m.decisions[k])
	}
	writeHistogram(bw, "toolgate_check_duration_seconds", "Time from receiving a check to the engine's decision (or to the question reaching a person).", &m.check)
	writeHistogram(bw, "toolgate_approval_wait_seconds", "Time approvals waited until they were answered, timed out or cancelled.", &m.wait)
	m.mu.Unlock()
	fmt.Fprintln(bw, "# HELP toolgate_approvals_pending Approvals waiting for a person now.")
	fmt.Fprintln(bw, "# TYPE toolgate_approvals_pending gauge")
	fmt.Fprintf(bw, "toolgate_approvals_pending %d\n", pending)
	if st, ok := s.store.(interface{ Stats() eventlog.CommitStats }); ok {
		c := st.Stats()
		fmt.Fprintln(bw, "# HELP toolgate_eventlog_commits_total Transactions the event log committed (with SQLite's durable default, one fsync each).")
		fmt.Fprintln(bw, "# TYPE toolgate_eventlog_commits_total counter")
		fmt.Fprintf(bw, "toolgate_eventlog_commits_total %d\n", c.Commits)
		fmt.Fprintln(bw, "# HELP toolgate_eventlog_events_total Events those transactions held; divided by the commits, the average group commit.")
		fmt.Fprintln(bw, "# TYPE toolgate_eventlog_events_total counter")
		fmt.Fprintf(bw, "toolgate_eventlog_events_total %d\n", c.Events)
	}
	return bw.Flush()
}

func writeHistogram(w *bufio.Writer, name, help string, h *histogram) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{le=\"%s\"} %d\n", name, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)]
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n", name, cum)
	fmt.Fprintf(w, "%s_sum %s\n", name, strconv.FormatFloat(h.sum, 'g', -1, 64))
	fmt.Fprintf(w, "%s_count %d\n", name, h.count)
}

// labelValue escapes a Prometheus label value.
func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
