package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// change builds an incremental change of the text in [start, end).
func change(sl, sc, el, ec uint32, text string) workspace.TextChange {
	return workspace.TextChange{
		Range: &workspace.Range{Start: workspace.Position{Line: sl, Character: sc}, End: workspace.Position{Line: el, Character: ec}},
		Text:  text,
	}
}

// TestDocumentStore feeds the workspace what an editor sends (didOpen, then didChange
// notifications) and checks the text tools read, the editor's text the workspace keeps
// for the editor's positions, the version and the format.
func TestDocumentStore(t *testing.T) {
	tests := []struct {
		name    string
		open    string
		enc     workspace.PositionEncoding
		changes [][]workspace.TextChange // one didChange each
		// wantEditor is the editor's text after the changes, and wantText the tools'.
		wantEditor, wantText string
		wantCRLF             bool
	}{
		{
			name: "open", open: "package a\n", enc: workspace.PositionUTF16,
			wantEditor: "package a\n", wantText: "package a\n",
		},
		{
			name: "open CRLF", open: "a\r\nb\r\n", enc: workspace.PositionUTF16,
			wantEditor: "a\r\nb\r\n", wantText: "a\nb\n", wantCRLF: true,
		},
		{
			name: "incremental insert", open: "func f() {}\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 5, 0, 6, "g")}, {change(0, 11, 0, 11, " // g")}},
			wantEditor: "func g() {} // g\n", wantText: "func g() {} // g\n",
		},
		{
			name: "several changes in one notification, each on the result of the last", open: "abc\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 0, 0, 1, "xy"), change(0, 1, 0, 2, "Z"), change(1, 0, 1, 0, "new\n")}},
			wantEditor: "xZbc\nnew\n", wantText: "xZbc\nnew\n",
		},
		{
			name: "full change", open: "old\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 0, 0, 1, "x")}, {{Text: "whole\nnew text\n"}}, {change(1, 0, 1, 3, "NEW")}},
			wantEditor: "whole\nNEW text\n", wantText: "whole\nNEW text\n",
		},
		{
			// 😀 is two UTF-16 code units, one UTF-32 code point, four bytes.
			name: "UTF-16 positions after a surrogate pair", open: "a😀b\né\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 3, 0, 4, "B"), change(1, 1, 1, 1, "!")}},
			wantEditor: "a😀B\né!\n", wantText: "a😀B\né!\n",
		},
		{
			name: "UTF-8 positions", open: "a😀b\né\n", enc: workspace.PositionUTF8,
			changes:    [][]workspace.TextChange{{change(0, 5, 0, 6, "B"), change(1, 2, 1, 2, "!")}},
			wantEditor: "a😀B\né!\n", wantText: "a😀B\né!\n",
		},
		{
			name: "UTF-32 positions", open: "a😀b\n", enc: workspace.PositionUTF32,
			changes:    [][]workspace.TextChange{{change(0, 2, 0, 3, "B")}},
			wantEditor: "a😀B\n", wantText: "a😀B\n",
		},
		{
			name: "CRLF document changed in place", open: "one\r\ntwo\r\nthree\r\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(1, 0, 1, 3, "2")}, {change(2, 5, 3, 0, "")}},
			wantEditor: "one\r\n2\r\nthree", wantText: "one\n2\nthree", wantCRLF: true,
		},
		{
			name: "a change brings CRLF into an LF document", open: "a\nb\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(2, 0, 2, 0, "c\r\n")}},
			wantEditor: "a\nb\nc\r\n", wantText: "a\nb\nc\n",
		},
		{
			name: "a lone CR is a line break", open: "a\rb\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(1, 0, 1, 1, "B")}},
			wantEditor: "a\rB\n", wantText: "a\rB\n",
		},
		{
			// The editor counts the byte-order mark as a character; tools never see it.
			name: "byte-order mark", open: "\uFEFFx\n", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 1, 0, 1, "y")}},
			wantEditor: "\uFEFFyx\n", wantText: "yx\n",
		},
		{
			name: "positions past a line's end and the text's end are clamped", open: "ab\ncd", enc: workspace.PositionUTF16,
			changes:    [][]workspace.TextChange{{change(0, 99, 0, 99, "!"), change(9, 0, 9, 0, "\nend")}},
			wantEditor: "ab!\ncd\nend", wantText: "ab!\ncd\nend",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := workspace.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(ws.Roots()[0], "doc.txt")
			ws.Open(path, 1, tt.open)
			version := int32(1)
			for i, c := range tt.changes {
				version++
				if err := ws.Change(path, version, c, tt.enc); err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
			}
			d, ok := ws.Document(path)
			if !ok {
				t.Fatal("the document is not open")
			}
			if d.EditorText != tt.wantEditor || d.Text != tt.wantText {
				t.Errorf("editor text %q, tools' text %q; want %q, %q", d.EditorText, d.Text, tt.wantEditor, tt.wantText)
			}
			if d.Version != version || d.Format.CRLF != tt.wantCRLF {
				t.Errorf("version %d, CRLF %v; want %d, %v", d.Version, d.Format.CRLF, version, tt.wantCRLF)
			}
			if v, ok := ws.Version(path); !ok || v != version {
				t.Errorf("Version = %d, %v; want %d", v, ok, version)
			}
			f, err := ws.ReadText(path, 0)
			if err != nil || !f.Open || f.Text != tt.wantText || f.Version != version {
				t.Errorf("ReadText = %+v, %v; want the tools' text at version %d", f, err, version)
			}
		})
	}
}

// TestDocumentStoreErrors checks the changes a document cannot take: of a document not
// open, and with a range that ends before it starts, which leaves the text as it was.
func TestDocumentStoreErrors(t *testing.T) {
	ws, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws.Roots()[0], "a.txt")
	if err := ws.Change(path, 2, []workspace.TextChange{{Text: "x"}}, workspace.PositionUTF16); !errors.Is(err, workspace.ErrNotOpen) {
		t.Errorf("change of a document not open: %v, want ErrNotOpen", err)
	}
	ws.Open(path, 1, "line one\nline two\n")
	bad := []workspace.TextChange{change(0, 0, 0, 4, "LINE"), change(1, 4, 1, 0, "x")}
	if err := ws.Change(path, 2, bad, workspace.PositionUTF16); err == nil {
		t.Error("a range that ends before it starts was applied")
	}
	if d, _ := ws.Document(path); d.Text != "line one\nline two\n" || d.Version != 1 {
		t.Errorf("after a failed change: %q at %d; want the text as it was", d.Text, d.Version)
	}
	// The failed change left nothing behind that misplaces the next one.
	if err := ws.Change(path, 3, []workspace.TextChange{change(1, 5, 1, 8, "2")}, workspace.PositionUTF16); err != nil {
		t.Fatal(err)
	}
	if d, _ := ws.Document(path); d.Text != "line one\nline 2\n" {
		t.Errorf("after the next change: %q", d.Text)
	}
}

// TestDocumentStoreClose checks that a closed document is read from disk again, and
// that Close reports the size it held.
func TestDocumentStoreClose(t *testing.T) {
	ws, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws.Roots()[0], "a.txt")
	if err := os.WriteFile(path, []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws.Open(path, 1, "in the editor\r\n")
	if err := ws.Change(path, 2, []workspace.TextChange{change(0, 3, 0, 3, "!")}, workspace.PositionUTF16); err != nil {
		t.Fatal(err)
	}
	if n := ws.Close(path); n != len("in! the editor\r\n") {
		t.Errorf("Close = %d, want the size of the editor's text", n)
	}
	if n := ws.Close(path); n != 0 {
		t.Errorf("second Close = %d, want 0", n)
	}
	if _, ok := ws.Document(path); ok {
		t.Error("the document is still open")
	}
	if f, err := ws.ReadText(path, 0); err != nil || f.Open || f.Text != "on disk\n" {
		t.Errorf("ReadText after Close = %+v, %v; want the disk's text", f, err)
	}
}

// memoryWriter is a Writer that writes nothing and records what it was given, as an
// editor front end's writer hands edits to the editor.
type memoryWriter struct{ written []workspace.Change }

func (m *memoryWriter) Write(_ context.Context, c workspace.Change) error {
	m.written = append(m.written, c)
	return nil
}

// TestDocumentStoreStale checks Commit's staleness against the editor's text as the
// store keeps it: a tool that read the text before the editor changed it is refused, one
// that read after is not, and a committed edit is what tools read at once, while the
// editor's text waits for the editor's report of the edit.
func TestDocumentStoreStale(t *testing.T) {
	ctx := context.Background()
	ws, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &memoryWriter{}
	ws.SetWriter(w)
	path := filepath.Join(ws.Roots()[0], "a.go")
	ws.Open(path, 1, "package a\r\n\r\nfunc F() {}\r\n")
	read, err := ws.ReadText(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The user types; the tool's read is now stale.
	if err := ws.Change(path, 2, []workspace.TextChange{change(2, 6, 2, 6, "oo")}, workspace.PositionUTF16); err != nil {
		t.Fatal(err)
	}
	err = ws.Commit(ctx, workspace.Change{Path: path, Old: read, New: "package b\n\nfunc F() {}\n"})
	if !errors.Is(err, workspace.ErrStale) || len(w.written) != 0 {
		t.Fatalf("commit over a change the tool did not see: %v, %d written; want ErrStale, none", err, len(w.written))
	}
	// Read again: not stale.
	if read, err = ws.ReadText(path, 0); err != nil || read.Text != "package a\n\nfunc Foo() {}\n" {
		t.Fatalf("ReadText = %+v, %v", read, err)
	}
	edited := "package b\n\nfunc Foo() {}\n"
	if err := ws.Commit(ctx, workspace.Change{Path: path, Old: read, New: edited}); err != nil {
		t.Fatalf("commit after reading the editor's text: %v", err)
	}
	// Tools read the edit at once; the editor has not reported it yet.
	d, _ := ws.Document(path)
	if d.Text != edited || d.EditorText != "package a\r\n\r\nfunc Foo() {}\r\n" || d.Version != 2 {
		t.Errorf("after the commit: %+v; want the edit for tools, the editor's last report as its text", d)
	}
	// The editor reports the edit relative to its last report.
	if err := ws.Change(path, 3, []workspace.TextChange{change(0, 8, 0, 9, "b")}, workspace.PositionUTF16); err != nil {
		t.Fatal(err)
	}
	d, _ = ws.Document(path)
	if d.Text != edited || d.EditorText != "package b\r\n\r\nfunc Foo() {}\r\n" || d.Version != 3 {
		t.Errorf("after the editor's report: %+v", d)
	}
}

// bufferWriter is an editor writer that changes nothing on disk: the edit stays in the
// editor's buffer, as the overlay shows.
type bufferWriter struct{}

func (bufferWriter) Write(context.Context, workspace.Change) error { return nil }

// TestUnsaved: a file Commit edited is unsaved while it is open with a text other than
// the disk's; saving (the disk catches up), closing, or a writer that writes the disk
// takes it off the list.
func TestUnsaved(t *testing.T) {
	tests := []struct {
		name   string
		writer workspace.Writer
		after  func(w *workspace.Workspace, path string) // what happens after the edit
		want   bool
	}{
		{"in the buffer", bufferWriter{}, nil, true},
		{"saved", bufferWriter{}, func(_ *workspace.Workspace, path string) {
			if err := os.WriteFile(path, []byte("B\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"closed", bufferWriter{}, func(w *workspace.Workspace, path string) { w.Close(path) }, false},
		{"written to disk", workspace.DiskWriter{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.txt")
			other := filepath.Join(dir, "b.txt")
			for _, p := range []string{path, other} {
				if err := os.WriteFile(p, []byte("a\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w, err := workspace.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			w.SetWriter(tt.writer)
			w.Open(path, 1, "a\n")
			w.Open(other, 1, "user's own change\n") // unsaved, but not the agent's edit
			old, err := w.ReadText(path, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(context.Background(), workspace.Change{Path: path, Old: old, New: "B\n"}); err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				tt.after(w, path)
			}
			got := w.Unsaved()
			if want := []string{path}; tt.want && (len(got) != 1 || got[0] != want[0]) || !tt.want && len(got) != 0 {
				t.Errorf("Unsaved() = %q, want it to list %s: %v", got, path, tt.want)
			}
		})
	}
}
