package workspace

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLineIndex checks the line index against PositionToOffset: random
// changes at random positions (past line ends and the text's end too) of random texts
// with LF, CRLF and lone CR line breaks and characters of every UTF-8 length, applied
// one after another to the same text as a document's are.
func TestLineIndex(t *testing.T) {
	pieces := []string{"a", "bc", "é", "日本", "😀", "\n", "\r\n", "\r", " ", "\t"}
	for _, enc := range []PositionEncoding{PositionUTF16, PositionUTF8, PositionUTF32} {
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
				pos := func() Position {
					return Position{Line: uint32(rng.IntN(int(lines))), Character: uint32(rng.IntN(12))}
				}
				a, b := pos(), pos()
				if PositionToOffset(want, b, enc) < PositionToOffset(want, a, enc) {
					a, b = b, a
				}
				ch := TextChange{Range: &Range{Start: a, End: b}, Text: random(rng.IntN(4))}
				start, end := PositionToOffset(want, a, enc), PositionToOffset(want, b, enc)
				want = want[:start] + ch.Text + want[end:]
				got, err := idx.apply(text, []TextChange{ch}, enc)
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
