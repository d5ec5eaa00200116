package files

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Expect says how many occurrences of old_string a replacement requires.
type Expect struct {
	// All replaces every occurrence; there must be at least one.
	All bool
	// Count, when positive, requires exactly this many occurrences and replaces them
	// all. It takes precedence over All.
	Count int
}

// check returns a *CountError unless n occurrences are what e asks for.
func (e Expect) check(n int, flexible bool) error {
	switch {
	case e.Count > 0 && n != e.Count:
		return &CountError{Found: n, Expected: e.Count, Flexible: flexible}
	case e.Count > 0, e.All:
		return nil
	case n != 1:
		return &CountError{Found: n, Expected: 1, Flexible: flexible}
	}
	return nil
}

// ErrEmptyOld reports an empty old_string, which matches everywhere and nowhere.
var ErrEmptyOld = errors.New("old_string is empty")

// NotFoundError reports an old_string that occurs nowhere in the content, not even when
// the leading and trailing whitespace of each line is ignored.
type NotFoundError struct {
	// WhitespaceLine is the 1-based line where old_string would match if the whitespace
	// inside lines were ignored as well; 0 if there is no such place.
	WhitespaceLine int
	// Escaped reports that old_string would occur exactly once its backslash escapes
	// (\n, \t, \", \\) were unescaped: the model escaped text it should have given
	// literally.
	Escaped bool
}

func (e *NotFoundError) Error() string {
	switch {
	case e.Escaped:
		return "old_string not found; it would match with its backslash escapes unescaped"
	case e.WhitespaceLine > 0:
		return fmt.Sprintf("old_string not found; it differs only in whitespace within lines from the text at line %d", e.WhitespaceLine)
	}
	return "old_string not found"
}

// CountError reports a number of occurrences other than the one required.
type CountError struct {
	Found, Expected int
	// Flexible reports that the occurrences were found by the whitespace-flexible
	// match, old_string not occurring exactly.
	Flexible bool
}

func (e *CountError) Error() string {
	return fmt.Sprintf("expected %d %s of old_string but found %d", e.Expected, plural(e.Expected, "occurrence", "occurrences"), e.Found)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Replace replaces old with new in content, as many times as want requires, and returns
// the result, the number of occurrences replaced and whether they were found by the
// whitespace-flexible match.
//
// An exact match is tried first; every non-overlapping occurrence counts, and the
// result is then exactly strings.Replace(content, old, new, -1). Only when old does not
// occur at all, old's lines are compared with windows of content's lines ignoring the
// leading and trailing whitespace of each line. Such a match spans whole lines, and new
// is fitted to them (see fit): lines new shares with old come out as the file has them,
// and the others are re-indented the way the file indents old's lines. Replacing old
// with itself never changes content.
//
// The errors are ErrEmptyOld, *NotFoundError and *CountError; content is never changed
// in part.
func Replace(content, old, new string, want Expect) (result string, count int, flexible bool, err error) {
	if old == "" {
		return "", 0, false, ErrEmptyOld
	}
	if at, n := occurrences(content, old); n > 0 {
		if err := want.check(n, false); err != nil {
			return "", n, false, err
		}
		if old == new {
			return content, n, false, nil
		}
		if len(at) < n {
			return strings.Replace(content, old, new, -1), n, false, nil
		}
		var b strings.Builder
		b.Grow(len(content) + n*(len(new)-len(old)))
		done := 0
		for _, i := range at {
			b.WriteString(content[done:i])
			b.WriteString(new)
			done = i + len(old)
		}
		b.WriteString(content[done:])
		return b.String(), n, false, nil
	}
	ol, ok := splitOld(old)
	if !ok {
		return "", 0, false, &NotFoundError{}
	}
	matches := ol.find(content, equalTrimmed, strings.TrimSpace(ol.lines[ol.first]))
	if len(matches) == 0 {
		nf := &NotFoundError{}
		// Whitespace may split any run of the line, so only its first character is sure
		// to occur as it is; this search runs only when the edit has already failed.
		anchor := strings.TrimSpace(ol.lines[ol.first])
		_, size := utf8.DecodeRuneInString(anchor)
		if m := ol.find(content, equalIgnoringSpace, anchor[:size]); len(m) > 0 {
			nf.WhitespaceLine = strings.Count(content[:m[0].start], "\n") + 1
		}
		if u := unescape(old); u != old && strings.Contains(content, u) {
			nf.Escaped = true
		}
		return "", 0, false, nf
	}
	if err := want.check(len(matches), true); err != nil {
		return "", len(matches), true, err
	}
	if old == new {
		return content, len(matches), true, nil
	}
	var b strings.Builder
	b.Grow(len(content) + len(matches)*(len(new)+16))
	done := 0
	for _, m := range matches {
		b.WriteString(content[done:m.start])
		b.WriteString(ol.fit(new, m))
		done = m.end
	}
	b.WriteString(content[done:])
	return b.String(), len(matches), true, nil
}

// maxOffsets bounds the occurrences whose offsets occurrences records.
const maxOffsets = 1 << 12

// occurrences counts the non-overlapping occurrences of old in content, as
// strings.Count does, and returns the offsets of the first maxOffsets. Counting and
// replacing in one scan matters for multi-megabyte files, where each scan costs
// milliseconds; a replacement of more occurrences than that falls back to
// strings.Replace.
//
// The scan looks for the longest run of old without whitespace, not for old itself: an
// old_string usually starts with indentation, whose bytes occur on every line of the
// file, while a run such as an identifier is rare; each hit is then checked in place.
func occurrences(content, old string) ([]int, int) {
	key, k := searchKey(old)
	var at []int
	n := 0
	last := 0 // occurrences may not overlap: none starts before the end of the last
	for pos := k; pos < len(content); {
		i := strings.Index(content[pos:], key)
		if i < 0 {
			break
		}
		p := pos + i
		pos = p + 1
		start := p - k
		if start < last || start+len(old) > len(content) || content[start:start+len(old)] != old {
			continue
		}
		if n < maxOffsets {
			at = append(at, start)
		}
		n++
		last = start + len(old)
		pos = last + k
	}
	return at, n
}

// searchKey returns the longest run of non-whitespace bytes in old and its offset, or
// old itself when it has no such run.
func searchKey(old string) (string, int) {
	best, at := "", 0
	for i := 0; i < len(old); {
		for i < len(old) && isSpaceByte(old[i]) {
			i++
		}
		j := i
		for j < len(old) && !isSpaceByte(old[j]) {
			j++
		}
		if j-i > len(best) {
			best, at = old[i:j], i
		}
		i = j
	}
	if best == "" {
		return old, 0
	}
	return best, at
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// oldLines is old_string prepared for the line-wise match.
type oldLines struct {
	lines []string
	// first is the index of the first line that is not blank.
	first int
	// indent is the leading whitespace of line first.
	indent string
	// newline reports that old_string ended with a newline, so a match takes in the
	// newline that ends its last line.
	newline bool
}

// splitOld splits old into lines. It reports false when old has no line that is not
// blank: whitespace alone would match any blank lines anywhere.
func splitOld(old string) (oldLines, bool) {
	ol := oldLines{newline: strings.HasSuffix(old, "\n")}
	ol.lines = strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	for i, l := range ol.lines {
		if strings.TrimSpace(l) != "" {
			ol.first = i
			ol.indent = leadingSpace(l)
			return ol, true
		}
	}
	return ol, false
}

// flexMatch is one place old matched line-wise.
type flexMatch struct {
	start, end int // byte offsets of the text replaced
	// lines are the file's lines that old's lines matched, without newlines.
	lines []string
	// indent is the leading whitespace of the line old's first non-blank line matched.
	indent string
}

// find returns the non-overlapping windows of text's lines that match ol's lines one for
// one under eq, first to last. key is text that any line eq-equal to ol's first
// non-blank line contains: the search jumps from one occurrence of key to the next
// instead of comparing every line of a file that may have hundreds of thousands.
func (ol oldLines) find(text string, eq func(a, b string) bool, key string) []flexMatch {
	var out []flexMatch
	anchor := ol.lines[ol.first]
	lastEnd := -1 // end of the last line of the previous match: windows do not overlap
	for pos := 0; pos < len(text); {
		i := strings.Index(text[pos:], key)
		if i < 0 {
			break
		}
		start, end := lineAt(text, pos+i)
		pos = end + 1 // one candidate per line
		if !eq(text[start:end], anchor) {
			continue
		}
		m, ok := ol.window(text, start, end, eq)
		if !ok || m.start <= lastEnd {
			continue
		}
		lastEnd = m.end
		if ol.newline && m.end < len(text) {
			m.end++
		}
		out = append(out, m)
	}
	return out
}

// window checks the lines around the line [start, end) of text, which matched ol's first
// non-blank line, against the rest of ol's lines. The returned match ends before the
// newline of its last line.
func (ol oldLines) window(text string, start, end int, eq func(a, b string) bool) (flexMatch, bool) {
	k := len(ol.lines)
	bounds := make([][2]int, k)
	bounds[ol.first] = [2]int{start, end}
	for j := ol.first - 1; j >= 0; j-- {
		s := bounds[j+1][0]
		if s == 0 {
			return flexMatch{}, false
		}
		bounds[j][0], bounds[j][1] = lineAt(text, s-1)
	}
	for j := ol.first + 1; j < k; j++ {
		e := bounds[j-1][1]
		if e >= len(text)-1 {
			// No line follows: text ends here, or with this line's newline.
			return flexMatch{}, false
		}
		bounds[j][0], bounds[j][1] = lineAt(text, e+1)
	}
	lines := make([]string, k)
	for j, b := range bounds {
		lines[j] = text[b[0]:b[1]]
		if !eq(lines[j], ol.lines[j]) {
			return flexMatch{}, false
		}
	}
	return flexMatch{start: bounds[0][0], end: bounds[k-1][1], lines: lines, indent: leadingSpace(lines[ol.first])}, true
}

// lineAt returns the bounds of the line of text holding offset pos, without its newline.
// pos may be the offset of that newline.
func lineAt(text string, pos int) (start, end int) {
	start = strings.LastIndexByte(text[:pos], '\n') + 1
	end = len(text)
	if i := strings.IndexByte(text[pos:], '\n'); i >= 0 {
		end = pos + i
	}
	return start, end
}

// equalTrimmed compares lines ignoring their leading and trailing whitespace.
func equalTrimmed(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }

// equalIgnoringSpace compares lines ignoring all their whitespace.
func equalIgnoringSpace(a, b string) bool {
	for {
		a = strings.TrimLeftFunc(a, unicode.IsSpace)
		b = strings.TrimLeftFunc(b, unicode.IsSpace)
		if a == "" || b == "" {
			return a == b
		}
		// Compare the bytes, not the runes: invalid bytes all decode to RuneError.
		_, na := utf8.DecodeRuneInString(a)
		_, nb := utf8.DecodeRuneInString(b)
		if a[:na] != b[:nb] {
			return false
		}
		a, b = a[na:], b[nb:]
	}
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeftFunc(s, unicode.IsSpace))]
}

// fit adapts new to the file lines that old matched in m, so that a model that got the
// indentation wrong still produces code indented as the file is: a line of new equal to
// a line of old (at the same position, else anywhere) becomes the file line old's line
// matched; another line whose indentation is that of some line of old gets the
// indentation of the file line that one matched; failing that, a line indented at least
// as deep as old's first line is shifted by the difference to the file's first line.
// Blank lines, and lines indented less, are kept as they are.
func (ol oldLines) fit(new string, m flexMatch) string {
	file := m.lines
	byText := make(map[string]string, len(ol.lines))
	byIndent := make(map[string]string, len(ol.lines))
	for j, l := range ol.lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if _, ok := byText[l]; !ok {
			byText[l] = file[j]
		}
		if ind := leadingSpace(l); !hasKey(byIndent, ind) {
			byIndent[ind] = leadingSpace(file[j])
		}
	}
	lines := strings.Split(new, "\n")
	for x, l := range lines {
		if x < len(ol.lines) && l == ol.lines[x] {
			lines[x] = file[x]
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if f, ok := byText[l]; ok {
			lines[x] = f
			continue
		}
		ind := leadingSpace(l)
		if to, ok := byIndent[ind]; ok {
			lines[x] = to + l[len(ind):]
		} else if strings.HasPrefix(l, ol.indent) {
			lines[x] = m.indent + l[len(ol.indent):]
		}
	}
	return strings.Join(lines, "\n")
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// unescape undoes the backslash escapes a model adds when it over-escapes a string.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\"`, `"`, `\'`, `'`, "\\`", "`", `\\`, `\`).Replace(s)
}
