package rpc

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

func TestInstruction(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, want string }{
		{"x := 1 // agentls: rename x to count\n", "rename x to count"},
		{"/* agentls: add a doc comment */", "add a doc comment"},
		{"<!-- agentls: translate this to French -->", "translate this to French"},
		{"# agentls:   \n", ""},
		{"agentls is great", ""},
		{"-- agentls: use a CTE --}}", "use a CTE"},
	}
	for _, tt := range tests {
		if got := instruction(tt.line); got != tt.want {
			t.Errorf("instruction(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestTranscript: the transcript's blocks are separated by blank lines whatever the
// answer's text ends with, the answer's chunks are written in order, and a resumed
// session's transcript is appended to.
func TestTranscript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "transcripts", "s1.md")
	rel := func(p string) string { return filepath.Base(p) }
	tr := newTranscript(path, "s1", slog.New(slog.DiscardHandler))
	when := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tr.prompt(when, "first line\nsecond line", &session.EditorContext{Path: "/w/a.go", StartLine: 3, EndLine: 5, Diagnostic: "vet: bad"}, rel)
	tr.answer("Let me ")
	tr.answer("look.")
	tr.toolCall(tools.Event{CallID: "s1/c1", Name: "read_file", Status: tools.StatusError, Title: "a.go",
		Locations: []tools.Location{{Path: "/w/a.go", Line: 3}},
		Result:    &tools.CallResult{Error: &tools.ErrorInfo{Type: "file_not_found", Message: "no *such* file"}}}, rel)
	tr.plan([]planEntry{{Content: "Read", Status: "completed"}, {Content: "Fix", Status: "in_progress"}})
	tr.answer("Done.\n")
	tr.end(promptResult{StopReason: session.StopEndTurn, Usage: &usage{InputTokens: 10, OutputTokens: 2}})

	want := "# agentls session s1\n\n" +
		"## Prompt, 2025-03-01 12:00:00\n\n> first line\n> second line\n\nContext: [a.go:3-5](file:///w/a.go#L3), about: vet: bad\n\n### Answer\n\n" +
		"Let me look.\n\n" +
		"- Tool call **failed** `read_file`: a.go: no \\*such\\* file — [a.go:3](file:///w/a.go#L3)\n\n" +
		"Plan:\n\n- [x] Read\n- [ ] Fix (in progress)\n\n" +
		"Done.\n\n" +
		"_the answer is complete (end_turn); 10 input tokens, 2 output tokens._\n"
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("transcript:\n%q\nwant:\n%q", got, want)
	}

	// The next server appends to it.
	tr = newTranscript(path, "s1", slog.New(slog.DiscardHandler))
	tr.prompt(when, "again", nil, rel)
	tr.end(promptResult{StopReason: session.StopCancelled})
	got, _ = os.ReadFile(path)
	if !strings.HasPrefix(string(got), want+"\n## Prompt") || strings.Count(string(got), "# agentls session") != 1 {
		t.Errorf("resumed transcript:\n%s", got)
	}
}
