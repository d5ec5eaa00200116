package workspace

import (
	"fmt"
	"slices"
	"strings"
)

// Hunk is one hunk of a unified diff (see DiffHunks), numbered as its @@ header
// numbers it: OldStart and NewStart are 1-based lines of the old and new text (0 for
// an empty side at the top of its text, as in GNU diff), OldLines and NewLines the
// lines the hunk spans in each, context included. Index is its 0-based position in
// the diff.
type Hunk struct {
	Index    int `json:"index"`
	OldStart int `json:"oldStart"`
	OldLines int `json:"oldLines"`
	NewStart int `json:"newStart"`
	NewLines int `json:"newLines"`
}

// Header returns the hunk's @@ line, as a diff would show it.
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
}

// first returns the 0-based index of the first line a hunk side spans: an empty side
// sits after line start (1-based), so its index is start itself.
func first(start, count int) int {
	if count == 0 {
		return start
	}
	return start - 1
}

// ApplyHunks returns old with only the hunks accepted (indices into the hunks of
// DiffHunks(…, old, new, …)) of the change to new applied: each accepted hunk's lines
// of old replaced by its lines of new, every other line of old kept byte for byte (its
// CR, and a missing final newline, included). All hunks give new, none give old. An
// index out of range or given twice is an error.
func ApplyHunks(old, new string, accepted []int) (string, error) {
	_, hunks := DiffHunks("", old, new, false)
	take := make([]bool, len(hunks))
	for _, i := range accepted {
		if i < 0 || i >= len(hunks) {
			return "", fmt.Errorf("hunk %d does not exist: the change has %d hunks (0 to %d)", i, len(hunks), len(hunks)-1)
		}
		if take[i] {
			return "", fmt.Errorf("hunk %d is accepted twice", i)
		}
		take[i] = true
	}
	if !slices.Contains(take, false) {
		return new, nil
	}
	a, b := splitLines(old), splitLines(new)
	var out strings.Builder
	out.Grow(max(len(old), len(new)))
	next := 0 // the first line of old not yet copied
	for i, h := range hunks {
		if !take[i] {
			continue
		}
		start := first(h.OldStart, h.OldLines)
		for _, l := range a[next:start] {
			out.WriteString(l)
		}
		ns := first(h.NewStart, h.NewLines)
		for _, l := range b[ns : ns+h.NewLines] {
			out.WriteString(l)
		}
		next = start + h.OldLines
	}
	for _, l := range a[next:] {
		out.WriteString(l)
	}
	return out.String(), nil
}
