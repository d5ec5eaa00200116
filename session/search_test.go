package session

import (
	"context"
	"slices"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools/web"
)

// TestSearcherThroughWrappers: google_web_search is offered for a text-mode model only
// when the model it wraps can search.
func TestSearcherThroughWrappers(t *testing.T) {
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
			if got := Searcher(tt.client) != nil; got != tt.want {
				t.Errorf("google_web_search offered: %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHostSearcherPerSession: each session's google_web_search is its own model's:
// a session whose model cannot search is not offered it, and opening one takes it from
// no other session (it was the host's, which each Open replaced).
func TestHostSearcherPerSession(t *testing.T) {
	srv := fakegemini.Start(clients.Script{})
	defer srv.Close()
	gemini, err := clients.NewGemini(context.Background(), clients.GeminiOptions{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	next := make(chan clients.Client, 2)
	next <- gemini
	next <- clients.NewScripted(clients.Script{})
	hh := newHostHarness(t, "yolo", clients.Script{}, func(o *HostOptions) {
		o.NewClient = func(context.Context, settings.Settings) (clients.Client, error) { return <-next, nil }
	})
	searching, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		l    *Live
		want bool
	}{{searching, true}, {plain, false}} {
		var declared bool
		for _, d := range tt.l.Session().decls() {
			declared = declared || d.Name == web.SearchName
		}
		if _, runs := tt.l.registry().Get(web.SearchName); declared != tt.want || runs != tt.want {
			t.Errorf("session of %s: google_web_search declared %v, runs %v; want %v", tt.l.Model(), declared, runs, tt.want)
		}
	}
	if slices.Contains(testutil.ToolNames(hh.host.Toolbox().Config().Registry), web.SearchName) {
		t.Error("google_web_search is in the workspace's registry, for every session")
	}
}
