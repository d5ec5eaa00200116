package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// searchArgsSchema is the parameter schema of searchArgs, generated once, when first asked for.
var searchArgsSchema = tools.ParametersOnce[searchArgs](true)

// Searcher answers a web search query: the answer text, with any citation markers
// already in it, and the sources it cites, in the order the markers number them. The
// Gemini client provides one through Google Search grounding.
type Searcher interface {
	Search(ctx context.Context, query string) (answer string, sources []Source, err error)
}

// Source is one web page a search answer cites.
type Source struct {
	Title string
	URI   string
}

// searchTool is google_web_search.
type searchTool struct {
	searcher Searcher
}

func (t *searchTool) Info() tools.Info {
	return tools.Info{
		Name:        SearchName,
		DisplayName: "GoogleSearch",
		Description: "Searches the web with Google Search and returns a summary of the results with their sources.",
		Kind:        tools.KindSearch,
		Source:      tools.SourceBuiltin,
		Parameters:  searchArgsSchema(), // open, like Gemini CLI's
		Markdown:    true,
		Idempotent:  true,
	}
}

// searchArgs are google_web_search's parameters.
type searchArgs struct {
	Query string `json:"query"`
}

func (t *searchTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p searchArgs
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	q := strings.TrimSpace(p.Query)
	if q == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "The 'query' parameter cannot be empty.")
	}
	return &searchCall{searcher: t.searcher, query: q}, nil
}

type searchCall struct {
	searcher Searcher
	query    string
}

func (c *searchCall) Describe() string {
	return fmt.Sprintf("Searching the web for: %q", c.query)
}

func (c *searchCall) Locations() []tools.Location { return nil }

// Confirmation asks before the query leaves the machine.
func (c *searchCall) Confirmation(context.Context) (*confirm.Details, error) {
	return &confirm.Details{
		Type:   confirm.TypeInfo,
		Title:  "Confirm Web Search",
		Prompt: c.query,
	}, nil
}

func (c *searchCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	answer, sources, err := c.searcher.Search(ctx, c.query)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, searchError(c.query, err)
	}
	if strings.TrimSpace(answer) == "" {
		return &tools.Result{
			Summary: "No information found.",
			Output:  fmt.Sprintf("No search results or information found for query: %q", c.query),
			Display: "No information found.",
		}, nil
	}
	return &tools.Result{
		Summary: fmt.Sprintf("Search results for %q returned.", c.query),
		Output:  fmt.Sprintf("Web search results for %q:\n\n%s", c.query, FormatAnswer(answer, sources)),
		Display: fmt.Sprintf("Search results for %q returned.", c.query),
	}, nil
}

// FormatAnswer appends to answer the numbered list of its sources, as Gemini CLI prints
// grounded answers:
//
//	Sources:
//	[1] Title (https://…)
func FormatAnswer(answer string, sources []Source) string {
	if len(sources) == 0 {
		return answer
	}
	var b strings.Builder
	b.WriteString(answer)
	b.WriteString("\n\nSources:")
	for i, s := range sources {
		title, uri := s.Title, s.URI
		if title == "" {
			title = "Untitled"
		}
		if uri == "" {
			uri = "No URI"
		}
		fmt.Fprintf(&b, "\n[%d] %s (%s)", i+1, title, uri)
	}
	return b.String()
}

// searchError types a Searcher's failure: its own *tools.Error if it returned one, else
// a timeout or network failure (worth retrying) or a plain failure.
func searchError(query string, err error) *tools.Error {
	if te, ok := errors.AsType[*tools.Error](err); ok {
		return te
	}
	t := tools.ErrExecutionFailed
	if errors.Is(err, context.DeadlineExceeded) {
		t = tools.ErrTimeout
	} else if _, ok := errors.AsType[net.Error](err); ok {
		t = tools.ErrNetwork
	}
	return &tools.Error{Type: t, Message: fmt.Sprintf("Error during web search for query %q: %v", query, err), Err: err}
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*searchCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
