package tools

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 95, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"median of five is the third", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"p95 of twenty is the nineteenth", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond},
		{"p95 of ten is the last", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 95, 10 * time.Millisecond},
	}
	for _, c := range cases {
		if got := percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: percentile(%v, %d) = %v, want %v", c.name, c.sorted, c.p, got, c.want)
		}
	}
}

func TestMetricsRecord(t *testing.T) {
	m := NewMetrics()
	for i := 1; i <= 20; i++ {
		m.Record("read_file", StatusSuccess, time.Duration(i)*time.Millisecond)
	}
	m.Record("read_file", StatusError, 0)
	m.Record("glob", StatusCancelled, 0)
	m.Record("glob", StatusError, 3*time.Millisecond)
	got := m.Snapshot()
	want := []ToolStats{
		{Name: "glob", Calls: 2, Errors: 1, Cancelled: 1, P50MS: 3, P95MS: 3},
		{Name: "read_file", Calls: 21, Errors: 1, P50MS: 10, P95MS: 19},
	}
	if len(got) != len(want) {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("snapshot[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	var none *Metrics
	none.Record("x", StatusSuccess, time.Second) // a nil Metrics records nothing, and does not panic
	if s := none.Snapshot(); s != nil {
		t.Errorf("nil metrics snapshot = %+v", s)
	}
}

// TestMetricsWindow: the percentiles are over the latest calls, the counts over all.
func TestMetricsWindow(t *testing.T) {
	m := NewMetrics()
	for range metricsWindow {
		m.Record("t", StatusSuccess, time.Second)
	}
	for range metricsWindow {
		m.Record("t", StatusSuccess, time.Millisecond)
	}
	s := m.Snapshot()[0]
	if s.Calls != 2*metricsWindow || s.P95MS != 1 {
		t.Errorf("after %d slow and %d fast calls: %+v; want %d calls, p95 1 ms", metricsWindow, metricsWindow, s, 2*metricsWindow)
	}
}

// TestSchedulerRecordsMetrics: every call a scheduler ends reaches each of its Metrics,
// with its status; a call refused before it ran counts without a duration.
func TestSchedulerRecordsMetrics(t *testing.T) {
	session, process := NewMetrics(), NewMetrics()
	ok := &fakeTool{name: "ok", exec: func(context.Context, *fakeInv, io.Writer) (*Result, error) {
		time.Sleep(2 * time.Millisecond)
		return &Result{Output: "fine"}, nil
	}}
	bad := &fakeTool{name: "bad", exec: func(context.Context, *fakeInv, io.Writer) (*Result, error) {
		return nil, errors.New("broken")
	}}
	env := newEnv(t, func(o *Options) { o.Metrics = []*Metrics{session, nil, process} }, ok, bad)
	env.s.Run(t.Context(), []Request{req("1", "ok", `{}`), req("2", "bad", `{}`), req("3", "ok", `{}`), req("4", "bad", `{"id":"refuse"}`)})
	for name, m := range map[string]*Metrics{"session": session, "process": process} {
		got := m.Snapshot()
		if len(got) != 2 || got[0].Name != "bad" || got[1].Name != "ok" {
			t.Fatalf("%s metrics = %+v", name, got)
		}
		if b := got[0]; b.Calls != 2 || b.Errors != 2 {
			t.Errorf("%s: bad = %+v, want 2 calls, 2 errors", name, b)
		}
		if o := got[1]; o.Calls != 2 || o.Errors != 0 || o.P50MS < 2 {
			t.Errorf("%s: ok = %+v, want 2 calls, no errors, p50 of at least 2 ms", name, o)
		}
	}
}
