package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlElicitor answers URL questions with url and the "are you done" form with done
// (or, when done is empty, waits until the question is withdrawn), calling onURL first.
type urlElicitor struct {
	url   string
	done  string
	onURL func(q *URLQuestion)

	mu        sync.Mutex
	urls      []*URLQuestion
	forms     int
	withdrawn int
}

func (e *urlElicitor) ElicitURL(_ context.Context, q *URLQuestion) (string, error) {
	e.mu.Lock()
	e.urls = append(e.urls, q)
	e.mu.Unlock()
	if e.onURL != nil {
		e.onURL(q)
	}
	return e.url, nil
}

func (e *urlElicitor) Elicit(ctx context.Context, q *Question) (*Answer, error) {
	e.mu.Lock()
	e.forms++
	e.mu.Unlock()
	if e.done != "" {
		return &Answer{Action: e.done}, nil
	}
	<-ctx.Done()
	e.mu.Lock()
	e.withdrawn++
	e.mu.Unlock()
	return nil, ctx.Err()
}

func (e *urlElicitor) ElicitationComplete(string, string) {}

// newGatedServer serves a tool "gated" that refuses with URLElicitationRequired (the
// link link, elicitation id "el-1") on its first refusals calls and then answers
// "open". It returns the server's URL, the count of calls, and a func that sends
// notifications/elicitation/complete for the link.
func newGatedServer(t *testing.T, link string, refusals int32) (string, *atomic.Int32, func()) {
	var calls atomic.Int32
	var sess atomic.Pointer[sdk.ServerSession]
	srv := sdk.NewServer(&sdk.Implementation{Name: "gated", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "gated", InputSchema: objectSchema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			sess.Store(req.Session)
			if calls.Add(1) <= refusals {
				return nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{{Mode: "url", URL: link,
					Message: "Sign in to the tracker.", ElicitationID: "el-1"}})
			}
			return text("open"), nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	complete := func() {
		if err := sess.Load().NotifyElicitationComplete(context.Background(), &sdk.ElicitationCompleteParams{ElicitationID: "el-1"}); err != nil {
			t.Errorf("NotifyElicitationComplete: %v", err)
		}
	}
	return ts.URL, &calls, complete
}

// TestURLElicitationRequired: a call refused with -32042 sends the person to the link
// and runs again once the server says the link was completed (the "are you done"
// question then withdrawn) or the person says they are done; it is not run again
// when the person declines, nobody can be sent to a link, the link is not http(s),
// or the server keeps refusing past the retries.
func TestURLElicitationRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		link      string
		refusals  int32
		asker     func(complete func()) Elicitor
		wantCalls int32
		wantErr   string // "" for the result "open"
		wantURLs  int
		withdrawn int
	}{
		{"server completes", "https://tracker.example/login", 1,
			func(complete func()) Elicitor {
				return &urlElicitor{url: ActionAccept, onURL: func(*URLQuestion) { go complete() }}
			}, 2, "", 1, 1},
		{"person is done", "https://tracker.example/login", 1,
			func(func()) Elicitor { return &urlElicitor{url: ActionAccept, done: ActionAccept} }, 2, "", 1, 0},
		{"person declines the link", "https://tracker.example/login", 1,
			func(func()) Elicitor { return &urlElicitor{url: ActionDecline} }, 1, "they chose not to (decline)", 1, 0},
		{"person does not run it again", "https://tracker.example/login", 1,
			func(func()) Elicitor { return &urlElicitor{url: ActionAccept, done: ActionCancel} }, 1, "chose not to run it again", 1, 0},
		{"not http", "javascript:alert(1)", 1,
			func(func()) Elicitor { return &urlElicitor{url: ActionAccept, done: ActionAccept} }, 1, "not an http or https URL", 0, 0},
		{"no links in this front end", "https://tracker.example/login", 1,
			func(func()) Elicitor { return &scriptedElicitor{answer: &Answer{Action: ActionAccept}} }, 1, "cannot show links", 0, 0},
		{"server keeps refusing", "https://tracker.example/login", 10,
			func(func()) Elicitor { return &urlElicitor{url: ActionAccept, done: ActionAccept} }, 3, "URL elicitation required", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, calls, complete := newGatedServer(t, tc.link, tc.refusals)
			asker := tc.asker(complete)
			m := startManager(t, Options{Servers: map[string]ServerConfig{"s": {URL: u, Trust: true}}, Elicit: asker})
			r, err := call(t.Context(), t, m, "s__gated", `{}`)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("call: %v", err)
			case tc.wantErr == "" && r.Output != "open":
				t.Errorf("output %q, want open", r.Output)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("the server was called %d times, want %d", got, tc.wantCalls)
			}
			if e, ok := asker.(*urlElicitor); ok {
				e.mu.Lock()
				defer e.mu.Unlock()
				if len(e.urls) != tc.wantURLs {
					t.Errorf("%d links shown, want %d", len(e.urls), tc.wantURLs)
				}
				for _, q := range e.urls {
					if q.URL != tc.link || q.ElicitationID != "el-1" || q.Server != "s" || q.Message != "Sign in to the tracker." {
						t.Errorf("link question %+v", q)
					}
				}
				if e.withdrawn != tc.withdrawn {
					t.Errorf("%d questions withdrawn, want %d", e.withdrawn, tc.withdrawn)
				}
			}
		})
	}
}
