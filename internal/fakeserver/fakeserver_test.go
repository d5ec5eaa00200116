package fakeserver_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeserver"
)

// record is the toy fake's record of a request: the turn it consumed.
type record struct{ Turn int }

// toy is the smallest fake: each request consumes a turn and streams its text pieces,
// or hangs when the turn says so, then closes hung if it is not nil.
type toy struct {
	*fakeserver.Server[record]
	core *fakeserver.Core[record]
	hung chan struct{}
}

// newToy starts a toy; hung may be nil.
func newToy(script clients.Script, opts fakeserver.Options, hung chan struct{}) (*toy, error) {
	return fakeserver.Start("toy", script, opts, plainError, func(s *fakeserver.Server[record], c *fakeserver.Core[record]) *toy {
		return &toy{Server: s, core: c, hung: hung}
	})
}

func plainError(w http.ResponseWriter, status int, message, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	http.Error(w, message, status)
}

func (f *toy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.core.ReadBody(w, r); !ok {
		return
	}
	t, n := f.core.NextTurn()
	f.core.Record(record{Turn: n}, "turn", n)
	if f.core.WriteTurnError(w, t, n) {
		return
	}
	var events []any
	for _, piece := range t.TextChunks() {
		events = append(events, piece)
	}
	if !f.core.Stream(r.Context(), w, events) {
		return
	}
	if t.Hang {
		f.core.Hang(r.Context())
		if f.hung != nil {
			close(f.hung)
		}
		return
	}
	fakeserver.WriteData(w, []byte("[DONE]"))
}

func start(t *testing.T, script clients.Script) *toy {
	t.Helper()
	f, err := newToy(script, fakeserver.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func get(t *testing.T, url string) (status int, header http.Header, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b.String()
}

func TestTurns(t *testing.T) {
	t.Parallel()
	core := start(t, clients.Script{Turns: []clients.Turn{
		{Text: "abc", Chunks: 3},
		{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "slow down", RetryAfter: "7"}},
	}})
	tests := []struct {
		status    int
		retry     string
		body      string
		remaining int
	}{
		{200, "", "data: \"a\"\n\ndata: \"b\"\n\ndata: \"c\"\n\ndata: [DONE]\n\n", 1},
		{429, "7", "slow down\n", 0},
		{400, "", "toy: the script has no turn left (it has 2 turns)\n", 0},
	}
	for i, tt := range tests {
		status, header, body := get(t, core.URL)
		if status != tt.status || header.Get("Retry-After") != tt.retry || body != tt.body {
			t.Errorf("call %d: %d, Retry-After %q, body %q; want %d, %q, %q", i+1, status, header.Get("Retry-After"), body, tt.status, tt.retry, tt.body)
		}
		if got := core.Remaining(); got != tt.remaining {
			t.Errorf("call %d: %d turns remaining, want %d", i+1, got, tt.remaining)
		}
	}
	if got := fmt.Sprint(core.Requests()); got != "[{1} {2} {0}]" {
		t.Errorf("recorded %s", got)
	}
}

// TestRecord checks that Options.Record gets each request as a line of JSON, as it is
// recorded.
func TestRecord(t *testing.T) {
	t.Parallel()
	var lines strings.Builder
	f, err := newToy(clients.Script{Turns: []clients.Turn{{Text: "a"}}}, fakeserver.Options{Record: &lines}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	get(t, f.URL)
	get(t, f.URL)
	if got, want := lines.String(), "{\"Turn\":1}\n{\"Turn\":0}\n"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// TestCloseEndsHang checks that closing the server ends a turn that hangs while its
// client still waits, so that nothing is left running after a test.
func TestCloseEndsHang(t *testing.T) {
	t.Parallel()
	hung := make(chan struct{})
	core, err := newToy(clients.Script{Turns: []clients.Turn{{Text: "x", Hang: true}}}, fakeserver.Options{}, hung)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(core.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("data: \"x\"\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung:
		t.Fatal("the turn stopped hanging while its client waited")
	default:
	}
	core.Close()
	select {
	case <-hung:
	case <-time.After(time.Minute): // a guard against a deadlock, not a timing check
		t.Fatal("the turn still hangs a minute after Close")
	}
	if rest, _ := io.ReadAll(resp.Body); strings.Contains(string(rest), "[DONE]") {
		t.Errorf("a hanging turn went on to finish: %q", rest)
	}
}

func TestListenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script clients.Script
		addr   string
	}{
		{"invalid script", clients.Script{Turns: []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 200}}}}, ""},
		{"bad address", clients.Script{Turns: []clients.Turn{{Text: "x"}}}, "256.0.0.1:0"},
	}
	for _, tt := range tests {
		if _, err := newToy(tt.script, fakeserver.Options{Addr: tt.addr}, nil); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestMust(t *testing.T) {
	t.Parallel()
	newFake := func(s clients.Script, o fakeserver.Options) (*toy, error) { return newToy(s, o, nil) }
	f := fakeserver.Must("toy", newFake, clients.Script{Turns: []clients.Turn{{Text: "x"}}})
	f.Close()
	defer func() {
		if msg, _ := recover().(string); !strings.HasPrefix(msg, "toy: ") {
			t.Errorf("panic %q, want one starting with the name", msg)
		}
	}()
	fakeserver.Must("toy", newFake, clients.Script{Turns: []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 200}}}})
	t.Error("Must of an invalid script did not panic")
}

func TestDecode(t *testing.T) {
	t.Parallel()
	reqs := []string{"1", "", "2"}
	consumed := func(s string) bool { return s != "" }
	got, err := fakeserver.Decode(reqs, consumed, strconv.Atoi)
	if err != nil || fmt.Sprint(got) != "[1 2]" {
		t.Errorf("Decode = %v, %v; want [1 2]", got, err)
	}
	_, err = fakeserver.Decode([]string{"x"}, consumed, strconv.Atoi)
	if !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("Decode of a bad request: %v, want strconv.ErrSyntax", err)
	}
}
