package rpc

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/workspace"
)

func TestCompilerRange(t *testing.T) {
	t.Parallel()
	text := "package a\n\n\tx := 😀undefinedThing + 1\n"
	pos := func(l, c uint32) protocol.Position { return protocol.Position{Line: l, Character: c} }
	tests := []struct {
		line, col int
		enc       workspace.PositionEncoding
		want      protocol.Range
		ok        bool
	}{
		{1, 1, workspace.PositionUTF16, protocol.Range{Start: pos(0, 0), End: pos(0, 7)}, true},  // the word "package"
		{1, 8, workspace.PositionUTF16, protocol.Range{Start: pos(0, 7), End: pos(0, 8)}, true},  // a space: one character
		{3, 0, workspace.PositionUTF16, protocol.Range{Start: pos(2, 1), End: pos(2, 26)}, true}, // no column: the text of the line
		// Byte column 10 is after the tab, "x := " and the emoji (4 bytes).
		{3, 11, workspace.PositionUTF16, protocol.Range{Start: pos(2, 8), End: pos(2, 22)}, true},
		{3, 11, workspace.PositionUTF8, protocol.Range{Start: pos(2, 10), End: pos(2, 24)}, true},
		{3, 8, workspace.PositionUTF16, protocol.Range{Start: pos(2, 6), End: pos(2, 8)}, true}, // inside the emoji: its start
		{3, 99, workspace.PositionUTF16, protocol.Range{Start: pos(2, 26), End: pos(2, 26)}, true},
		{2, 1, workspace.PositionUTF16, protocol.Range{Start: pos(1, 0), End: pos(1, 0)}, true},
		{4, 1, workspace.PositionUTF16, protocol.Range{}, false}, // after the final newline
		{9, 1, workspace.PositionUTF16, protocol.Range{}, false},
	}
	for _, tt := range tests {
		got, ok := compilerRange(text, tt.line, tt.col, tt.enc)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%d:%d %s: %+v %v, want %+v %v", tt.line, tt.col, tt.enc, got, ok, tt.want, tt.ok)
		}
	}
}

func TestProgressText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain line", "plain line"},
		{"  padded\t\r", "padded"},
		{"10%\r20%\r30%", "30%"},
		{"\x1b[32mgreen\x1b[0m and \x1b[1mbold\x1b[0m", "green and bold"},
		{"bell\x07 and tab\tinside", "bell and tab inside"},
		{strings.Repeat("é", 300), strings.Repeat("é", maxProgressText/2) + "…"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := progressText(tt.in); got != tt.want {
			t.Errorf("progressText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWantsKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		only []string
		want bool
	}{
		{nil, true},
		{[]string{"quickfix"}, true},
		{[]string{"refactor", "quickfix"}, true},
		{[]string{"refactor"}, false},
		{[]string{"quick"}, false},
		{[]string{"source"}, false},
	}
	for _, tt := range tests {
		if got := wantsKind(tt.only, "quickfix"); got != tt.want {
			t.Errorf("wantsKind(%q, quickfix) = %v, want %v", tt.only, got, tt.want)
		}
	}
}
