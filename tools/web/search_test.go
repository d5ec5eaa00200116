package web

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// fakeSearcher answers every query the same way and records what it was asked.
type fakeSearcher struct {
	answer  string
	sources []Source
	err     error
	queries []string
}

func (f *fakeSearcher) Search(ctx context.Context, query string) (string, []Source, error) {
	f.queries = append(f.queries, query)
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	return f.answer, f.sources, f.err
}

func searchOf(t *testing.T, s Searcher) tools.Tool {
	t.Helper()
	ts := New(Options{Searcher: s}).Tools()
	if len(ts) != 2 || ts[1].Info().Name != SearchName {
		t.Fatalf("Tools() = %v, want web_fetch and google_web_search", ts)
	}
	return ts[1]
}

func TestToolsWithoutSearcher(t *testing.T) {
	ts := New(Options{}).Tools()
	if len(ts) != 1 || ts[0].Info().Name != FetchName {
		t.Errorf("Tools() = %v, want web_fetch alone", ts)
	}
}

func TestSearch(t *testing.T) {
	f := &fakeSearcher{
		answer: "Go 1.26 was released in February 2026.[1][2]",
		sources: []Source{
			{Title: "Go 1.26 Release Notes", URI: "https://go.dev/doc/go1.26"},
			{URI: "https://example.com/news"},
			{Title: "No link"},
		},
	}
	tool := searchOf(t, f)
	res, err := testutil.Call(context.Background(), t, tool, `{"query": "  When was Go 1.26 released?  "}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `Web search results for "When was Go 1.26 released?":

Go 1.26 was released in February 2026.[1][2]

Sources:
[1] Go 1.26 Release Notes (https://go.dev/doc/go1.26)
[2] Untitled (https://example.com/news)
[3] No link (No URI)`
	if res.Output != want {
		t.Errorf("Output:\n%s\nwant:\n%s", res.Output, want)
	}
	if len(f.queries) != 1 || f.queries[0] != "When was Go 1.26 released?" {
		t.Errorf("queries = %q", f.queries)
	}
	if res.Display != `Search results for "When was Go 1.26 released?" returned.` {
		t.Errorf("Display = %q", res.Display)
	}

	info := tool.Info()
	if info.Kind != tools.KindSearch || info.DisplayName != "GoogleSearch" || !info.Markdown {
		t.Errorf("Info = %+v", info)
	}
}

func TestSearchWithoutSources(t *testing.T) {
	res, err := testutil.Call(context.Background(), t, searchOf(t, &fakeSearcher{answer: "Just an answer."}), `{"query": "q"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Web search results for \"q\":\n\nJust an answer."; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}

	res, err = testutil.Call(context.Background(), t, searchOf(t, &fakeSearcher{answer: " \n"}), `{"query": "q"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `No search results or information found for query: "q"`; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}
}

func TestSearchErrors(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want tools.ErrorType
	}{
		{"plain", errors.New("API key not valid"), tools.ErrExecutionFailed},
		{"network", netErr, tools.ErrNetwork},
		{"deadline", context.DeadlineExceeded, tools.ErrTimeout},
		{"typed", tools.Errorf(tools.ErrPermissionDenied, "quota exhausted"), tools.ErrPermissionDenied},
	}
	for _, tt := range tests {
		_, err := testutil.Call(context.Background(), t, searchOf(t, &fakeSearcher{err: tt.err}), `{"query": "golang"}`, nil)
		if got := testutil.ErrorType(err); got != tt.want {
			t.Errorf("%s: error type %q, want %q (%v)", tt.name, got, tt.want, err)
		}
		if tt.want != tools.ErrPermissionDenied && (err == nil || !strings.Contains(err.Error(), `Error during web search for query "golang"`) || !errors.Is(err, tt.err)) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testutil.Call(ctx, t, searchOf(t, &fakeSearcher{}), `{"query": "golang"}`, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSearchBuild(t *testing.T) {
	tool := searchOf(t, &fakeSearcher{})
	for _, args := range []string{`{"query": ""}`, `{"query": "   "}`, `{}`, `{"query": 3}`} {
		if _, err := testutil.Build(t, tool, args); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("%s: %v, want invalid_tool_params", args, err)
		}
	}
	inv, err := testutil.Build(t, tool, `{"query": "agentls"}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil || d == nil || d.Type != "info" || d.Prompt != "agentls" || d.Title == "" {
		t.Errorf("Confirmation = %+v, %v", d, err)
	}
	if inv.Describe() != `Searching the web for: "agentls"` {
		t.Errorf("Describe = %q", inv.Describe())
	}
}
