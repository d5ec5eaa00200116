package workspace

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// PositionEncoding is the unit in which a Position's Character counts, as negotiated
// with the editor (LSP's PositionEncodingKind). An unknown value counts as UTF-16, the
// protocol's default.
type PositionEncoding string

// The position encodings of the Language Server Protocol.
const (
	// PositionUTF8 counts bytes of UTF-8.
	PositionUTF8 PositionEncoding = "utf-8"
	// PositionUTF16 counts UTF-16 code units: a character outside the Basic
	// Multilingual Plane (such as most emoji) counts two.
	PositionUTF16 PositionEncoding = "utf-16"
	// PositionUTF32 counts Unicode code points.
	PositionUTF32 PositionEncoding = "utf-32"
)

// Position is a place in a text as editors name it: a 0-based line and a 0-based
// character offset within the line, in units of a PositionEncoding. Lines end at "\n",
// "\r\n" or "\r", as in the Language Server Protocol.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is the part of a text from Start up to, not including, End.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextEdit replaces the text in Range with NewText. The edits of one change all refer to
// the original text and do not overlap, as in the Language Server Protocol.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// OffsetToPosition returns the position of the byte offset in text. An offset past
// either end is clamped to it, one inside a character or between the CR and LF of a
// line break moves back to its start.
func OffsetToPosition(text string, offset int, enc PositionEncoding) Position {
	m := positionMapper{text: text, enc: enc}
	return m.position(offset)
}

// PositionToOffset returns the byte offset in text of pos. As the Language Server
// Protocol prescribes, a character past the end of its line means the end of the line
// (before its line break) and a line past the last means the end of the text; a
// position inside a character (half of a UTF-16 surrogate pair, say) means the
// character's start.
func PositionToOffset(text string, pos Position, enc PositionEncoding) int {
	off, _ := positionToOffset(text, pos, enc)
	return off
}

// positionToOffset is PositionToOffset that also reports whether pos named a place in
// text exactly, with no clamping or rounding.
func positionToOffset(text string, pos Position, enc PositionEncoding) (int, bool) {
	start := 0
	for range pos.Line {
		_, next, ok := lineBreak(text, start)
		if !ok {
			return len(text), false
		}
		start = next
	}
	end, _, _ := lineBreak(text, start)
	off := start
	var n uint32
	for off < end && n < pos.Character {
		r, size := utf8.DecodeRuneInString(text[off:end])
		w := runeUnits(r, size, enc)
		if n+w > pos.Character {
			return off, false
		}
		n += w
		off += size
	}
	return off, n == pos.Character
}

// lineBreak finds the first line break at or after from: end is where it starts and next
// where the following line starts. Without one, both are len(text) and ok is false.
func lineBreak(text string, from int) (end, next int, ok bool) {
	i := strings.IndexAny(text[from:], "\r\n")
	if i < 0 {
		return len(text), len(text), false
	}
	end = from + i
	if text[end] == '\r' && end+1 < len(text) && text[end+1] == '\n' {
		return end, end + 2, true
	}
	return end, end + 1, true
}

// runeUnits returns how many units of enc the rune r, size bytes of UTF-8, takes. An
// invalid byte (r == utf8.RuneError, size 1) counts as one unit in every encoding, as
// the U+FFFD it decodes to does.
func runeUnits(r rune, size int, enc PositionEncoding) uint32 {
	switch enc {
	case PositionUTF8:
		return uint32(size)
	case PositionUTF32:
		return 1
	default:
		if r > 0xFFFF {
			return 2
		}
		return 1
	}
}

// units returns the length of s in units of enc.
func units(s string, enc PositionEncoding) uint32 {
	switch enc {
	case PositionUTF8:
		return uint32(len(s))
	case PositionUTF32:
		return uint32(utf8.RuneCountInString(s))
	}
	var n uint32
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// positionMapper converts byte offsets to positions, scanning text once for offsets
// asked in increasing order.
type positionMapper struct {
	text string
	enc  PositionEncoding
	// The text up to off has been scanned: it holds line breaks up to line, whose start
	// is lineStart.
	off, line, lineStart int
}

func (m *positionMapper) position(offset int) Position {
	text := m.text
	offset = max(0, min(offset, len(text)))
	for offset > 0 && offset < len(text) && !utf8.RuneStart(text[offset]) {
		offset--
	}
	if offset > 0 && offset < len(text) && text[offset-1] == '\r' && text[offset] == '\n' {
		offset--
	}
	if offset < m.off {
		m.off, m.line, m.lineStart = 0, 0, 0
	}
	// offset never splits a CRLF, so a CR just before it is a whole line break.
	for m.off < offset {
		_, next, ok := lineBreak(text[:offset], m.off)
		if !ok {
			break
		}
		m.line++
		m.lineStart = next
		m.off = next
	}
	m.off = max(m.off, offset)
	return Position{Line: uint32(m.line), Character: units(text[m.lineStart:offset], m.enc)}
}

// ApplyEdits returns text with edits applied. Every position must name a place in text
// exactly (an existing line, a character boundary no further than the line's end), and
// the edits must not overlap; edits inserting at one place apply in their order.
func ApplyEdits(text string, edits []TextEdit, enc PositionEncoding) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, len(edits))
	for i, e := range edits {
		start, ok := positionToOffset(text, e.Range.Start, enc)
		if !ok {
			return "", fmt.Errorf("edit %d: start %d:%d is not a place in the text", i, e.Range.Start.Line, e.Range.Start.Character)
		}
		end, ok := positionToOffset(text, e.Range.End, enc)
		if !ok {
			return "", fmt.Errorf("edit %d: end %d:%d is not a place in the text", i, e.Range.End.Line, e.Range.End.Character)
		}
		if end < start {
			return "", fmt.Errorf("edit %d: end %d:%d is before start %d:%d", i, e.Range.End.Line, e.Range.End.Character, e.Range.Start.Line, e.Range.Start.Character)
		}
		spans[i] = span{start, end, e.NewText}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.start < last {
			return "", fmt.Errorf("edits overlap at byte %d", s.start)
		}
		b.WriteString(text[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}
