package session

import (
	"context"
	"slices"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools/web"
)

// TestSetSearcherThroughWrappers: google_web_search is offered for a text-mode model
// only when the model it wraps can search.
func TestSetSearcherThroughWrappers(t *testing.T) {
	t.Parallel()
	srv := fakegemini.Start(clients.Script{})
	defer srv.Close()
	gemini, err := clients.NewGemini(context.Background(), clients.GeminiOptions{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client clients.Client
		want   bool
	}{
		{"scripted", clients.NewScripted(clients.Script{}), false},
		{"text mode over scripted", clients.NewTextMode(clients.NewScripted(clients.Script{})), false},
		{"text mode over text mode over scripted", clients.NewTextMode(clients.NewTextMode(clients.NewScripted(clients.Script{}))), false},
		{"gemini", gemini, true},
		{"text mode over gemini", clients.NewTextMode(gemini), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, config := testutil.Dirs(t, nil, "")
			tb, err := toolbox.New(toolbox.Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			// Start from the opposite state, so that the call must add or withdraw it.
			if tt.want {
				tb.SetSearcher(Searcher(clients.NewScripted(clients.Script{})))
			} else {
				tb.SetSearcher(Searcher(gemini))
			}
			tb.SetSearcher(Searcher(tt.client))
			if got := slices.Contains(testutil.ToolNames(tb.Config().Registry), web.SearchName); got != tt.want {
				t.Errorf("google_web_search offered: %v, want %v", got, tt.want)
			}
		})
	}
}
