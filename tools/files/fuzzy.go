package files

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The fuzzy stage of replace: when old_string occurs neither exactly nor ignoring the
// indentation and trailing whitespace of its lines, a model has usually copied it with
// a small slip (a space around an operator, a typo). Two looser comparisons are tried,
// each over windows of as many whole lines of the file as old_string has:
//
//  1. the lines hold the same tokens (identifiers, numbers, punctuation), whatever the
//     whitespace between them;
//  2. failing that, for an old_string of at least fuzzyMinChars characters, the lines
//     (each trimmed) differ from old_string's by at most a tenth of its length in edit
//     distance.
//
// A stage applies the edit only if exactly one window qualifies: a loose match that
// could be in two places is a guess. An old_string with backslashes the window lacks is
// never matched loosely: it is over-escaped text, which would put the escapes into the
// file.

// fuzzyMinChars is the shortest old_string the edit-distance comparison is tried for.
const fuzzyMinChars = 10

// fuzzyKind says which comparison found a fuzzy match.
type fuzzyKind int

const (
	fuzzyTokens fuzzyKind = iota + 1
	fuzzyDistance
)

// String names the comparison, for messages.
func (k fuzzyKind) String() string {
	if k == fuzzyTokens {
		return "the same tokens, whitespace between them ignored"
	}
	return "an edit distance of at most a tenth of old_string's length"
}

// describe says how the match differed from old_string.
func (m *fuzzyMatch) describe() string {
	if m.kind == fuzzyDistance {
		return fmt.Sprintf("%d %s different, ignoring indentation", m.dist, plural(m.dist, "character", "characters"))
	}
	return m.kind.String()
}

// fuzzyMatch is the outcome of the fuzzy stage.
type fuzzyMatch struct {
	kind fuzzyKind
	// text is the new content, when exactly one window qualified.
	text string
	// first and last are the 1-based lines of the file the edit replaced.
	first, last int
	// dist is the edit distance of the window that matched, for fuzzyDistance.
	dist int
	// candidates counts the windows that qualified in the stage that found any; more
	// than one means nothing was applied, and lines holds where the first few start.
	candidates int
	lines      []int
}

// fuzzyReplace runs the fuzzy stage for replacing old with new in content; the edit is
// applied when the result has text.
func fuzzyReplace(content, old, new string) fuzzyMatch {
	ol, ok := splitOld(old)
	if !ok {
		return fuzzyMatch{}
	}
	if m := fuzzyByTokens(content, ol, old, new); m.candidates > 0 {
		return m
	}
	if utf8.RuneCountInString(strings.TrimSpace(old)) < fuzzyMinChars {
		return fuzzyMatch{}
	}
	return fuzzyByDistance(content, ol, old, new)
}

// fuzzyByTokens is the first comparison: the same tokens line for line.
func fuzzyByTokens(content string, ol oldLines, old, new string) fuzzyMatch {
	key := longestToken(ol.lines[ol.first])
	if key == "" {
		return fuzzyMatch{}
	}
	var found []flexMatch
	for _, m := range ol.find(content, equalTokens, key) {
		if !overEscaped(old, content[m.start:m.end]) {
			found = append(found, m)
		}
	}
	return finish(content, ol, new, fuzzyTokens, found, nil)
}

// finish applies the one match of found, or reports how many there were.
func finish(content string, ol oldLines, new string, kind fuzzyKind, found []flexMatch, dists []int) fuzzyMatch {
	fm := fuzzyMatch{kind: kind, candidates: len(found)}
	for _, m := range found[:min(len(found), 5)] {
		fm.lines = append(fm.lines, strings.Count(content[:m.start], "\n")+1)
	}
	if len(found) != 1 {
		return fm
	}
	m := found[0]
	fm.first = fm.lines[0]
	fm.last = fm.first + len(ol.lines) - 1
	if dists != nil {
		fm.dist = dists[0]
	}
	fm.text = content[:m.start] + ol.fit(new, m) + content[m.end:]
	return fm
}

// overEscaped reports whether old has backslashes that the file's text matched lacks.
func overEscaped(old, matched string) bool {
	return strings.Count(old, `\`) > strings.Count(matched, `\`)
}

// tokens splits s into its tokens: runs of letters, digits and underscores, and single
// other characters; whitespace separates tokens and is dropped.
func tokens(s string, out []string) []string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case isWordRune(r):
			j := i + size
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r) {
					break
				}
				j += size
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+size])
			i += size
		}
	}
	return out
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// equalTokens compares lines by their tokens.
func equalTokens(a, b string) bool {
	var bufA, bufB [32]string
	ta, tb := tokens(a, bufA[:0]), tokens(b, bufB[:0])
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] != tb[i] {
			return false
		}
	}
	return true
}

// longestToken returns the longest token of s: text any line with the same tokens holds.
func longestToken(s string) string {
	best := ""
	for _, t := range tokens(s, nil) {
		if len(t) > len(best) {
			best = t
		}
	}
	return best
}

// fuzzyByDistance is the second comparison: every window of len(ol.lines) lines whose
// trimmed lines, joined, are within a tenth of old's length in edit distance from old's.
// Windows are filtered by length and by a character count bound before the distance is
// computed, so that a large file costs little more than a pass over it.
func fuzzyByDistance(content string, ol oldLines, old, new string) fuzzyMatch {
	want := trimmedLines(ol.lines)
	limit := len(want) / 10
	k := len(ol.lines)
	// The file's lines: start offsets, and the lines trimmed.
	var starts []int
	var lines []string
	for pos := 0; pos <= len(content); {
		end := strings.IndexByte(content[pos:], '\n')
		if end < 0 {
			end = len(content)
		} else {
			end += pos
		}
		if pos == len(content) && pos > 0 {
			break // no line after the final newline
		}
		starts = append(starts, pos)
		lines = append(lines, strings.TrimSpace(content[pos:end]))
		pos = end + 1
	}
	if len(lines) < k {
		return fuzzyMatch{}
	}
	// diff holds the byte counts of the window minus those of want; l1 sums their
	// absolute values. Every edit changes l1 by at most 2, so l1/2 bounds the distance
	// from below.
	var diff [256]int
	l1 := 0
	add := func(s string, d int) {
		for i := 0; i < len(s); i++ {
			b := s[i]
			l1 -= abs(diff[b])
			diff[b] += d
			l1 += abs(diff[b])
		}
	}
	add(strings.ReplaceAll(want, "\n", ""), -1)
	size := 0 // the window's length, newlines between its lines included
	for i := range k {
		add(lines[i], 1)
		size += len(lines[i])
	}
	size += k - 1
	var found []flexMatch
	var dists []int
	for w := 0; w+k <= len(lines); w++ {
		if w > 0 {
			add(lines[w-1], -1)
			add(lines[w+k-1], 1)
			size += len(lines[w+k-1]) - len(lines[w-1])
		}
		if abs(size-len(want)) > limit || (l1+1)/2 > limit {
			continue
		}
		if strings.TrimSpace(lines[w+ol.first]) == "" {
			continue // old's first non-blank line must meet text
		}
		got := strings.Join(lines[w:w+k], "\n")
		d := boundedDistance(want, got, limit)
		if d > limit {
			continue
		}
		m := windowMatch(content, starts, w, k, ol)
		if overEscaped(old, content[m.start:m.end]) {
			continue
		}
		if len(found) > 0 && m.start <= found[len(found)-1].end {
			// Overlapping windows (shifted by a line) count as one place: keep the closer.
			if d < dists[len(dists)-1] {
				found[len(found)-1], dists[len(dists)-1] = m, d
			}
			continue
		}
		found = append(found, m)
		dists = append(dists, d)
	}
	return finish(content, ol, new, fuzzyDistance, found, dists)
}

// windowMatch is the flexMatch of the k lines of content from line w (0-based).
func windowMatch(content string, starts []int, w, k int, ol oldLines) flexMatch {
	m := flexMatch{start: starts[w], lines: make([]string, k)}
	for j := range k {
		s := starts[w+j]
		e := len(content)
		if w+j+1 < len(starts) {
			e = starts[w+j+1] - 1
		} else if strings.HasSuffix(content, "\n") {
			e = len(content) - 1
		}
		m.lines[j] = content[s:e]
		m.end = e
	}
	m.indent = leadingSpace(m.lines[ol.first])
	if ol.newline && m.end < len(content) {
		m.end++
	}
	return m
}

// trimmedLines joins lines, each without its surrounding whitespace.
func trimmedLines(lines []string) string {
	t := make([]string, len(lines))
	for i, l := range lines {
		t[i] = strings.TrimSpace(l)
	}
	return strings.Join(t, "\n")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// boundedDistance returns the Levenshtein distance of a and b in bytes if it is at most
// limit, else some number above limit. It fills only the band of the table within
// limit of its diagonal.
func boundedDistance(a, b string, limit int) int {
	if abs(len(a)-len(b)) > limit {
		return limit + 1
	}
	const inf = 1 << 30
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
		if j > limit {
			prev[j] = inf
		}
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(len(b), i+limit)
		// The cells just outside the band are read by this row and the next: infinite,
		// except the first column within the limit.
		cur[lo-1] = inf
		if lo == 1 && i <= limit {
			cur[0] = i
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit+1)
}
