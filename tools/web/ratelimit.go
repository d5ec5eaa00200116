package web

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// limiter is a sliding-window rate limit per host: at most n requests to one host in any
// window. Gemini CLI keeps the same limit, so a model cannot hammer a site through
// web_fetch.
type limiter struct {
	n      int
	window time.Duration
	now    func() time.Time

	mu sync.Mutex
	// sent holds, per host, the times of the requests within the last window, oldest
	// first.
	sent map[string][]time.Time
}

func newLimiter(n int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{n: n, window: window, now: now, sent: map[string][]time.Time{}}
}

// rateLimitError is a request refused by the limiter.
type rateLimitError struct {
	host  string
	n     int
	retry time.Duration
}

func (e *rateLimitError) Error() string {
	return fmt.Sprintf("rate limit exceeded for %s: at most %d requests a minute are sent to one host; try again in %d s",
		e.host, e.n, int(math.Ceil(e.retry.Seconds())))
}

// reserve counts one request to host, or returns a *rateLimitError if the window is full.
func (l *limiter) reserve(host string) error {
	host = normalizeHost(host)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	times := l.sent[host]
	if len(times) >= l.n {
		return &rateLimitError{host: host, n: l.n, retry: times[0].Add(l.window).Sub(now)}
	}
	l.sent[host] = append(times, now)
	return nil
}

// prune forgets requests that left the window, and hosts with none left, so that the
// map does not grow with every host ever fetched.
func (l *limiter) prune(now time.Time) {
	cutoff := now.Add(-l.window)
	for host, times := range l.sent {
		i := 0
		for i < len(times) && !times[i].After(cutoff) {
			i++
		}
		switch {
		case i == len(times):
			delete(l.sent, host)
		case i > 0:
			l.sent[host] = append(times[:0:0], times[i:]...)
		}
	}
}
