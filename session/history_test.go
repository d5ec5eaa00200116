package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tools"
)

func user(texts ...string) clients.Content {
	c := clients.Content{Role: clients.RoleUser}
	for _, t := range texts {
		c.Parts = append(c.Parts, clients.Part{Text: t})
	}
	return c
}

func modelTurn(parts ...clients.Part) clients.Content {
	return clients.Content{Role: clients.RoleModel, Parts: parts}
}

func text(s string) clients.Part { return clients.Part{Text: s} }

func callPart(id, name, args string) clients.Part {
	return clients.Part{FunctionCall: &clients.FunctionCall{ID: id, Name: name, Args: json.RawMessage(args)}}
}

func respPart(id, name, output string) clients.Part {
	return clients.Part{FunctionResponse: &clients.FunctionResponse{ID: id, Name: name, Response: map[string]any{"output": output}}}
}

func TestCurate(t *testing.T) {
	t.Parallel()
	sig := []byte("sig")
	tests := []struct {
		name string
		hist []clients.Content
		want []clients.Content
	}{
		{
			name: "valid history unchanged",
			hist: []clients.Content{user("hi"), modelTurn(text("hello"))},
			want: []clients.Content{user("hi"), modelTurn(text("hello"))},
		},
		{
			name: "empty model turn dropped, its user turn kept and merged with the next",
			hist: []clients.Content{user("one"), modelTurn(), user("two"), modelTurn(text("answer"))},
			want: []clients.Content{user("one", "two"), modelTurn(text("answer"))},
		},
		{
			name: "model turn with an empty part dropped with its run",
			hist: []clients.Content{user("one"), modelTurn(text("a")), modelTurn(clients.Part{}), user("two")},
			want: []clients.Content{user("one", "two")},
		},
		{
			name: "adjacent plain text merged, signed text kept apart",
			hist: []clients.Content{user("q"), modelTurn(text("a"), text("b"), clients.Part{Text: "c", ThoughtSignature: sig}, text("d"), text("e"))},
			want: []clients.Content{user("q"), modelTurn(text("ab"), clients.Part{Text: "c", ThoughtSignature: sig}, text("de"))},
		},
		{
			name: "unsigned thoughts left out, signed ones kept",
			hist: []clients.Content{user("q"), modelTurn(clients.Part{Text: "hmm", Thought: true}, clients.Part{Thought: true, ThoughtSignature: sig}, text("x"))},
			want: []clients.Content{user("q"), modelTurn(clients.Part{Thought: true, ThoughtSignature: sig}, text("x"))},
		},
		{
			name: "consecutive user turns merged (responses then a new prompt)",
			hist: []clients.Content{user("q"), modelTurn(callPart("1", "f", "{}")), {Role: clients.RoleUser, Parts: []clients.Part{respPart("1", "f", "ok")}}, user("next")},
			want: []clients.Content{user("q"), modelTurn(callPart("1", "f", "{}")), {Role: clients.RoleUser, Parts: []clients.Part{respPart("1", "f", "ok"), text("next")}}},
		},
		{
			name: "consecutive model turns merged",
			hist: []clients.Content{user("q"), modelTurn(text("a")), modelTurn(callPart("1", "f", "{}"))},
			want: []clients.Content{user("q"), modelTurn(text("a"), callPart("1", "f", "{}"))},
		},
		{
			name: "a part with only an unmodelled wire field is not empty",
			hist: []clients.Content{user("q"), modelTurn(clients.Part{Raw: json.RawMessage(`{"executableCode":{"code":"1"}}`)}), modelTurn(clients.Part{Raw: json.RawMessage(`{"text":""}`)})},
			want: []clients.Content{user("q")},
		},
		{
			name: "an unmodelled wire field alone is content",
			hist: []clients.Content{user("q"), modelTurn(clients.Part{Raw: json.RawMessage(`{"executableCode":{"code":"1"}}`)})},
			want: []clients.Content{user("q"), modelTurn(clients.Part{Raw: json.RawMessage(`{"executableCode":{"code":"1"}}`)})},
		},
		{
			name: "empty user turn dropped",
			hist: []clients.Content{user(), user("q")},
			want: []clients.Content{user("q")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := clone(tt.hist)
			got := curate(tt.hist)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("curate:\n got %s\nwant %s", js(t, got), js(t, tt.want))
			}
			if !reflect.DeepEqual(tt.hist, before) {
				t.Errorf("curate changed its input:\n now %s\nwas %s", js(t, tt.hist), js(t, before))
			}
		})
	}
}

func clone(h []clients.Content) []clients.Content {
	var out []clients.Content
	for _, c := range h {
		out = append(out, clients.Content{Role: c.Role, Parts: append([]clients.Part(nil), c.Parts...)})
	}
	return out
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResponseTo(t *testing.T) {
	t.Parallel()
	fc := clients.FunctionCall{ID: "c1", Name: "read_file"}
	tests := []struct {
		name string
		r    tools.CallResult
		want map[string]any
		blob int
	}{
		{"success", tools.CallResult{Status: tools.StatusSuccess, Output: "text"}, map[string]any{"output": "text"}, 0},
		{"success with parts", tools.CallResult{Status: tools.StatusSuccess, Output: "image", Parts: []tools.Part{{MIMEType: "image/png", Data: []byte{1}}}}, map[string]any{"output": "image"}, 1},
		{"error", tools.CallResult{Status: tools.StatusError, Error: &tools.ErrorInfo{Type: tools.ErrFileNotFound, Message: "no such file"}}, map[string]any{"error": "file_not_found: no such file"}, 0},
		{"cancelled", tools.CallResult{Status: tools.StatusCancelled, Error: &tools.ErrorInfo{Type: tools.ErrCancelled, Message: "stopped"}}, map[string]any{"error": "cancelled: stopped"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := responseTo(fc, tt.r)
			fr := p.FunctionResponse
			if fr == nil || fr.ID != "c1" || fr.Name != "read_file" {
				t.Fatalf("response %+v does not carry the call's id and name", fr)
			}
			if !reflect.DeepEqual(fr.Response, tt.want) {
				t.Errorf("response %v, want %v", fr.Response, tt.want)
			}
			if len(fr.Parts) != tt.blob {
				t.Errorf("%d parts, want %d", len(fr.Parts), tt.blob)
			}
		})
	}
}

func TestSplitPoint(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1000)
	call := func(id string) clients.Content { return modelTurn(callPart(id, "f", "{}")) }
	resp := func(id string) clients.Content {
		return clients.Content{Role: clients.RoleUser, Parts: []clients.Part{respPart(id, "f", big)}}
	}
	tests := []struct {
		name string
		hist []clients.Content
		want int
	}{
		{
			name: "cut at the first prompt after 70%",
			hist: []clients.Content{user(big), modelTurn(text(big)), user(big), modelTurn(text(big)), user(big), modelTurn(text(big)), user(big), modelTurn(text(big)), user("last")},
			want: 6,
		},
		{
			name: "never between a call and its response: next plain prompt",
			hist: []clients.Content{user(big), call("1"), resp("1"), call("2"), resp("2"), call("3"), resp("3"), modelTurn(text("done")), user("next"), modelTurn(text("ok"))},
			want: 8,
		},
		{
			name: "one long prompt: cut before a model turn that follows a user turn",
			hist: []clients.Content{user("q"), call("1"), resp("1"), call("2"), resp("2"), call("3"), resp("3"), call("4"), resp("4")},
			want: 7,
		},
		{
			name: "a large last prompt: the last cut before it",
			hist: []clients.Content{user("a"), modelTurn(text("b")), user("c"), modelTurn(text("d")), user(big + big)},
			want: 4,
		},
		{
			name: "a large last prompt after tool calls: cut before it",
			hist: []clients.Content{user("q"), call("1"), resp("1"), call("2"), resp("2"), modelTurn(text("done")), user(big + big + big + big + big)},
			want: 6,
		},
		{
			name: "nothing to cut",
			hist: []clients.Content{user(big)},
			want: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitPoint(tt.hist, keepFraction)
			if got != tt.want {
				t.Fatalf("splitPoint = %d, want %d", got, tt.want)
			}
			if got > 0 && len(calls(tt.hist[got-1])) > 0 {
				t.Errorf("the cut separates a call from its response")
			}
		})
	}
}

func TestUnanswered(t *testing.T) {
	t.Parallel()
	h := []clients.Content{user("q"), modelTurn(text("let me look"), callPart("a", "read_file", "{}"), callPart("b", "glob", "{}"))}
	c, ok := unanswered(h)
	if !ok {
		t.Fatal("calls without responses not found")
	}
	if len(c.Parts) != 2 || c.Parts[0].FunctionResponse.ID != "a" || c.Parts[1].FunctionResponse.Name != "glob" {
		t.Fatalf("responses %s", js(t, c))
	}
	if _, ok := unanswered(append(h, c)); ok {
		t.Error("answered calls reported unanswered")
	}
}

func TestMergeText(t *testing.T) {
	t.Parallel()
	sig := []byte("s")
	th := func(s string) clients.Part { return clients.Part{Text: s, Thought: true} }
	got := mergeText([]clients.Part{th("a"), th("b"), text("c"), {Text: "d", Raw: json.RawMessage(`{"text":"d"}`)}, callPart("1", "f", "{}"), text("e"), {Text: "f", ThoughtSignature: sig}, text("g")})
	want := []clients.Part{th("ab"), text("cd"), callPart("1", "f", "{}"), text("e"), {Text: "f", ThoughtSignature: sig}, text("g")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mergeText:\n got %s\nwant %s", js(t, got), js(t, want))
	}
}

// TestCurationIncremental: curating a growing history request by request, from what
// the last request curated, gives what curating it whole gives, whatever the history
// holds (runs of model contents with invalid ones, user contents that merge, thoughts,
// text to merge), and after the history is cut back or replaced.
func TestCurationIncremental(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	parts := [][]clients.Part{
		{{Text: "a"}}, {{Text: "b"}, {Text: "c"}}, {{Text: "t", Thought: true}, {Text: "x"}},
		{}, {{Text: ""}}, {{FunctionCall: &clients.FunctionCall{Name: "f"}}},
		{{FunctionResponse: &clients.FunctionResponse{Name: "f"}}},
	}
	for round := range 200 {
		var c curation
		var hist []clients.Content
		gen := uint64(0)
		for step := range 40 {
			role := clients.RoleUser
			if rng.IntN(2) == 0 {
				role = clients.RoleModel
			}
			hist = append(hist, clients.Content{Role: role, Parts: parts[rng.IntN(len(parts))]})
			if rng.IntN(10) == 0 && len(hist) > 2 {
				hist = hist[:len(hist)-2]
				gen++
			}
			if rng.IntN(3) > 0 {
				continue // not every content ends with a request
			}
			got, want := c.of(hist, gen), curate(hist)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, step %d: incremental %+v, whole %+v", round, step, got, want)
			}
		}
	}
}
