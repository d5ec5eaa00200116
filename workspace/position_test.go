package workspace_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/workspace"
)

var encodings = []workspace.PositionEncoding{workspace.PositionUTF8, workspace.PositionUTF16, workspace.PositionUTF32}

func pos(line, char uint32) workspace.Position {
	return workspace.Position{Line: line, Character: char}
}

func TestOffsetToPosition(t *testing.T) {
	// "é" is 2 bytes, 1 UTF-16 unit, 1 code point; "日" 3, 1, 1; "😀" 4, 2, 1.
	const text = "aé日😀b\nxy\r\nz\rw"
	tests := []struct {
		offset             int
		utf8, utf16, utf32 workspace.Position
	}{
		{0, pos(0, 0), pos(0, 0), pos(0, 0)},
		{1, pos(0, 1), pos(0, 1), pos(0, 1)},    // before é
		{3, pos(0, 3), pos(0, 2), pos(0, 2)},    // before 日
		{6, pos(0, 6), pos(0, 3), pos(0, 3)},    // before 😀
		{10, pos(0, 10), pos(0, 5), pos(0, 4)},  // before b
		{11, pos(0, 11), pos(0, 6), pos(0, 5)},  // before \n
		{12, pos(1, 0), pos(1, 0), pos(1, 0)},   // x
		{14, pos(1, 2), pos(1, 2), pos(1, 2)},   // before \r\n
		{15, pos(1, 2), pos(1, 2), pos(1, 2)},   // between \r and \n: back to the break
		{16, pos(2, 0), pos(2, 0), pos(2, 0)},   // z
		{17, pos(2, 1), pos(2, 1), pos(2, 1)},   // before a lone \r
		{18, pos(3, 0), pos(3, 0), pos(3, 0)},   // w
		{19, pos(3, 1), pos(3, 1), pos(3, 1)},   // end
		{2, pos(0, 1), pos(0, 1), pos(0, 1)},    // inside é: back to its start
		{8, pos(0, 6), pos(0, 3), pos(0, 3)},    // inside 😀
		{-5, pos(0, 0), pos(0, 0), pos(0, 0)},   // clamped
		{1000, pos(3, 1), pos(3, 1), pos(3, 1)}, // clamped
	}
	for _, tt := range tests {
		for enc, want := range map[workspace.PositionEncoding]workspace.Position{
			workspace.PositionUTF8: tt.utf8, workspace.PositionUTF16: tt.utf16, workspace.PositionUTF32: tt.utf32,
		} {
			if got := workspace.OffsetToPosition(text, tt.offset, enc); got != want {
				t.Errorf("OffsetToPosition(%d, %s) = %v, want %v", tt.offset, enc, got, want)
			}
		}
	}
	// An unknown encoding counts UTF-16 units, the protocol's default.
	if got := workspace.OffsetToPosition(text, 10, "utf-7"); got != pos(0, 5) {
		t.Errorf("unknown encoding: got %v, want 0:5", got)
	}
}

func TestPositionToOffset(t *testing.T) {
	const text = "aé日😀b\nxy\r\nz\rw"
	tests := []struct {
		name string
		pos  workspace.Position
		enc  workspace.PositionEncoding
		want int
	}{
		{"start", pos(0, 0), workspace.PositionUTF16, 0},
		{"after emoji utf-16", pos(0, 5), workspace.PositionUTF16, 10},
		{"after emoji utf-8", pos(0, 10), workspace.PositionUTF8, 10},
		{"after emoji utf-32", pos(0, 4), workspace.PositionUTF32, 10},
		{"inside surrogate pair", pos(0, 4), workspace.PositionUTF16, 6},
		{"inside é utf-8", pos(0, 2), workspace.PositionUTF8, 1},
		{"past line end", pos(0, 99), workspace.PositionUTF16, 11},
		{"past CRLF line end", pos(1, 99), workspace.PositionUTF16, 14},
		{"after CRLF", pos(2, 0), workspace.PositionUTF16, 16},
		{"after lone CR", pos(3, 1), workspace.PositionUTF16, 19},
		{"past last line", pos(9, 0), workspace.PositionUTF16, 19},
	}
	for _, tt := range tests {
		if got := workspace.PositionToOffset(text, tt.pos, tt.enc); got != tt.want {
			t.Errorf("%s: PositionToOffset(%v, %s) = %d, want %d", tt.name, tt.pos, tt.enc, got, tt.want)
		}
	}
}

// Every character boundary maps to a position and back to itself, in every encoding.
func TestPositionRoundTrip(t *testing.T) {
	texts := []string{"", "\n", "abc", "é\n日本\n😀x\n", "a\r\nb\rc\n", "\n\n😀😀\n", "tail without newline 日本"}
	for _, text := range texts {
		for _, enc := range encodings {
			for off := 0; off <= len(text); off++ {
				if off < len(text) && !utf8.RuneStart(text[off]) || off > 0 && off < len(text) && text[off-1] == '\r' && text[off] == '\n' {
					continue
				}
				p := workspace.OffsetToPosition(text, off, enc)
				if got := workspace.PositionToOffset(text, p, enc); got != off {
					t.Errorf("%q %s: offset %d → %v → %d", text, enc, off, p, got)
				}
			}
		}
	}
}

func TestApplyEditsErrors(t *testing.T) {
	const text = "ab\n😀\n"
	tests := []struct {
		name  string
		edits []workspace.TextEdit
		want  string
	}{
		{"past line end", []workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 3), End: pos(0, 3)}}}, "not a place"},
		{"past last line", []workspace.TextEdit{{Range: workspace.Range{Start: pos(3, 0), End: pos(3, 0)}}}, "not a place"},
		{"half a surrogate pair", []workspace.TextEdit{{Range: workspace.Range{Start: pos(1, 1), End: pos(1, 2)}}}, "not a place"},
		{"end before start", []workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 2), End: pos(0, 1)}}}, "before start"},
		{"overlap", []workspace.TextEdit{
			{Range: workspace.Range{Start: pos(0, 0), End: pos(0, 2)}},
			{Range: workspace.Range{Start: pos(0, 1), End: pos(1, 0)}},
		}, "overlap"},
	}
	for _, tt := range tests {
		_, err := workspace.ApplyEdits(text, tt.edits, workspace.PositionUTF16)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	// Inserts at one place apply in their order; edits may come unsorted.
	got, err := workspace.ApplyEdits(text, []workspace.TextEdit{
		{Range: workspace.Range{Start: pos(2, 0), End: pos(2, 0)}, NewText: "end"},
		{Range: workspace.Range{Start: pos(0, 1), End: pos(0, 1)}, NewText: "1"},
		{Range: workspace.Range{Start: pos(0, 1), End: pos(0, 1)}, NewText: "2"},
	}, workspace.PositionUTF16)
	if err != nil || got != "a12b\n😀\nend" {
		t.Errorf("ApplyEdits = %q, %v; want %q", got, err, "a12b\n😀\nend")
	}
}

var textEditCases = []struct {
	name     string
	old, new string
}{
	{"identical", "same\n", "same\n"},
	{"empty to text", "", "hello\nworld\n"},
	{"text to empty", "hello\nworld\n", ""},
	{"both empty", "", ""},
	{"insert at end without final newline", "abc", "abcdef"},
	{"add final newline", "abc", "abc\n"},
	{"remove final newline", "abc\n", "abc"},
	{"append line without final newline", "one\ntwo", "one\ntwo\nthree"},
	{"insert line", "a\nc\n", "a\nb\nc\n"},
	{"delete line", "a\nb\nc\n", "a\nc\n"},
	{"change in the middle of a line", "func main() {}\n", "func Main() {}\n"},
	{"two changes in one line", "foo bar baz qux\n", "fox bar baz quux\n"},
	{"rewrite a word", "hello world\n", "hello there\n"},
	{"accented", "café au lait\n", "cafés au lait\n"},
	{"accent replaced", "résumé\n", "resume\n"},
	{"japanese", "日本語のテキスト\n", "日本のテキスト\n"},
	{"japanese same lead byte", "日\n", "旦\n"}, // U+65E5 and U+65E6 share their first two bytes
	{"emoji after", "x 😀 y\n", "x 😀😀 y\n"},
	{"emoji replaced", "a😀b\n", "a😁b\n"}, // share three of four bytes
	{"emoji before change", "😀\nline two 日本\nend", "😀\nline 2 日本\nend"},
	{"several hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"},
	{"multi-line change", "a\nbbb\nccc\nd\n", "a\nBbb\ncCc\nd\n"},
	{"whole text replaced", "alpha\nbeta\n", "gamma\ndelta\nepsilon"},
	{"CRLF kept whole", "a\r\nb\r\n", "a\r\nc\r\n"},
	{"CRLF to LF", "a\r\nb\r\n", "a\nb\n"},
	{"lone CR", "a\rb\n", "a\rc\n"},
	{"large line", strings.Repeat("x", 10000) + "\n", strings.Repeat("x", 5000) + "y" + strings.Repeat("x", 5000) + "\n"},
	{"line breaks of every kind before", "a\rb\r\nc\n😀\rd\ne\n", "a\rb\r\nc\n😀\rD\ne\n"},
	{"line breaks of every kind after", "a\nb\rc\r\nd\n", "A\nb\rc\r\nd\n"},
	{"change next to a lone CR", "a\nb\r\nc\n", "a\nb\rx\nc\n"},
	{"repeated lines", "}\n}\n\n}\n}\n", "}\n}\n\n\n}\n}\n"},
	{"delete in a run", "u\na\na\na\nv\n", "u\na\na\nv\n"},
}

func TestTextEdits(t *testing.T) {
	for _, tt := range textEditCases {
		for _, enc := range encodings {
			edits := workspace.TextEdits(tt.old, tt.new, enc)
			got, err := workspace.ApplyEdits(tt.old, edits, enc)
			if err != nil {
				t.Errorf("%s (%s): applying %v: %v", tt.name, enc, edits, err)
				continue
			}
			if got != tt.new {
				t.Errorf("%s (%s): edits %v give %q, want %q", tt.name, enc, edits, got, tt.new)
			}
			if tt.old == tt.new && len(edits) != 0 {
				t.Errorf("%s (%s): identical texts gave edits %v", tt.name, enc, edits)
			}
		}
	}
}

// The edits are narrowed to the characters that change.
func TestTextEditsMinimal(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		enc      workspace.PositionEncoding
		want     []workspace.TextEdit
	}{
		{"insert at end without final newline", "abc", "abcdef", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 3), End: pos(0, 3)}, NewText: "def"}}},
		{"after an emoji, utf-16", "😀a\n", "😀b\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 2), End: pos(0, 3)}, NewText: "b"}}},
		{"after an emoji, utf-8", "😀a\n", "😀b\n", workspace.PositionUTF8,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 4), End: pos(0, 5)}, NewText: "b"}}},
		{"after an emoji, utf-32", "😀a\n", "😀b\n", workspace.PositionUTF32,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 1), End: pos(0, 2)}, NewText: "b"}}},
		{"whole character, not shared bytes", "a😀b\n", "a😁b\n", workspace.PositionUTF8,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 1), End: pos(0, 5)}, NewText: "😁"}}},
		{"two words far apart", "foo bar baz qux\n", "fox bar baz quux\n", workspace.PositionUTF16,
			[]workspace.TextEdit{
				{Range: workspace.Range{Start: pos(0, 2), End: pos(0, 3)}, NewText: "x"},
				{Range: workspace.Range{Start: pos(0, 13), End: pos(0, 13)}, NewText: "u"},
			}},
		{"a rewritten word is one edit", "hello world\n", "hello there\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 6), End: pos(0, 11)}, NewText: "there"}}},
		{"delete a line", "a\nb\nc\n", "a\nc\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(1, 0), End: pos(2, 0)}, NewText: ""}}},
		{"line 2 of 日本", "日本\n日本\n", "日本\n日x本\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(1, 1), End: pos(1, 1)}, NewText: "x"}}},
		{"CRLF not split", "a\r\n", "a\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(0, 1), End: pos(1, 0)}, NewText: "\n"}}},
		{"after lines ending in LF, CRLF and CR", "x\ry\r\nz\n日\nabc\nend\n", "x\ry\r\nz\n日\nabd\nend\n", workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(4, 2), End: pos(4, 3)}, NewText: "d"}}},
		{"far down a long text", numbered(1, 5000), strings.Replace(numbered(1, 5000), "line 4321\n", "line 4321!\n", 1), workspace.PositionUTF16,
			[]workspace.TextEdit{{Range: workspace.Range{Start: pos(4320, 9), End: pos(4320, 9)}, NewText: "!"}}},
		{"two changes far apart", numbered(1, 3000), strings.Replace(strings.Replace(numbered(1, 3000), "line 10\n", "line X\n", 1), "line 2990\n", "", 1), workspace.PositionUTF8,
			[]workspace.TextEdit{
				{Range: workspace.Range{Start: pos(9, 5), End: pos(9, 7)}, NewText: "X"},
				{Range: workspace.Range{Start: pos(2989, 0), End: pos(2990, 0)}, NewText: ""},
			}},
	}
	for _, tt := range tests {
		got := workspace.TextEdits(tt.old, tt.new, tt.enc)
		if !equalEdits(got, tt.want) {
			t.Errorf("%s: TextEdits = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func equalEdits(a, b []workspace.TextEdit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Random edits of multi-byte text, in every encoding, always apply back to the new text.
func TestTextEditsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", " ", "\n", "é", "日", "本", "😀", "𝄞", "\t"}
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	mutate := func(s string) string {
		r := []rune(s)
		for range rng.IntN(4) + 1 {
			i := rng.IntN(len(r) + 1)
			switch rng.IntN(3) {
			case 0: // insert
				r = append(r[:i], append([]rune(randText(rng.IntN(5)+1)), r[i:]...)...)
			case 1: // delete
				if i < len(r) {
					r = append(r[:i], r[min(len(r), i+rng.IntN(5)+1):]...)
				}
			default: // replace
				if i < len(r) {
					r[i] = []rune(alphabet[rng.IntN(len(alphabet))])[0]
				}
			}
		}
		return string(r)
	}
	for range 300 {
		old := randText(rng.IntN(60))
		new := mutate(old)
		for _, enc := range encodings {
			edits := workspace.TextEdits(old, new, enc)
			got, err := workspace.ApplyEdits(old, edits, enc)
			if err != nil || got != new {
				t.Fatalf("%s: %q → %q: edits %v give %q, %v", enc, old, new, edits, got, err)
			}
		}
	}
}

func FuzzTextEdits(f *testing.F) {
	for _, tt := range textEditCases {
		f.Add(tt.old, tt.new)
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		if !utf8.ValidString(old) || !utf8.ValidString(new) {
			t.Skip()
		}
		for _, enc := range encodings {
			edits := workspace.TextEdits(old, new, enc)
			got, err := workspace.ApplyEdits(old, edits, enc)
			if err != nil || got != new {
				t.Fatalf("%s: edits %v give %q, %v", enc, edits, got, err)
			}
		}
	})
}
