package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/tools/web/redact"
)

// RetryPolicy says how the HTTP clients retry answers that may succeed later (429 and
// 5xx). Retries happen before any of the response is read, so a stream that started is
// never repeated.
type RetryPolicy struct {
	// Attempts is the number of tries in all; 0 means 4.
	Attempts int
	// BaseDelay is the wait before the first retry, doubled for each further one; 0
	// means one second. Tests set a few milliseconds.
	BaseDelay time.Duration
	// MaxDelay caps the wait between tries; a server asking (through Retry-After) for a
	// longer pause ends the retries at once. 0 means one minute.
	MaxDelay time.Duration
	// Sleep waits d or until ctx is done; nil waits on a timer. Tests record the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) attempts() int {
	if p.Attempts <= 0 {
		return 4
	}
	return p.Attempts
}

func (p RetryPolicy) base() time.Duration {
	if p.BaseDelay <= 0 {
		return time.Second
	}
	return p.BaseDelay
}

func (p RetryPolicy) maxDelay() time.Duration {
	if p.MaxDelay <= 0 {
		return time.Minute
	}
	return p.MaxDelay
}

func (p RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryTransport retries 429 and 5xx answers of an inner RoundTripper.
type retryTransport struct {
	inner  http.RoundTripper
	policy RetryPolicy
	log    *slog.Logger
}

// callInfo is what the retry transport saw of a call's last answer, for error messages
// (the SDKs do not always keep the status and the server's words).
type callInfo struct {
	mu       sync.Mutex
	attempts int
	status   int
	body     []byte
	// wait is the pause the server asked for when it was too long to take.
	wait time.Duration
}

func (ci *callInfo) record(attempts, status int, body []byte) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	ci.attempts, ci.status, ci.body = attempts, status, body
}

func (ci *callInfo) get() (attempts, status int, body []byte, wait time.Duration) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return ci.attempts, ci.status, ci.body, ci.wait
}

type callInfoKey struct{}

// trackCall returns a context through which the retry transport reports on the call.
func trackCall(ctx context.Context) (context.Context, *callInfo) {
	ci := new(callInfo)
	return context.WithValue(ctx, callInfoKey{}, ci), ci
}

// maxErrorBody bounds how much of an error answer is kept for the message.
const maxErrorBody = 64 << 10

// peekBody reads the start of resp's body and leaves the body whole for the next reader.
func peekBody(resp *http.Response) []byte {
	if resp.Body == nil {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return nil
	}
	return head
}

func newRetryClient(policy RetryPolicy, inner http.RoundTripper, log *slog.Logger) *http.Client {
	if inner == nil {
		inner = http.DefaultTransport
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Client{Transport: &retryTransport{inner: inner, policy: policy, log: log}}
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.Body != nil && req.GetBody == nil {
		// The body must be sent again on a retry: keep it.
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the request body: %w", err)
		}
		req = req.Clone(ctx)
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	attempts := t.policy.attempts()
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("rewinding the request body: %w", err)
				}
				r.Body = body
			}
		}
		resp, err := t.inner.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		var body []byte
		if resp.StatusCode >= 400 {
			body = peekBody(resp)
		}
		if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
			ci.record(attempt, resp.StatusCode, body)
		}
		if !retryable(resp.StatusCode) || attempt >= attempts {
			return resp, nil
		}
		wait := t.policy.base() << (attempt - 1)
		asked, hasAsked := retryAfter(resp.Header, body, time.Now())
		if hasAsked {
			wait = asked
		}
		if wait > t.policy.maxDelay() {
			if hasAsked {
				// Waiting that long inside a model call helps nobody: report it.
				if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
					ci.mu.Lock()
					ci.wait = asked
					ci.mu.Unlock()
				}
				return resp, nil
			}
			wait = t.policy.maxDelay()
		}
		// Drain so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		// The URL says which endpoint is busy; its secrets (a password, a key in the
		// query) are masked. Keys sent in headers never reach the log.
		t.log.LogAttrs(ctx, slog.LevelWarn, "model endpoint busy, retrying",
			slog.String("url", redact.URL(req.URL)), slog.Int("status", resp.StatusCode),
			slog.Int("attempt", attempt), slog.Duration("wait", wait))
		if err := t.policy.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// retryAfter reads how long the server asked to wait: the Retry-After header (seconds
// or an HTTP date), or else the RetryInfo detail of a Google API error body
// ("retryDelay": "12.5s").
func retryAfter(h http.Header, body []byte, now time.Time) (time.Duration, bool) {
	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		return d, true
	}
	var e struct {
		Error struct {
			Details []struct {
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	if len(body) == 0 || json.Unmarshal(body, &e) != nil {
		return 0, false
	}
	for _, d := range e.Error.Details {
		if d.RetryDelay == "" {
			continue
		}
		if v, err := time.ParseDuration(d.RetryDelay); err == nil && v >= 0 {
			return v, true
		}
	}
	return 0, false
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
