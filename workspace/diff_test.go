package workspace_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentls/agentls/workspace"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		old, new string
		isNew    bool
		want     []string // substrings, in order; nil for ""
	}{
		{"identical", "a.txt", "x\n", "x\n", false, nil},
		{"changed line", "a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n", false,
			[]string{"--- a/a.txt\n", "+++ b/a.txt\n", "@@ -1,3 +1,3 @@\n", " one\n", "-two\n", "+2\n", " three\n"}},
		{"absolute path", "/w/a.txt", "a\n", "b\n", false, []string{"--- a/w/a.txt\n", "+++ b/w/a.txt\n"}},
		{"new file", "n.txt", "", "hello\n", true, []string{"--- /dev/null\n", "+++ b/n.txt\n", "@@ -0,0 +1 @@\n", "+hello\n"}},
		{"no final newline", "a.txt", "a\n", "a\nb", false, []string{"+b\n", "\\ No newline at end of file\n"}},
		{"multi-byte", "j.txt", "日本\n", "日本語\n", false, []string{"-日本\n", "+日本語\n"}},
		{"hunk after joined changes", "a.txt", numbered(1, 120), strings.NewReplacer("line 20\n", "x\n", "line 25\n", "y\ny2\n", "line 100\n", "z\n").Replace(numbered(1, 120)), false,
			[]string{"@@ -17,12 +17,13 @@\n", "+x\n", "+y2\n", " line 28\n", "@@ -97,7 +98,7 @@\n", " line 97\n", "-line 100\n", "+z\n"}},
		{"hunk far down", "a.txt", numbered(1, 100), strings.Replace(numbered(1, 100), "line 50\n", "fifty\n", 1), false,
			[]string{"@@ -47,7 +47,7 @@\n", " line 47\n", " line 49\n", "-line 50\n", "+fifty\n", " line 53\n"}},
	}
	for _, tt := range tests {
		got := workspace.UnifiedDiff(tt.path, tt.old, tt.new, tt.isNew)
		if tt.want == nil {
			if got != "" {
				t.Errorf("%s: got %q, want no diff", tt.name, got)
			}
			continue
		}
		rest := got
		for _, w := range tt.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: diff lacks %q (in order):\n%s", tt.name, w, got)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}

// numbered returns the lines "line from\n" … "line to\n".
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// numberedAs returns the lines "line n\n" for the numbers ns, in their order.
func numberedAs(ns ...int) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "line %d\n", n)
	}
	return b.String()
}

// TestUnifiedDiffProperties checks UnifiedDiff, which diffs only the lines between the
// texts' common first and last lines, against what a unified diff must be and against
// udiff.Unified of the whole texts: see checkUnifiedDiff.
func TestUnifiedDiffProperties(t *testing.T) {
	for _, c := range diffCorpus() {
		for _, isNew := range []bool{false, true} {
			if err := checkUnifiedDiff(c.old, c.new, isNew); err != nil {
				t.Errorf("%s (isNew %v): %q → %q: %v", c.name, isNew, c.old, c.new, err)
			}
		}
	}
}

type diffCase struct{ name, old, new string }

// diffCases returns edits at the ends and in the middle of a text, of line endings,
// multi-byte and invalid UTF-8, and, where diffing only the changed middle differs from
// diffing the whole texts, in runs of repeated lines.
func diffCases() []diffCase {
	base := numbered(1, 200)
	return []diffCase{
		{"middle", base, strings.Replace(base, "line 100\n", "line hundred\n", 1)},
		{"first line", base, strings.Replace(base, "line 1\n", "first\n", 1)},
		{"second line", base, strings.Replace(base, "line 2\n", "second\n", 1)},
		{"third line", base, strings.Replace(base, "line 3\n", "third\n", 1)},
		{"fifth line", base, strings.Replace(base, "line 5\n", "fifth\n", 1)},
		{"last line", base, strings.Replace(base, "line 200\n", "last\n", 1)},
		{"last but one line", base, strings.Replace(base, "line 199\n", "x\n", 1)},
		{"insert", base, strings.Replace(base, "line 50\n", "line 50\nnew\nlines\n", 1)},
		{"delete", base, strings.Replace(base, "line 50\nline 51\n", "", 1)},
		{"swap", base, strings.Replace(base, "line 50\nline 51\n", "line 51\nline 50\n", 1)},
		// Two shortest diffs exist (keep 8 or keep 0); either is right.
		{"crossed lines", "\n1\n2\n9\n7\n8\n0\nline 11\nline 12\nline 14\nline 15\nline 16\n", "\n0\n8\n70000000000\nline 11\nline 12\n"},
		{"two hunks", base, strings.Replace(strings.Replace(base, "line 20\n", "x\n", 1), "line 180\n", "y\n", 1)},
		{"near hunks merge", base, strings.Replace(strings.Replace(base, "line 20\n", "x\n", 1), "line 25\n", "y\n", 1)},
		{"hunks 7 lines apart", base, strings.Replace(strings.Replace(base, "line 20\n", "x\n", 1), "line 28\n", "y\n", 1)},
		{"drop final newline", base, strings.TrimSuffix(base, "\n")},
		{"add final newline", strings.TrimSuffix(base, "\n"), base},
		{"change without final newline", strings.TrimSuffix(base, "\n"), strings.Replace(strings.TrimSuffix(base, "\n"), "line 199", "x", 1)},
		{"change last line without final newline", strings.TrimSuffix(base, "\n"), strings.TrimSuffix(base, "200\n")},
		{"append", base, base + "more\n"},
		{"prepend", base, "more\n" + base},
		{"within a line", base, strings.Replace(base, "line 77\n", "line 77 and more\n", 1)},
		{"short", "a\nb\n", "a\nc\n"},
		{"every line changed", base, strings.ReplaceAll(base, "line", "LINE")},
		{"to empty", base, ""},
		{"from empty", "", base},
		{"both empty", "", ""},
		{"identical", base, base},
		{"only newlines", "\n\n\n", "\n\n\n\n"},
		{"no newlines", "abc", "abd"},
		{"repeated lines", strings.Repeat("}\n", 50), strings.Repeat("}\n", 25) + "x\n" + strings.Repeat("}\n", 25)},
		// Diffing only the middle puts these changes at its edge, next to lines that
		// diffing the whole texts shows as context; the hunk must still show three.
		{"delete in a run of repeated lines", "U1\na\na\na\na\nU2\n", "U1\na\na\na\nU2\n"},
		{"delete from a run after a run", "}\n\nu1\n}\n}\nu5\nu6\nb\nb\nb\n}\na\n", "}\n\nu1\n}\n}\nu5\nu6\nb\nb\n}\na\n"},
		{"run fuzz seed", "}\n}\n\n}\n", "}\n\n}\n}\n"},
		{"insert a blank line among blank lines", "a\n\n\n\nb\n", "a\n\n\n\n\nb\n"},
		{"delete a blank line among many", "x\n" + strings.Repeat("\n", 20) + "y\n", "x\n" + strings.Repeat("\n", 19) + "y\n"},
		// Past 100 changed lines lcs stops searching and settles for a longer diff,
		// which differs with the lines around the middle: here diffing only the
		// middle finds a shorter one than diffing the whole texts, …
		{"past the search limit, middle shorter", strings.Repeat("a\n", 96) + "b\n" + strings.Repeat("a\n", 5), "b\na\n"},
		{"past the search limit, middle shorter, reversed", "b\na\n", strings.Repeat("a\n", 96) + "b\n" + strings.Repeat("a\n", 5)},
		// … and here a longer one.
		{"past the search limit, whole shorter", "}\n" + strings.Repeat("a\n", 2) + strings.Repeat("b\n", 25) + "a\nb\n", "}\na\nb\n" + strings.Repeat("a\n", 61) + "b\n" + strings.Repeat("a\n", 15)},
		{"past the search limit, whole shorter, reversed", "}\na\nb\n" + strings.Repeat("a\n", 61) + "b\n" + strings.Repeat("a\n", 15), "}\n" + strings.Repeat("a\n", 2) + strings.Repeat("b\n", 25) + "a\nb\n"},
		// Where no line repeats, lcs past the limit can also settle for different diffs.
		{"past the search limit, no repeated lines", numbered(1, 63) + "end\nend 2\n", numberedAs(20, 54, 28, 51, 10, 55, 39, 16, 56, 1, 41, 22, 62, 32, 7, 29, 6, 45, 35,
			58, 18, 21, 60, 63, 36, 48, 3, 49, 34, 8, 61, 15, 53, 33, 5, 42, 23, 27, 9, 59, 46, 26, 0, 38, 17, 25, 44, 4, 50, 14,
			19, 30, 43, 31, 57, 52, 12) + "end\nend 2\n"},
		{"insert in a long run", numbered(1, 10) + strings.Repeat("}\n", 30) + numbered(11, 20), numbered(1, 10) + strings.Repeat("}\n", 31) + numbered(11, 20)},
		{"CRLF", "a\r\nb\r\nc\r\nd\r\ne\r\n", "a\r\nb\r\nC\r\nd\r\ne\r\n"},
		{"CRLF to LF", "a\r\nb\r\nc\r\n", "a\r\nb\nc\r\n"},
		{"lone CR", "a\rb\nc\n", "a\rB\nc\n"},
		{"multi-byte", "日本\n語\nのテキスト\n😀\n", "日本\n語x\nのテキスト\n😀\n"},
		{"multi-byte sharing a first byte", "é\nx\n", "è\nx\n"},
		{"invalid UTF-8", "a\n\xff\xfe\nb\nc\n", "a\n\xff\xfd\nb\nc\n"},
		{"invalid UTF-8 after a newline", "a\n\x80b\nc\n", "a\n\x80c\nc\n"},
	}
}

// diffCorpus returns the texts TestUnifiedDiffProperties diffs: diffCases and random
// edits, of distinct lines and of lines that repeat.
func diffCorpus() []diffCase {
	base := numbered(1, 200)
	cases := diffCases()
	rng := rand.New(rand.NewPCG(1, 2))
	// Random edits of distinct lines, and swaps of them, so that no line repeats.
	for i := range 300 {
		lines := strings.SplitAfter(base, "\n")
		lines = lines[:len(lines)-1]
		fresh := 0
		for range 1 + rng.IntN(5) {
			j := rng.IntN(len(lines))
			switch rng.IntN(4) {
			case 0:
				fresh++
				lines[j] = fmt.Sprintf("changed %d\n", fresh)
			case 1:
				lines = append(lines[:j], lines[j+1:]...)
			case 2:
				fresh++
				lines = append(lines[:j], append([]string{fmt.Sprintf("inserted %d\n", fresh)}, lines[j:]...)...)
			default:
				k := rng.IntN(len(lines))
				lines[j], lines[k] = lines[k], lines[j]
			}
		}
		cases = append(cases, diffCase{fmt.Sprintf("random %d", i), base, strings.Join(lines, "")})
	}
	// Random edits of lines drawn from a few that repeat (with CRLF, multi-byte and
	// invalid UTF-8 among them), some with more changes than udiff's search follows
	// before it settles for a longer diff.
	repeated := []string{"}\n", "\n", "\treturn nil\n", "a\n", "x\r\n", "é\n", "\xff\xfe\n", "u"}
	for i := range 3000 {
		var lines []string
		k := 2 + rng.IntN(len(repeated)-1)
		for j := range rng.IntN(200) {
			if rng.IntN(4) == 0 {
				lines = append(lines, fmt.Sprintf("unique %d\n", j))
			} else {
				lines = append(lines, repeated[rng.IntN(k)])
			}
		}
		old := strings.Join(lines, "")
		changes := 1 + rng.IntN(4)
		if i%10 == 0 {
			changes = 1 + rng.IntN(150)
		}
		for range changes {
			j := rng.IntN(len(lines) + 1)
			switch {
			case rng.IntN(3) == 0 || j == len(lines):
				lines = append(lines[:j], append([]string{repeated[rng.IntN(k)]}, lines[j:]...)...)
			case rng.IntN(2) == 0:
				lines = append(lines[:j], lines[j+1:]...)
			default:
				lines[j] = repeated[rng.IntN(k)]
			}
		}
		cases = append(cases, diffCase{fmt.Sprintf("repeated %d", i), old, strings.Join(lines, "")})
	}
	return cases
}

// checkUnifiedDiff returns what is wrong with UnifiedDiff's diff of old and new:
//  1. applied strictly to old (see applyUnified) it gives new;
//  2. each hunk shows diffContext unchanged lines before its first change and after its
//     last, or as many as old has there, and no more than 2×diffContext between two
//     changes (farther apart, they make two hunks);
//  3. it adds and removes as many lines as udiff.Unified's diff of the whole texts
//     where that one changes fewer than lcsSearchLimit lines, and so is a shortest
//     diff; past that, where the search in go-udiff's lcs settles for a longer diff,
//     it changes no more lines than that one;
//  4. where neither text repeats a line, it is udiff.Unified's diff, but for the new
//     start lines in hunk headers, which udiff gets wrong after a hunk that joins two
//     changes; unless, past lcsSearchLimit, it is a shorter one.
func checkUnifiedDiff(old, new string, isNew bool) error {
	got := workspace.UnifiedDiff("f.txt", old, new, isNew)
	from := "a/f.txt"
	if isNew {
		from = "/dev/null"
	}
	want := udiff.Unified(from, "b/f.txt", old, new)
	if old == new {
		if got != "" {
			return fmt.Errorf("diff of identical texts:\n%s", got)
		}
		return nil
	}
	applied, hunks, err := applyUnified(got, old, from, "b/f.txt")
	if err != nil {
		return fmt.Errorf("%w in diff\n%s", err, got)
	}
	if applied != new {
		return fmt.Errorf("diff applied gives %q, want %q; diff\n%s", applied, new, got)
	}
	oldLines := len(splitLines(old))
	for _, h := range hunks {
		if err := h.checkContext(oldLines); err != nil {
			return fmt.Errorf("%w in diff\n%s", err, got)
		}
	}
	add, del := countOps(hunks, '+'), countOps(hunks, '-')
	wantAdd, wantDel := countChanges(want)
	switch {
	case add+del > wantAdd+wantDel:
		return fmt.Errorf("diff adds %d and removes %d lines, more than udiff.Unified's %d and %d; diff\n%s\nudiff\n%s", add, del, wantAdd, wantDel, got, want)
	case wantAdd+wantDel < lcsSearchLimit && (add != wantAdd || del != wantDel):
		return fmt.Errorf("diff adds %d and removes %d lines, udiff.Unified's shortest diff %d and %d; diff\n%s\nudiff\n%s", add, del, wantAdd, wantDel, got, want)
	}
	return nil
}

// countChanges returns the numbers of lines the unified diff d adds and removes.
func countChanges(d string) (add, del int) {
	lines := strings.Split(d, "\n")
	for _, l := range lines[min(2, len(lines)):] {
		switch {
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

// diffHunk is one hunk of a unified diff, as applyUnified read it.
type diffHunk struct {
	start int      // index in old of its first line
	lines []string // each an operation (' ', '-' or '+') and the line
}

// checkContext returns what is wrong with h's context lines, in a diff of a text of
// oldLines lines.
func (h diffHunk) checkContext(oldLines int) error {
	var changes []int // indexes in h.lines
	for i, l := range h.lines {
		if l[0] != ' ' {
			changes = append(changes, i)
		}
	}
	if len(changes) == 0 {
		return fmt.Errorf("hunk at old line %d changes nothing", h.start+1)
	}
	before, after := changes[0], len(h.lines)-1-changes[len(changes)-1]
	// Old lines before the first change, and from the last change's end.
	first := h.start + before
	end := h.start
	for _, l := range h.lines {
		if l[0] != '+' {
			end++
		}
	}
	end -= after
	if want := min(diffContext, first); before != want {
		return fmt.Errorf("hunk at old line %d has %d lines of context before its first change, want %d", h.start+1, before, want)
	}
	if want := min(diffContext, oldLines-end); after != want {
		return fmt.Errorf("hunk at old line %d has %d lines of context after its last change, want %d", h.start+1, after, want)
	}
	for i := 1; i < len(changes); i++ {
		if gap := changes[i] - changes[i-1] - 1; gap > 2*diffContext {
			return fmt.Errorf("hunk at old line %d has %d unchanged lines between two changes, want two hunks", h.start+1, gap)
		}
	}
	return nil
}

// diffContext is the number of context lines UnifiedDiff shows.
const diffContext = 3

// lcsSearchLimit is the number of changed lines within which go-udiff's lcs finds a
// shortest diff of two line sequences.
const lcsSearchLimit = 100

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

const noNewline = "\\ No newline at end of file\n"

// applyUnified applies the unified diff d to old and returns the result and the hunks.
// It is strict: the headers must name from and to; the hunks must come in order, each
// with as many lines as its header counts, at the lines its header names (the new line
// numbers following from the old ones and the hunks before), changing something; every
// context and removed line must be old's line at that place; only a text's last line
// may lack a newline, and it must then be marked so.
func applyUnified(d, old, from, to string) (string, []diffHunk, error) {
	if d == "" {
		return old, nil, nil
	}
	rest, ok := strings.CutPrefix(d, "--- "+from+"\n+++ "+to+"\n")
	if !ok {
		return "", nil, fmt.Errorf("headers are not for %s and %s", from, to)
	}
	lines := strings.SplitAfter(rest, "\n")
	if lines[len(lines)-1] != "" {
		return "", nil, fmt.Errorf("diff does not end in a newline")
	}
	lines = lines[:len(lines)-1]
	src := splitLines(old)
	var out strings.Builder
	var hunks []diffHunk
	at, delta := 0, 0 // next line of src; lines added less lines removed so far
	for len(lines) > 0 {
		m := hunkHeader.FindStringSubmatch(lines[0])
		if m == nil {
			return "", nil, fmt.Errorf("%q is not a hunk header", lines[0])
		}
		lines = lines[1:]
		oldStart, oldCount := headerRange(m[1], m[2])
		newStart, newCount := headerRange(m[3], m[4])
		if oldStart < at {
			return "", nil, fmt.Errorf("hunk at old line %s overlaps the one before or is out of order", m[1])
		}
		if newStart != oldStart+delta {
			return "", nil, fmt.Errorf("hunk at old line %s says new line %s, want %d", m[1], m[3], oldStart+delta+1)
		}
		if oldStart+oldCount > len(src) {
			return "", nil, fmt.Errorf("hunk at old line %s runs past old's %d lines", m[1], len(src))
		}
		out.WriteString(strings.Join(src[at:oldStart], ""))
		at = oldStart
		h := diffHunk{start: oldStart}
		var olds, news int
		for olds < oldCount || news < newCount {
			if len(lines) == 0 || lines[0] == "" || !strings.ContainsRune(" -+", rune(lines[0][0])) {
				return "", nil, fmt.Errorf("hunk at old line %s has fewer lines than its header counts", m[1])
			}
			op, text := lines[0][0], lines[0][1:]
			lines = lines[1:]
			if len(lines) > 0 && lines[0] == noNewline {
				text = strings.TrimSuffix(text, "\n")
				lines = lines[1:]
			}
			if op != '+' {
				if at >= len(src) || src[at] != text {
					return "", nil, fmt.Errorf("old line %d is %q, hunk says %q", at+1, lineOr(src, at), text)
				}
				at++
				olds++
			}
			if op != '-' {
				out.WriteString(text)
				news++
			}
			if !strings.HasSuffix(text, "\n") && op != '-' && (len(lines) > 0 || at < len(src)) {
				return "", nil, fmt.Errorf("line %q without a newline is not new's last", text)
			}
			h.lines = append(h.lines, string(op)+text)
		}
		if olds != oldCount || news != newCount {
			return "", nil, fmt.Errorf("hunk at old line %s has more lines than its header counts", m[1])
		}
		delta += newCount - oldCount
		hunks = append(hunks, h)
	}
	out.WriteString(strings.Join(src[at:], ""))
	return out.String(), hunks, nil
}

// headerRange returns the index of the first line and the number of lines of a range
// "start,count" of a hunk header; a missing count is 1, and an empty range starts
// after line start.
func headerRange(start, count string) (int, int) {
	s, _ := strconv.Atoi(start)
	n := 1
	if count != "" {
		n, _ = strconv.Atoi(count)
	}
	if n == 0 {
		return s, 0
	}
	return s - 1, n
}

// lineOr returns lines[i], or a note that there is none.
func lineOr(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of text)"
}

// splitLines returns the lines of s, each with its newline, the last without one kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// countOps returns the number of lines of the hunks with operation op.
func countOps(hunks []diffHunk, op byte) int {
	n := 0
	for _, h := range hunks {
		for _, l := range h.lines {
			if l[0] == op {
				n++
			}
		}
	}
	return n
}

func FuzzUnifiedDiff(f *testing.F) {
	// Small seeds only: the fuzzer minimizes every input that finds new code, and that
	// takes long for texts of kilobytes.
	for _, c := range diffCases() {
		if len(c.old)+len(c.new) <= 512 {
			f.Add(c.old, c.new, false)
		}
	}
	f.Add("", "hello\n", true)
	f.Add(numbered(1, 20), strings.Replace(numbered(1, 20), "line 9\n", "", 1), false)
	f.Fuzz(func(t *testing.T, old, new string, isNew bool) {
		if err := checkUnifiedDiff(old, new, isNew); err != nil {
			t.Fatal(err)
		}
	})
}
