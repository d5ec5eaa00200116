package workspace

import (
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

// diffContext is the number of unchanged lines UnifiedDiff shows around a change.
const diffContext = udiff.DefaultContextLines

// UnifiedDiff returns the unified diff, with three lines of context, that turns old into
// new, with path (relative or absolute, as the caller wants it shown) in the headers. An
// empty old with isNew set diffs against /dev/null. Identical texts give "".
//
// The diff is exactly the one udiff.Unified makes of the whole texts, made faster for
// the usual edit, a small change in a large file (udiff.Unified takes about 180 ms on
// 10 MB). Diffing only the lines between the texts' common first and last lines would
// be faster still but is not the same diff: udiff's search stops at the ends of what it
// is given, so a change in a run of repeated lines ("}", blank lines) can land on
// another line of the run, with too few context lines. So the line diff runs on the
// whole line sequences, as in udiff.Lines, and the work around it is cut down: new
// shares old's lines outside the changed middle instead of being split again, and only
// the lines the hunks show are rendered, their numbers shifted.
func UnifiedDiff(path, old, new string, isNew bool) string {
	if old == new && !isNew {
		return ""
	}
	from := "a/" + strings.TrimPrefix(path, "/")
	if isNew {
		from = "/dev/null"
	}
	to := "b/" + strings.TrimPrefix(path, "/")

	a, b, pre, first := diffLines(old, new)
	diffs := lcs.DiffLines(a, b)
	if len(diffs) == 0 {
		return ""
	}
	// The window of old's lines that the hunks show: the changed ones and their context.
	w0 := max(0, diffs[0].Start-diffContext)
	w1 := min(len(a), diffs[len(diffs)-1].End+diffContext)
	// offset returns the byte offset in old of line l, counting from the nearest line
	// whose offset is known: first, then the last one asked for.
	line, off := first, pre
	offset := func(l int) int {
		for ; line > l; line-- {
			off -= len(a[line-1])
		}
		for ; line < l; line++ {
			off += len(a[line])
		}
		return off
	}
	base := offset(w0)
	edits := make([]udiff.Edit, len(diffs))
	for i, d := range diffs {
		edits[i] = udiff.Edit{
			Start: offset(d.Start) - base,
			End:   offset(d.End) - base,
			New:   strings.Join(b[d.ReplStart:d.ReplEnd], ""),
		}
	}
	u, err := udiff.ToUnifiedDiff(from, to, old[base:offset(w1)], edits, diffContext)
	if err != nil {
		// Edits from lcs always fit their text; should that ever fail, udiff.Unified
		// gives the same diff, only slower.
		return udiff.Unified(from, to, old, new)
	}
	for _, h := range u.Hunks {
		h.FromLine += w0
		h.ToLine += w0
	}
	return u.String()
}

// diffLines splits old and new into the line sequences udiff.Lines diffs: each line with
// its "\n", a last line without one kept, no empty last line. The lines both texts share
// at their start and end are split once, from old, and shared. Line first of a starts
// at byte pre of old; the texts are the same before it.
func diffLines(old, new string) (a, b []string, pre, first int) {
	a = splitLines(old, make([]string, 0, strings.Count(old, "\n")+1))
	pre, oldEnd, newEnd := trimLines(old, new)
	first = strings.Count(old[:pre], "\n")
	last := len(a) // the line that starts at oldEnd
	if oldEnd < len(old) {
		last = first + strings.Count(old[pre:oldEnd], "\n")
	}
	mid := new[pre:newEnd]
	b = make([]string, 0, first+strings.Count(mid, "\n")+1+len(a)-last)
	b = append(b, a[:first]...)
	b = splitLines(mid, b)
	b = append(b, a[last:]...)
	return a, b, pre, first
}

// splitLines appends the lines of s to lines: each with its "\n", a last line without
// one kept.
func splitLines(s string, lines []string) []string {
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(lines, s)
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// trimLines returns the part of old and new that differs, in whole lines: both texts
// are the same before pre, and old[oldEnd:] == new[newEnd:]. Both ends fall on line
// starts or the ends of the texts.
func trimLines(old, new string) (pre, oldEnd, newEnd int) {
	pre = strings.LastIndexByte(old[:commonPrefix(old, new)], '\n') + 1
	// The texts end alike from the first line wholly inside their common suffix (which
	// is not to reach back before pre).
	s := commonSuffix(old[pre:], new[pre:])
	i := strings.IndexByte(old[len(old)-s:], '\n')
	if i < 0 {
		return pre, len(old), len(new)
	}
	oldEnd = len(old) - s + i + 1
	return pre, oldEnd, len(new) - (len(old) - oldEnd)
}

// refineLimit bounds the bytes of one changed run of lines that TextEdits diffs
// character by character; larger runs are replaced whole, less their common ends.
const refineLimit = 4096

// minKept is the shortest unchanged stretch that TextEdits keeps between two character
// edits on the same lines; shorter ones are folded into one edit, so that a rewritten
// word does not come out as a scatter of single-letter edits.
const minKept = 4

// TextEdits returns edits that turn old into new, with positions in enc: the changed
// lines of a line diff, each run narrowed to the characters that changed where that is
// cheap. Applying them to old (see ApplyEdits) gives new. Identical texts give none.
// The texts should use LF line endings, as Decode returns them; a CRLF is never split.
func TextEdits(old, new string, enc PositionEncoding) []TextEdit {
	if old == new {
		return nil
	}
	// This runs for every edit of an open document, often a small change in a large
	// text, so only the lines between the texts' common first and last lines go through
	// the line diff and the scan for positions. Unlike for UnifiedDiff, any correct diff
	// of that middle will do.
	pre, oldEnd, newEnd := trimLines(old, new)
	var edits []udiff.Edit
	for _, e := range udiff.Lines(old[pre:oldEnd], new[pre:newEnd]) {
		e.Start += pre
		e.End += pre
		edits = append(edits, refine(old, e)...)
	}
	// pre starts a line, so a position past it is its line in old[pre:] moved down by
	// the lines before pre, at the same character.
	skipped := uint32(lineCount(old[:pre]))
	m := positionMapper{text: old[pre:], enc: enc}
	position := func(offset int) Position {
		p := m.position(offset - pre)
		p.Line += skipped
		return p
	}
	out := make([]TextEdit, len(edits))
	for i, e := range edits {
		out[i] = TextEdit{Range: Range{Start: position(e.Start), End: position(e.End)}, NewText: e.New}
	}
	return out
}

// lineCount returns the number of line breaks in s, as the Language Server Protocol
// counts them: "\n", "\r\n" and a lone "\r".
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if cr := strings.Count(s, "\r"); cr > 0 {
		n += cr - strings.Count(s, "\r\n")
	}
	return n
}

// refine narrows the line edit e of old to the characters that change.
func refine(old string, e udiff.Edit) []udiff.Edit {
	a, b := old[e.Start:e.End], e.New
	p := commonPrefix(a, b)
	s := commonSuffix(a[p:], b[p:])
	a, b = a[p:len(a)-s], b[p:len(b)-s]
	start, end := e.Start+p, e.End-s
	if a == "" || b == "" || len(a)+len(b) > refineLimit || strings.ContainsRune(a, '\r') || strings.ContainsRune(b, '\r') {
		return []udiff.Edit{{Start: start, End: end, New: b}}
	}
	var out []udiff.Edit
	for _, c := range udiff.Strings(a, b) {
		c.Start += start
		c.End += start
		if n := len(out); n > 0 && c.Start-out[n-1].End < minKept {
			prev := &out[n-1]
			prev.New += old[prev.End:c.Start] + c.New
			prev.End = c.End
			continue
		}
		out = append(out, c)
	}
	return out
}

// block is how many bytes commonPrefix and commonSuffix compare at a time: the texts
// are often megabytes long and differ in a few lines, and comparing strings of this
// size runs at memory speed where a byte loop does not.
const block = 4096

// commonPrefix returns the length of the longest common prefix of a and b that ends on
// a character boundary of both and does not split a CRLF.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	for i > 0 && (!boundary(a, i) || !boundary(b, i)) {
		i--
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b that starts
// on a character boundary of both and does not split a CRLF.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	for i > 0 && (!boundary(a, len(a)-i) || !boundary(b, len(b)-i)) {
		i--
	}
	return i
}

// boundary reports whether byte offset i of s starts a character and is not between the
// CR and LF of a line break.
func boundary(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	return utf8.RuneStart(s[i]) && !(s[i-1] == '\r' && s[i] == '\n')
}
