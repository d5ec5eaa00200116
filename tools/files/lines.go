package files

import (
	"strings"
	"unicode/utf8"
)

// countLines returns the number of lines in text. A last line without a newline counts;
// the empty text has none.
func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// lineRange returns the byte offsets [from, to) of lines first through last (1-based,
// inclusive, 1 ≤ first ≤ last ≤ countLines(text)); to includes the newline that ends
// line last, if it has one.
func lineRange(text string, first, last int) (from, to int) {
	pos := 0
	for line := 1; line < first; line++ {
		i := strings.IndexByte(text[pos:], '\n')
		if i < 0 {
			return len(text), len(text)
		}
		pos += i + 1
	}
	from = pos
	for line := first; line <= last; line++ {
		i := strings.IndexByte(text[pos:], '\n')
		if i < 0 {
			return from, len(text)
		}
		pos += i + 1
	}
	return from, pos
}

// capLongLines cuts every line of text longer than maxLineChars characters, marking the
// cut. It reports whether it cut any; text is returned as it is when it did not.
func capLongLines(text string) (string, bool) {
	var b strings.Builder
	cut := false
	rest := text
	done := 0 // bytes of text already copied into b
	for pos := 0; rest != ""; {
		end := strings.IndexByte(rest, '\n')
		line := rest
		if end >= 0 {
			line = rest[:end]
		}
		// A line of at most maxLineChars bytes cannot have more characters; count
		// runes only for the rare long line.
		if len(line) > maxLineChars && utf8.RuneCountInString(line) > maxLineChars {
			if !cut {
				b.Grow(len(text))
				cut = true
			}
			b.WriteString(text[done:pos])
			b.WriteString(prefixRunes(line, maxLineChars))
			b.WriteString(truncatedMarker)
			done = pos + len(line)
		}
		if end < 0 {
			break
		}
		pos += end + 1
		rest = rest[end+1:]
	}
	if !cut {
		return text, false
	}
	b.WriteString(text[done:])
	return b.String(), true
}

// prefixRunes returns the first n characters of s.
func prefixRunes(s string, n int) string {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
