package rpc_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/lsptest"
)

// TestRapidIncrementalChanges sends hundreds of incremental didChange notifications as
// fast as the pipe takes them, then reads the document back through a tool: every
// change must have been applied, in order.
func TestRapidIncrementalChanges(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"doc.txt": "on disk\n"})
			c := session(t, root, withCaps(capsNone, "general", map[string]any{"positionEncodings": []string{enc}}), nil)
			path := filepath.Join(root, "doc.txt")
			uri := lsptest.FileURI(path)
			ed := c.Editor()
			initial := "héllo wörld 👋\nsecond line 日本語\r\nthird\n"
			if err := ed.Open(uri, initial); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(enc))))
			pieces := []string{"a", "é", "👋", "日本", "\n", "\r\n", "xyz", "", "🙂🙂"}
			for i := range 600 {
				doc, _ := ed.Doc(uri)
				text := doc.Text
				// A random range on character boundaries, replaced by a random piece.
				a, b := randomOffset(rng, text), randomOffset(rng, text)
				if a > b {
					a, b = b, a
				}
				if b-a > 8 {
					b = a
				}
				r := lsptest.Range{Start: lsptest.PositionOf(text, a, enc), End: lsptest.PositionOf(text, b, enc)}
				changes := []lsptest.Change{{Range: &r, Text: pieces[rng.IntN(len(pieces))]}}
				if i%50 == 49 {
					// Now and then two changes in one notification, the second
					// against the result of the first.
					changes = append(changes, lsptest.Change{Range: &lsptest.Range{}, Text: "^"})
				}
				if err := ed.Change(uri, changes...); err != nil {
					t.Fatal(err)
				}
			}
			doc, _ := ed.Doc(uri)
			want := strings.ReplaceAll(doc.Text, "\r\n", "\n") // tools read text with LF line ends
			if got := readOverlay(ctx, t, c, path); got != want {
				t.Fatalf("after %d changes the overlay differs from the editor:\ngot  %q\nwant %q", 600, got, want)
			}
			if disk := readFile(t, path); disk != "on disk\n" {
				t.Errorf("the disk changed: %q", disk)
			}
			// A whole-document change, then close: the tools read the disk again.
			if err := ed.Change(uri, lsptest.Change{Text: "replaced"}); err != nil {
				t.Fatal(err)
			}
			if got := readOverlay(ctx, t, c, path); got != "replaced" {
				t.Errorf("after a full change: %q", got)
			}
			if err := ed.Close(uri); err != nil {
				t.Fatal(err)
			}
			if got := readOverlay(ctx, t, c, path); got != "on disk\n" {
				t.Errorf("after didClose: %q, want the disk's text", got)
			}
		})
	}
}

// randomOffset returns a random offset in text on a character boundary and not inside
// a CRLF.
func randomOffset(rng *rand.Rand, text string) int {
	if text == "" {
		return 0
	}
	for {
		i := rng.IntN(len(text) + 1)
		if i < len(text) && !utf8.RuneStart(text[i]) {
			continue
		}
		if i > 0 && i < len(text) && text[i-1] == '\r' && text[i] == '\n' {
			continue
		}
		return i
	}
}

// TestPositionEncodings checks a change after non-ASCII text in each encoding: the
// same place in the text has a different character number in each.
func TestPositionEncodings(t *testing.T) {
	t.Parallel()
	line := "a😀é日x" // x is at UTF-16 unit 5, UTF-8 byte 10, code point 4
	tests := []struct {
		enc  string
		char uint32
	}{{"utf-16", 5}, {"utf-8", 10}, {"utf-32", 4}}
	for _, tt := range tests {
		t.Run(tt.enc, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, map[string]any{"general": map[string]any{"positionEncodings": []string{tt.enc}}}, nil)
			path := filepath.Join(root, "u.txt")
			uri := lsptest.FileURI(path)
			if err := c.Editor().Open(uri, line+"\n"); err != nil {
				t.Fatal(err)
			}
			// Replace "x" by "X" with a raw notification, positions written out.
			if err := c.Notify("textDocument/didChange", map[string]any{
				"textDocument": map[string]any{"uri": uri, "version": 2},
				"contentChanges": []any{map[string]any{
					"range": map[string]any{"start": map[string]any{"line": 0, "character": tt.char},
						"end": map[string]any{"line": 0, "character": tt.char + 1}},
					"text": "X"}},
			}); err != nil {
				t.Fatal(err)
			}
			if got, want := readOverlay(ctx, t, c, path), "a😀é日X\n"; got != want {
				t.Errorf("%s: got %q, want %q", tt.enc, got, want)
			}
		})
	}
}

// TestBadDocumentNotifications: notifications for documents that are not files or not
// open, malformed ones and unknown ones are ignored without harm or answer.
func TestBadDocumentNotifications(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
	c := session(t, root, capsNone, nil)
	for _, n := range []struct {
		method string
		params any
	}{
		{"textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": lsptest.FileURI(filepath.Join(root, "a.txt")), "version": 2},
			"contentChanges": []any{map[string]any{"text": "never opened"}}}},
		{"textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "untitled:Untitled-1", "languageId": "go", "version": 1, "text": "x"}}},
		{"textDocument/didOpen", map[string]any{"textDocument": "not an object"}},
		{"textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": lsptest.FileURI("/never/opened")}}},
		{"textDocument/didSave", map[string]any{}},
		{"$/setTrace", map[string]any{"value": "verbose"}},
		{"custom/unknownNotification", []int{1, 2}},
	} {
		if err := c.Notify(n.method, n.params); err != nil {
			t.Fatal(err)
		}
	}
	if got := readOverlay(ctx, t, c, "a.txt"); got != "a\n" {
		t.Errorf("a.txt = %q", got)
	}
	if n := len(c.Unmatched()); n != 0 {
		t.Errorf("notifications were answered: %v", c.Unmatched())
	}
}
