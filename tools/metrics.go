package tools

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// metricsWindow is how many of a tool's latest durations a Metrics keeps for its
// percentiles: enough for every call of a long session, bounded for a server that runs
// for weeks.
const metricsWindow = 1024

// Metrics counts the calls of each tool, their failures and their durations. A
// scheduler records every call it ends into the Metrics of its Options; one Metrics may
// be shared by many schedulers (a session's and the process's). It is safe for
// concurrent use, and recording takes one short lock, so that the scheduler's hot path
// stays cheap.
type Metrics struct {
	mu    sync.Mutex
	tools map[string]*toolMetrics
}

// toolMetrics is what a Metrics keeps of one tool.
type toolMetrics struct {
	calls, errors, cancelled int
	// durations is a ring of the latest metricsWindow execution times; next is where
	// the next one goes.
	durations []time.Duration
	next      int
}

// NewMetrics returns an empty Metrics.
func NewMetrics() *Metrics { return &Metrics{tools: map[string]*toolMetrics{}} }

// Record counts one ended call of tool with status; ran is how long it executed, or
// 0 when it never started (refused, invalid, cancelled before it ran), in which case no
// duration is kept. A nil Metrics records nothing.
func (m *Metrics) Record(tool string, status Status, ran time.Duration) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tools[tool]
	if t == nil {
		t = &toolMetrics{}
		m.tools[tool] = t
	}
	t.calls++
	switch status {
	case StatusError:
		t.errors++
	case StatusCancelled:
		t.cancelled++
	}
	if ran <= 0 {
		return
	}
	if len(t.durations) < metricsWindow {
		t.durations = append(t.durations, ran)
		return
	}
	t.durations[t.next] = ran
	t.next = (t.next + 1) % metricsWindow
}

// ToolStats are the metrics of one tool. Its JSON form is the ToolStats of the editor
// protocol's agentls.metrics.
type ToolStats struct {
	Name string `json:"name"`
	// Calls counts every call that ended, whatever its status; Errors those that
	// failed and Cancelled those cancelled.
	Calls     int `json:"calls"`
	Errors    int `json:"errors"`
	Cancelled int `json:"cancelled"`
	// P50MS and P95MS are the median and the 95th percentile of the execution times,
	// in milliseconds, over the latest 1024 calls that ran (0 when none ran).
	P50MS float64 `json:"p50Ms"`
	P95MS float64 `json:"p95Ms"`
}

// Snapshot returns the metrics of every tool called so far, sorted by name. A nil
// Metrics has none.
func (m *Metrics) Snapshot() []ToolStats {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	out := make([]ToolStats, 0, len(m.tools))
	samples := make([][]time.Duration, 0, len(m.tools))
	for name, t := range m.tools {
		out = append(out, ToolStats{Name: name, Calls: t.calls, Errors: t.errors, Cancelled: t.cancelled})
		samples = append(samples, slices.Clone(t.durations))
	}
	m.mu.Unlock()
	// Sorting happens outside the lock: a snapshot must not hold up the calls.
	for i, d := range samples {
		slices.Sort(d)
		out[i].P50MS = millis(percentile(d, 50))
		out[i].P95MS = millis(percentile(d, 95))
	}
	slices.SortFunc(out, func(a, b ToolStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// percentile returns the p-th percentile of sorted by the nearest-rank method: the
// smallest value with at least p percent of the values at or below it.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
