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
// Only the lines between the texts' common first and last lines are diffed, as git
// does, so a small change in a large text costs little more than the scan for where
// they differ (udiff.Unified of the whole texts takes about 180 ms on 10 MB). The hunks
// take their context from the whole of old, so each shows three unchanged lines, or as
// many as the file has, on either side, however near the cut its change lies.
//
// The diff is never longer than udiff's of the whole texts, and as long where that one
// is a shortest diff, as it always is below 100 changed lines (past them, lcs stops
// searching and settles for a longer one). Where no line repeats and the lengths agree,
// it is udiff's diff, but for the new start lines of hunk headers, which udiff gets
// wrong after a hunk that joins two changes. In a run of repeated lines ("}", blank
// lines) a change may be shown on another line of the run, as git may show it too.
func UnifiedDiff(path, old, new string, isNew bool) string {
	diff, _ := DiffHunks(path, old, new, isNew)
	return diff
}

// DiffHunks returns UnifiedDiff(path, old, new, isNew) and its hunks in order, as its
// @@ headers number them, computed once with the diff so that a person's choice among
// the hunks shown (see ApplyHunks) names the hunks of that very diff.
func DiffHunks(path, old, new string, isNew bool) (string, []Hunk) {
	if old == new && !isNew {
		return "", nil
	}
	from := "a/" + strings.TrimPrefix(path, "/")
	if isNew {
		from = "/dev/null"
	}
	to := "b/" + strings.TrimPrefix(path, "/")

	pre, oldEnd, newEnd := commonLines(old, new)
	a := splitLines(old[pre:oldEnd])
	b := splitLines(new[pre:newEnd])
	diffs := lcs.DiffLines(a, b)
	if n := changedLines(diffs); n >= lcsSearchLimit && (pre > 0 || oldEnd < len(old)) {
		// The search may have settled for a longer diff, and which one depends on the
		// lines around the middle: of the whole texts, as udiff.Unified diffs them, it
		// may come out shorter. The shorter is kept, so the diff is never longer.
		wa, wb := splitLines(old), splitLines(new)
		if whole := lcs.DiffLines(wa, wb); changedLines(whole) <= n {
			pre, a, b, diffs = 0, wa, wb, whole
		}
	}
	if len(diffs) == 0 {
		return "", nil
	}
	// offset returns the byte offset in old of line l of a. Diffs come in order, so
	// it only ever counts forward.
	line, off := 0, pre
	offset := func(l int) int {
		for ; line < l; line++ {
			off += len(a[line])
		}
		return off
	}
	edits := make([]udiff.Edit, len(diffs))
	for i, d := range diffs {
		edits[i] = udiff.Edit{
			Start: offset(d.Start),
			End:   offset(d.End),
			New:   strings.Join(b[d.ReplStart:d.ReplEnd], ""),
		}
	}
	// Only the window of old that the hunks show is rendered: from the first changed
	// line to the last and diffContext lines either side, which both texts share.
	w0 := edits[0].Start
	for range diffContext {
		if w0 == 0 {
			break
		}
		w0 = strings.LastIndexByte(old[:w0-1], '\n') + 1
	}
	w1 := edits[len(edits)-1].End
	for range diffContext {
		i := strings.IndexByte(old[w1:], '\n')
		if i < 0 {
			w1 = len(old)
			break
		}
		w1 += i + 1
	}
	for i := range edits {
		edits[i].Start -= w0
		edits[i].End -= w0
	}
	u, err := udiff.ToUnifiedDiff(from, to, old[w0:w1], edits, diffContext)
	if err != nil {
		// Edits from lcs always fit their text; should that ever fail, udiff.Unified
		// of the whole texts still gives a diff, though not one of hunks to choose from.
		return udiff.Unified(from, to, old, new), nil
	}
	// Both texts have the same lines before the window. A hunk starts in new where it
	// starts in old, moved by the lines the hunks before it added and removed. (udiff's
	// own ToLine misses the unchanged lines between two changes that it joins into one
	// hunk, golang/go#81453, so every later hunk would name the wrong new line.)
	skipped := strings.Count(old[:w0], "\n")
	delta := 0
	hunks := make([]Hunk, len(u.Hunks))
	for i, h := range u.Hunks {
		h.FromLine += skipped
		h.ToLine = h.FromLine + delta
		oldLines, newLines := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				delta++
				newLines++
			case udiff.Delete:
				delta--
				oldLines++
			default:
				oldLines++
				newLines++
			}
		}
		hunks[i] = Hunk{Index: i, OldStart: headerStart(h.FromLine, oldLines), OldLines: oldLines,
			NewStart: headerStart(h.ToLine, newLines), NewLines: newLines}
	}
	return u.String(), hunks
}

// headerStart is the start line of one side of a hunk as udiff writes it in the @@
// header: an empty side at the top of its text is line 0, as in GNU diff.
func headerStart(line, count int) int {
	if line == 1 && count == 0 {
		return 0
	}
	return line
}

// lcsSearchLimit is the number of changed lines below which lcs.DiffLines always finds
// a shortest diff (go-udiff's maxDiffs): it follows paths of up to 50 changes from
// either end, and past that joins the two that got farthest, a longer diff.
const lcsSearchLimit = 100

// changedLines returns the number of lines diffs remove and add.
func changedLines(diffs []lcs.Diff) int {
	n := 0
	for _, d := range diffs {
		n += d.End - d.Start + d.ReplEnd - d.ReplStart
	}
	return n
}

// splitLines returns the lines of s as udiff splits them: each with its "\n", a last
// line without one kept.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
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

// commonLines returns where old and new differ, in whole lines: old[:pre] == new[:pre]
// are all the lines both texts start with, and old[oldEnd:] == new[newEnd:] all the
// lines both end with after those. Each offset starts a line or ends its text.
func commonLines(old, new string) (pre, oldEnd, newEnd int) {
	pre = strings.LastIndexByte(old[:bytePrefix(old, new)], '\n') + 1
	s := byteSuffix(old[pre:], new[pre:])
	oldEnd, newEnd = len(old)-s, len(new)-s
	if lineStart(old, pre, oldEnd) && lineStart(new, pre, newEnd) {
		return pre, oldEnd, newEnd
	}
	// The texts differ in the byte before their common end, so they end alike from the
	// first line that starts inside it.
	i := strings.IndexByte(old[oldEnd:], '\n')
	if i < 0 {
		return pre, len(old), len(new)
	}
	return pre, oldEnd + i + 1, newEnd + i + 1
}

// lineStart reports whether offset i of s, at or past pre, starts a line of s[pre:].
func lineStart(s string, pre, i int) bool {
	return i == pre || s[i-1] == '\n'
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
	// the line diff and the scan for positions.
	pre, oldEnd, newEnd := commonLines(old, new)
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
	i := bytePrefix(a, b)
	for i > 0 && (!boundary(a, i) || !boundary(b, i)) {
		i--
	}
	return i
}

// bytePrefix returns the length of the longest common prefix of a and b.
func bytePrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b that starts
// on a character boundary of both and does not split a CRLF.
func commonSuffix(a, b string) int {
	i := byteSuffix(a, b)
	for i > 0 && (!boundary(a, len(a)-i) || !boundary(b, len(b)-i)) {
		i--
	}
	return i
}

// byteSuffix returns the length of the longest common suffix of a and b.
func byteSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
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
