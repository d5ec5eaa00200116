package rpc

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// BenchmarkApplyDidChange1MB measures the server's own work for an incremental
// didChange of a 1 MB document: decoding the params and applying the change in the
// workspace (BenchmarkDidChange1MB measures it over a pipe); with read, also a tool's
// read of the new text, the first of which after a change derives the tools' text.
func BenchmarkApplyDidChange1MB(b *testing.B) {
	b.Run("change", func(b *testing.B) { benchmarkApplyDidChange(b, false) })
	b.Run("change+read", func(b *testing.B) { benchmarkApplyDidChange(b, true) })
}

func benchmarkApplyDidChange(b *testing.B, read bool) {
	root := b.TempDir()
	line := "func example(a, b int) int { return a*b + 42 } // some code\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	path := filepath.Join(root, "big.go")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	s := runningServer(b, root)
	ctx := context.Background()
	uri := "file://" + path
	if err := s.didOpen(ctx, params(b, map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})); err != nil {
		b.Fatal(err)
	}
	mid := strings.Count(text, "\n") / 2
	msgs := make([]jsonrpc2.RawMessage, b.N)
	for i := range msgs {
		p := map[string]any{"line": mid, "character": 5}
		msgs[i] = params(b, map[string]any{"textDocument": map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": p, "end": p}, "text": "x"}}})
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.didChange(ctx, msgs[i]); err != nil {
			b.Fatal(err)
		}
		if read {
			if _, ok := s.toolbox.Workspace.Document(path); !ok {
				b.Fatal("the document is not open")
			}
		}
	}
	b.StopTimer()
	doc, _ := s.toolbox.Workspace.Document(path)
	if !strings.Contains(doc.Text, "func "+strings.Repeat("x", b.N)+"example") {
		b.Fatal("the changes were not applied")
	}
}

// TestToolReadsEditorTextAfterDidChange checks that a tool reads the editor's text as
// soon as the server has handled the didChange: the workspace applies the change
// itself, so no observer of tool calls (nor anything else) needs to bring a copy up to
// date first. The tool runs on its own here, outside any scheduler, so no event is
// raised at all.
func TestToolReadsEditorTextAfterDidChange(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, "a.go")
	if err := os.WriteFile(path, []byte("package disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runningServer(t, root)
	ctx := context.Background()
	tool, ok := s.toolbox.Config().Registry.Get("read_file")
	if !ok {
		t.Fatal("no read_file tool")
	}
	read := func() string {
		t.Helper()
		inv, err := tool.Build(json.RawMessage(params(t, map[string]any{"file_path": path})))
		if err != nil {
			t.Fatal(err)
		}
		res, err := inv.Execute(ctx, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return res.Output
	}
	uri := "file://" + path
	if err := s.didOpen(ctx, params(t, map[string]any{"textDocument": map[string]any{"uri": uri, "version": 1,
		"text": "package editor\r\n\r\nfunc Old() {}\r\n"}})); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		change map[string]any
		want   string
	}{
		// Positions in UTF-16, the default encoding, in the editor's CRLF text.
		{map[string]any{"range": map[string]any{"start": map[string]any{"line": 2, "character": 5},
			"end": map[string]any{"line": 2, "character": 8}}, "text": "New"}, "func New() {}"},
		{map[string]any{"range": map[string]any{"start": map[string]any{"line": 3, "character": 0},
			"end": map[string]any{"line": 3, "character": 0}}, "text": "// typed just now\r\n"}, "// typed just now"},
		{map[string]any{"text": "package whole\n"}, "package whole"},
	} {
		if err := s.didChange(ctx, params(t, map[string]any{"textDocument": map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{step.change}})); err != nil {
			t.Fatal(err)
		}
		if out := read(); !strings.Contains(out, step.want) || strings.Contains(out, "\r") {
			t.Errorf("step %d: read_file right after didChange read %q; want %q, with LF line endings", i, out, step.want)
		}
	}
}
