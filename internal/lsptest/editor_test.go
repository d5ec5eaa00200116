package lsptest

import "testing"

func TestPositions(t *testing.T) {
	text := "a😀b\r\nsecond\rthird\nlast"
	tests := []struct {
		enc    string
		pos    Position
		offset int
		exact  bool
	}{
		{"utf-16", Position{0, 0}, 0, true},
		{"utf-16", Position{0, 3}, 5, true}, // after the emoji: 1 + 2 units
		{"utf-8", Position{0, 5}, 5, true},
		{"utf-32", Position{0, 2}, 5, true},
		{"utf-16", Position{0, 2}, 1, false}, // inside the emoji
		{"utf-16", Position{0, 99}, 6, false},
		{"utf-16", Position{1, 3}, 11, true},
		{"utf-16", Position{2, 0}, 15, true}, // after a lone CR
		{"utf-16", Position{3, 4}, 25, true},
		{"utf-16", Position{9, 0}, len(text), false},
	}
	for _, tt := range tests {
		off, exact := exactOffset(text, tt.pos, tt.enc)
		if off != tt.offset || exact != tt.exact {
			t.Errorf("%s %v: offset %d exact %v, want %d %v", tt.enc, tt.pos, off, exact, tt.offset, tt.exact)
		}
		if tt.exact {
			if p := PositionOf(text, off, tt.enc); p != tt.pos {
				t.Errorf("%s PositionOf(%d) = %v, want %v", tt.enc, off, p, tt.pos)
			}
		}
	}
}

func TestApplyEdits(t *testing.T) {
	got, err := applyEdits("one\ntwo\nthree\n", []TextEdit{
		{Range: Range{Start: Position{2, 0}, End: Position{2, 5}}, NewText: "3"},
		{Range: Range{Start: Position{0, 0}, End: Position{0, 3}}, NewText: "1"},
	}, "utf-16")
	if err != nil || got != "1\ntwo\n3\n" {
		t.Errorf("applyEdits = %q, %v", got, err)
	}
	if _, err := applyEdits("abc", []TextEdit{
		{Range: Range{Start: Position{0, 0}, End: Position{0, 2}}},
		{Range: Range{Start: Position{0, 1}, End: Position{0, 3}}},
	}, "utf-16"); err == nil {
		t.Errorf("overlapping edits were applied")
	}
	if _, err := applyEdits("abc", []TextEdit{{Range: Range{Start: Position{5, 0}, End: Position{5, 0}}}}, "utf-16"); err == nil {
		t.Errorf("an edit outside the text was applied")
	}
}
