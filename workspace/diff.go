package workspace

import (
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff returns the unified diff, with three lines of context, that turns old into
// new, with path (relative or absolute, as the caller wants it shown) in the headers. An
// empty old with isNew set diffs against /dev/null. Identical texts give "".
func UnifiedDiff(path, old, new string, isNew bool) string {
	if old == new && !isNew {
		return ""
	}
	from := "a/" + strings.TrimPrefix(path, "/")
	if isNew {
		from = "/dev/null"
	}
	return udiff.Unified(from, "b/"+strings.TrimPrefix(path, "/"), old, new)
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
	var edits []udiff.Edit
	for _, e := range udiff.Lines(old, new) {
		edits = append(edits, refine(old, e)...)
	}
	m := positionMapper{text: old, enc: enc}
	out := make([]TextEdit, len(edits))
	for i, e := range edits {
		out[i] = TextEdit{Range: Range{Start: m.position(e.Start), End: m.position(e.End)}, NewText: e.New}
	}
	return out
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

// commonPrefix returns the length of the longest common prefix of a and b that ends on
// a character boundary of both and does not split a CRLF.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && (!boundary(a, n) || !boundary(b, n)) {
		n--
	}
	return n
}

// commonSuffix returns the length of the longest common suffix of a and b that starts
// on a character boundary of both and does not split a CRLF.
func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	for n > 0 && (!boundary(a, len(a)-n) || !boundary(b, len(b)-n)) {
		n--
	}
	return n
}

// boundary reports whether byte offset i of s starts a character and is not between the
// CR and LF of a line break.
func boundary(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	return utf8.RuneStart(s[i]) && !(s[i-1] == '\r' && s[i] == '\n')
}
