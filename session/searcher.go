package session

import (
	"context"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tools/web"
)

// Searcher returns what answers google_web_search for a session with the model client
// c (Toolbox.SetSearcher): c's search grounded in the web, where c can do that (the
// Gemini client can), else nil. A client wrapping another (one with an Unwrap()
// clients.Client method, as clients.NewTextMode makes) searches only when every client
// it wraps can: a wrapper has a Search method whatever it wraps.
func Searcher(c clients.Client) web.Searcher {
	s, ok := c.(clients.Searcher)
	for inner := c; ok; {
		w, wraps := inner.(interface{ Unwrap() clients.Client })
		if !wraps {
			break
		}
		inner = w.Unwrap()
		_, ok = inner.(clients.Searcher)
	}
	if !ok {
		return nil
	}
	return searcher{s}
}

// searcher adapts a model client's search to google_web_search.
type searcher struct{ c clients.Searcher }

func (s searcher) Search(ctx context.Context, query string) (string, []web.Source, error) {
	res, err := s.c.Search(ctx, query)
	if err != nil {
		return "", nil, err
	}
	sources := make([]web.Source, len(res.Sources))
	for i, src := range res.Sources {
		sources[i] = web.Source{Title: src.Title, URI: src.URI}
	}
	return res.Text, sources, nil
}
