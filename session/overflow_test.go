package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

// overflowWindow is the context window of the overflow tests, in tokens; the fake Gemini
// server refuses requests above it as the real API does. The system instruction and the
// tools take about 7,000 of it; each file the tests read about 10,000.
const overflowWindow = 48000

// bigFiles returns files a.txt, b.txt, … of 1,000 numbered 40-byte lines each.
func bigFiles(names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		var b strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&b, "%s line %4d: %s\n", n, i+1, strings.Repeat("z", 40-len(n)-17))
		}
		out[n] = b.String()
	}
	return out
}

func readCall(id, name string) clients.ScriptCall {
	return clients.ScriptCall{ID: id, Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/` + name + `"}`)}
}

const snapshot = "<state_snapshot>\n<overall_goal>read the files</overall_goal>\n</state_snapshot>"

// overflowTurns reads a.txt, then b.txt, then c.txt, d.txt and e.txt in one batch,
// which together pass the window; then come the summary and the answers. lowCount makes
// the model report a prompt count far below the real size of the third request, as a
// tokenizer that counts differently from the estimate would, so that the overflow is
// found only by the API's refusal.
func overflowTurns(lowCount bool) []clients.Turn {
	third := clients.Turn{Calls: []clients.ScriptCall{readCall("c", "c.txt"), readCall("d", "d.txt"), readCall("e", "e.txt")}}
	if lowCount {
		third.Usage = &clients.Usage{PromptTokens: 1000}
	}
	return []clients.Turn{
		{Calls: []clients.ScriptCall{readCall("a", "a.txt")}},
		{Calls: []clients.ScriptCall{readCall("b", "b.txt")}},
		third,
		{Text: snapshot},
		{Text: "Read them all."},
		{Text: "You're welcome."},
	}
}

// checkOverflowRecovery checks what both overflow tests share: the prompt that
// overflowed ends well, the next prompt works, the summary request stays well under the
// window with the read outputs shortened, the full outputs stay in the record, and a
// resumed session sends the compressed history.
func checkOverflowRecovery(t *testing.T, h *harness, s *Session, res Result, err error) {
	t.Helper()
	if err != nil || res.StopReason != StopEndTurn || res.Text != "Read them all." {
		t.Fatalf("the prompt that overflowed: %+v, %v", res, err)
	}
	res, err = s.Prompt(context.Background(), "Thanks", nil)
	if err != nil || res.Text != "You're welcome." {
		t.Fatalf("the next prompt: %+v, %v", res, err)
	}
	srv := h.model.(geminiModel).srv
	var summary *fakegemini.Request
	for _, r := range srv.Requests() {
		if r.Turn == 4 {
			summary = &r
		}
	}
	if summary == nil {
		t.Fatal("no summary request")
	}
	if tokens := (len(summary.Body) + 3) / 4; tokens > overflowWindow/2 {
		t.Errorf("the summary request has about %d tokens, not well under the window of %d", tokens, overflowWindow)
	}
	if !strings.Contains(string(summary.Body), "characters omitted") {
		t.Error("the summary request does not shorten the large outputs")
	}
	comp := h.updatesOf(UpdateCompression)
	if len(comp) == 0 || comp[0].Compression == nil || comp[0].Compression.TokensAfter >= int(compressAt*overflowWindow) {
		t.Fatalf("compression updates %+v", comp)
	}
	hist := s.History()
	checkValid(t, hist)
	whole := 0
	for _, c := range hist {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && strings.Contains(respText(fr), "line 1000:") && !strings.Contains(respText(fr), "omitted") {
				whole++
			}
		}
	}
	if whole != 5 {
		t.Errorf("%d whole outputs in the record, want all 5", whole)
	}
	if js(t, loadRecord(t, h, s.ID())) != js(t, hist) {
		t.Error("the stored record differs from History")
	}

	// A resumed session goes on from the compressed history, within the window.
	h.model = newModelWith(t, clients.Script{Turns: []clients.Turn{{Text: "Still here."}}},
		fakegemini.Options{MaxRequestTokens: overflowWindow})
	resumed := h.session(func(o *Options) { o.ID = s.ID() })
	if res, err := resumed.Prompt(context.Background(), "Still there?", nil); err != nil || res.Text != "Still here." {
		t.Fatalf("the resumed session: %+v, %v", res, err)
	}
	first := h.model.requests()[0].History
	if !strings.HasPrefix(answer(first[0]), summaryIntro) {
		t.Errorf("the resumed session's request does not start with the summary: %q", answer(first[0]))
	}
}

// loadRecord reads the record of a stored session back.
func loadRecord(t *testing.T, h *harness, id string) []clients.Content {
	t.Helper()
	st, err := h.store.load(id, discard())
	if err != nil {
		t.Fatal(err)
	}
	return st.record
}

// TestToolOutputsOverflow: tool outputs that push the next request past the window
// make the session compress before sending it, although the last request was well below
// the threshold; the session goes on.
func TestToolOutputsOverflow(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, bigFiles("a.txt", "b.txt", "c.txt", "d.txt", "e.txt"),
		clients.Script{ContextWindow: overflowWindow, Turns: overflowTurns(false)},
		fakegemini.Options{MaxRequestTokens: overflowWindow})
	s := h.session(nil)
	res, err := s.Prompt(context.Background(), "Read a.txt, b.txt, c.txt, d.txt and e.txt", nil)
	for _, r := range h.model.(geminiModel).srv.Requests() {
		if r.Rejected {
			t.Errorf("a request of about %d tokens was sent and refused", (len(r.Body)+3)/4)
		}
	}
	checkOverflowRecovery(t, h, s, res, err)
}

// TestContextLengthErrorRetry: when the model refuses a request as too large although
// the estimate said it fits, the session compresses harder, tells the user, and sends
// the request again once.
func TestContextLengthErrorRetry(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, bigFiles("a.txt", "b.txt", "c.txt", "d.txt", "e.txt"),
		clients.Script{ContextWindow: overflowWindow, Turns: overflowTurns(true)},
		fakegemini.Options{MaxRequestTokens: overflowWindow})
	s := h.session(nil)
	res, err := s.Prompt(context.Background(), "Read a.txt, b.txt, c.txt, d.txt and e.txt", nil)
	rejected := 0
	for _, r := range h.model.(geminiModel).srv.Requests() {
		if r.Rejected {
			rejected++
		}
	}
	if rejected != 1 {
		t.Errorf("%d requests refused as too large, want the one the estimate missed", rejected)
	}
	comp := h.updatesOf(UpdateCompression)
	if len(comp) != 1 || !strings.Contains(comp[0].Text, "context window") {
		t.Errorf("the user is not told of the retry: %+v", comp)
	}
	checkOverflowRecovery(t, h, s, res, err)
}

// TestOverflowRetriedOnce: a request still too large after the harder compression fails
// the prompt with the model's error, after one retry only. Here the system instruction
// and the tools alone pass the limit, which no compression can help.
func TestOverflowRetriedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{{Text: "hi"}}})
	s := h.session(nil)
	if _, err := s.Prompt(context.Background(), "hello", nil); err != nil {
		t.Fatal(err)
	}
	h.model = newModelWith(t, clients.Script{ContextWindow: 100000, Turns: []clients.Turn{{Text: snapshot}, {Text: "never"}}},
		fakegemini.Options{MaxRequestTokens: 3000})
	resumed := h.session(func(o *Options) { o.ID = s.ID() })
	res, err := resumed.Prompt(context.Background(), "again", nil)
	if err == nil || !clients.IsContextOverflow(err) || res.StopReason != StopError {
		t.Fatalf("Prompt = %+v, %v; want the context-length error", res, err)
	}
	srv := h.model.(geminiModel).srv
	var kinds []string
	for _, r := range srv.Requests() {
		switch {
		case r.Action == "countTokens":
		case r.Rejected:
			kinds = append(kinds, "rejected")
		case r.Turn == 1:
			kinds = append(kinds, "summary")
		default:
			kinds = append(kinds, fmt.Sprintf("turn %d", r.Turn))
		}
	}
	if got := strings.Join(kinds, ", "); got != "rejected, summary, rejected" {
		t.Errorf("requests: %s; want the request, the summary and one retry", got)
	}
}
