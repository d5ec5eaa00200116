package session

import (
	"log/slog"
	"time"

	"github.com/agentls/agentls/tools"
)

// ToolRun is the end of one tool call of a session, as its file keeps it for
// `agentls stats`: the tool, the status and how long it executed (0 when it never
// ran).
type ToolRun struct {
	Name   string       `json:"name"`
	Status tools.Status `json:"status"`
	MS     float64      `json:"ms,omitempty"`
}

// runTimer follows the tool calls of a batch from their start of execution to their
// end, for the session's file. Its methods are called from the scheduler's observer,
// concurrently; the Live's mu guards it.
type runTimer struct {
	started map[string]time.Time
	ended   []ToolRun
}

// event notes ev; it returns nothing, the ended calls collect in ended.
func (r *runTimer) event(ev tools.Event) {
	switch {
	case ev.Status == tools.StatusExecuting:
		if r.started == nil {
			r.started = map[string]time.Time{}
		}
		r.started[ev.CallID] = time.Now()
	case ev.Status.Terminal():
		run := ToolRun{Name: ev.Name, Status: ev.Status}
		if t, ok := r.started[ev.CallID]; ok {
			run.MS = float64(time.Since(t).Microseconds()) / 1000
			delete(r.started, ev.CallID)
		}
		r.ended = append(r.ended, run)
	}
}

// take returns the calls ended since the last take.
func (r *runTimer) take() []ToolRun {
	out := r.ended
	r.ended = nil
	return out
}

// recordRuns keeps the ends of tool calls in the session's file.
func (s *Session) recordRuns(runs []ToolRun) {
	for i := range runs {
		s.persist(record{Type: recRun, Turn: s.prompts, Run: &runs[i]})
	}
}

// ToolRuns returns the ends of the tool calls the stored session id ran, in order: what
// `agentls stats` counts. Sessions stored before agentls kept them have none.
func (st *Store) ToolRuns(id string) ([]ToolRun, error) {
	s, err := st.load(id, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	return s.runs, nil
}

// MetricsOf returns the metrics of runs, as tools.Metrics computes them.
func MetricsOf(runs []ToolRun) []tools.ToolStats {
	m := tools.NewMetrics()
	for _, r := range runs {
		m.Record(r.Name, r.Status, time.Duration(r.MS*float64(time.Millisecond)))
	}
	return m.Snapshot()
}
