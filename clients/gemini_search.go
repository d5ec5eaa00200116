package clients

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Search answers query with Google Search grounding (generateContent with the
// googleSearch tool), the way Gemini CLI's google_web_search does: the answer's text
// carries citation markers [n] after each grounded passage, where n-1 indexes Sources.
func (g *Gemini) Search(ctx context.Context, query string) (SearchResult, error) {
	if strings.TrimSpace(query) == "" {
		return SearchResult{}, fmt.Errorf("%s: the search query is empty", g.ep.name)
	}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: query}}}}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	ctx, ci := trackCall(ctx)
	resp, err := g.client.Models.GenerateContent(ctx, g.searchModel, contents, cfg)
	if err != nil {
		return SearchResult{}, g.wrap(ctx, err, ci)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			return SearchResult{}, fmt.Errorf("%s: the search was refused: %s", g.ep.name, pf.BlockReason)
		}
		return SearchResult{}, fmt.Errorf("%s: the search returned no answer", g.ep.name)
	}
	cand := resp.Candidates[0]
	var text strings.Builder
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil && !p.Thought {
				text.WriteString(p.Text)
			}
		}
	}
	res := SearchResult{Text: text.String()}
	gm := cand.GroundingMetadata
	if gm == nil {
		return res, nil
	}
	for _, c := range gm.GroundingChunks {
		var s Source
		switch {
		case c == nil:
		case c.Web != nil:
			s = Source{Title: c.Web.Title, URI: c.Web.URI}
		case c.RetrievedContext != nil:
			s = Source{Title: c.RetrievedContext.Title, URI: c.RetrievedContext.URI}
		}
		res.Sources = append(res.Sources, s)
	}
	var cites []citation
	for _, s := range gm.GroundingSupports {
		if s == nil || s.Segment == nil || len(s.GroundingChunkIndices) == 0 {
			continue
		}
		var marker strings.Builder
		for _, i := range s.GroundingChunkIndices {
			if i >= 0 && int(i) < len(res.Sources) {
				fmt.Fprintf(&marker, "[%d]", i+1)
			}
		}
		if marker.Len() > 0 {
			cites = append(cites, citation{at: int(s.Segment.EndIndex), marker: marker.String()})
		}
	}
	res.Text = insertCitations(res.Text, cites)
	return res, nil
}

// citation is a marker to insert at a byte offset of the answer.
type citation struct {
	at     int
	marker string
}

// insertCitations puts the markers into text at their byte offsets (Gemini's segments
// count UTF-8 bytes), moving an offset inside a character to the character's end.
func insertCitations(text string, cites []citation) string {
	if len(cites) == 0 {
		return text
	}
	cites = slices.Clone(cites)
	for i := range cites {
		at := min(max(cites[i].at, 0), len(text))
		for at < len(text) && !utf8.RuneStart(text[at]) {
			at++
		}
		cites[i].at = at
	}
	slices.SortStableFunc(cites, func(a, b citation) int { return cmp.Compare(a.at, b.at) })
	var b strings.Builder
	prev := 0
	for _, c := range cites {
		b.WriteString(text[prev:c.at])
		b.WriteString(c.marker)
		prev = c.at
	}
	b.WriteString(text[prev:])
	return b.String()
}
