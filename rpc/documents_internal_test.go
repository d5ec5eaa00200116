package rpc

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/workspace"
)

// BenchmarkApplyDidChange1MB measures the server's own work for an incremental
// didChange of a 1 MB document: decoding the params and applying the change
// (BenchmarkDidChange1MB measures it over a pipe); with the overlay, also handing the
// new text to the workspace, which the server does once before a tool call reads it.
func BenchmarkApplyDidChange1MB(b *testing.B) {
	b.Run("change", func(b *testing.B) { benchmarkApplyDidChange(b, false) })
	b.Run("change+overlay", func(b *testing.B) { benchmarkApplyDidChange(b, true) })
}

func benchmarkApplyDidChange(b *testing.B, overlay bool) {
	root := b.TempDir()
	line := "func example(a, b int) int { return a*b + 42 } // some code\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	path := filepath.Join(root, "big.go")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	s := New(Options{ConfigDir: b.TempDir()})
	ctx := context.Background()
	params := func(v any) jsonrpc2.RawMessage {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	if _, err := s.initialize(ctx, params(map[string]any{"rootUri": "file://" + root, "capabilities": map[string]any{}})); err != nil {
		b.Fatal(err)
	}
	s.phase = phaseRunning
	uri := "file://" + path
	if err := s.didOpen(ctx, params(map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})); err != nil {
		b.Fatal(err)
	}
	mid := strings.Count(text, "\n") / 2
	msgs := make([]jsonrpc2.RawMessage, b.N)
	for i := range msgs {
		p := map[string]any{"line": mid, "character": 5}
		msgs[i] = params(map[string]any{"textDocument": map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": p, "end": p}, "text": "x"}}})
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.didChange(ctx, msgs[i]); err != nil {
			b.Fatal(err)
		}
		if overlay {
			s.syncOverlay()
		}
	}
	b.StopTimer()
	s.syncOverlay()
	doc, _ := s.toolbox.Workspace.Document(path)
	if !strings.Contains(doc.Text, "func "+strings.Repeat("x", b.N)+"example") {
		b.Fatal("the changes were not applied")
	}
}

// TestLineIndex checks the line index against workspace.PositionToOffset: random
// changes at random positions (past line ends and the text's end too) of random texts
// with LF, CRLF and lone CR line breaks and characters of every UTF-8 length, applied
// one after another to the same text as a document's are.
func TestLineIndex(t *testing.T) {
	pieces := []string{"a", "bc", "é", "日本", "😀", "\n", "\r\n", "\r", " ", "\t"}
	for _, enc := range []workspace.PositionEncoding{workspace.PositionUTF16, workspace.PositionUTF8, workspace.PositionUTF32} {
		for seed := range uint64(40) {
			rng := rand.New(rand.NewPCG(seed, 7))
			random := func(n int) string {
				var b strings.Builder
				for range n {
					p := pieces[rng.IntN(len(pieces))]
					if seed%2 == 0 && p == "\r" {
						p = "\r\n" // half the texts have no lone CR: the fast path
					}
					b.WriteString(p)
				}
				return b.String()
			}
			text := random(rng.IntN(200))
			var idx lineIndex
			idx.reset(text)
			want := text
			for step := range 60 {
				lines := uint32(strings.Count(want, "\n") + 2)
				pos := func() workspace.Position {
					return workspace.Position{Line: uint32(rng.IntN(int(lines))), Character: uint32(rng.IntN(12))}
				}
				a, b := pos(), pos()
				if workspace.PositionToOffset(want, b, enc) < workspace.PositionToOffset(want, a, enc) {
					a, b = b, a
				}
				ch := contentChange{Text: random(rng.IntN(4))}
				ch.Range = &struct {
					Start workspace.Position `json:"start"`
					End   workspace.Position `json:"end"`
				}{a, b}
				start, end := workspace.PositionToOffset(want, a, enc), workspace.PositionToOffset(want, b, enc)
				want = want[:start] + ch.Text + want[end:]
				got, err := idx.apply(text, []contentChange{ch}, enc)
				if err != nil {
					t.Fatalf("%s seed %d step %d: %v", enc, seed, step, err)
				}
				if got != want {
					t.Fatalf("%s seed %d step %d: change %v-%v %q:\ngot  %q\nwant %q", enc, seed, step, a, b, ch.Text, got, want)
				}
				text = got
			}
		}
	}
}
