package workspace_test

import (
	"fmt"
	"math/rand/v2"
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

// TestUnifiedDiffSameAsUdiff checks that UnifiedDiff, which diffs and renders only part
// of the work, gives exactly the diff udiff.Unified makes of the whole texts. Runs of
// repeated lines are where diffing only the changed middle would place changes
// differently or lose context lines.
func TestUnifiedDiffSameAsUdiff(t *testing.T) {
	base := numbered(1, 200)
	cases := []struct{ name, old, new string }{
		{"middle", base, strings.Replace(base, "line 100\n", "line hundred\n", 1)},
		{"first line", base, strings.Replace(base, "line 1\n", "first\n", 1)},
		{"third line", base, strings.Replace(base, "line 3\n", "third\n", 1)},
		{"fifth line", base, strings.Replace(base, "line 5\n", "fifth\n", 1)},
		{"last line", base, strings.Replace(base, "line 200\n", "last\n", 1)},
		{"insert", base, strings.Replace(base, "line 50\n", "line 50\nnew\nlines\n", 1)},
		{"delete", base, strings.Replace(base, "line 50\nline 51\n", "", 1)},
		{"two hunks", base, strings.Replace(strings.Replace(base, "line 20\n", "x\n", 1), "line 180\n", "y\n", 1)},
		{"near hunks merge", base, strings.Replace(strings.Replace(base, "line 20\n", "x\n", 1), "line 25\n", "y\n", 1)},
		{"drop final newline", base, strings.TrimSuffix(base, "\n")},
		{"add final newline", strings.TrimSuffix(base, "\n"), base},
		{"change without final newline", strings.TrimSuffix(base, "\n"), strings.Replace(strings.TrimSuffix(base, "\n"), "line 199", "x", 1)},
		{"append", base, base + "more\n"},
		{"prepend", base, "more\n" + base},
		{"within a line", base, strings.Replace(base, "line 77\n", "line 77 and more\n", 1)},
		{"short", "a\nb\n", "a\nc\n"},
		{"repeated lines", strings.Repeat("}\n", 50), strings.Repeat("}\n", 25) + "x\n" + strings.Repeat("}\n", 25)},
		{"delete in a run of repeated lines", "U1\na\na\na\na\nU2\n", "U1\na\na\na\nU2\n"},
		{"delete from a run after a run", "}\n\nu1\n}\n}\nu5\nu6\nb\nb\nb\n}\na\n", "}\n\nu1\n}\n}\nu5\nu6\nb\nb\n}\na\n"},
		{"insert a blank line among blank lines", "a\n\n\n\nb\n", "a\n\n\n\n\nb\n"},
		{"CRLF", "a\r\nb\r\nc\r\nd\r\ne\r\n", "a\r\nb\r\nC\r\nd\r\ne\r\n"},
		{"multi-byte", "日本\n語\nのテキスト\n😀\n", "日本\n語x\nのテキスト\n😀\n"},
		{"invalid UTF-8", "a\n\xff\xfe\nb\nc\n", "a\n\xff\xfd\nb\nc\n"},
		{"every line changed", base, strings.ReplaceAll(base, "line", "LINE")},
		{"to empty", base, ""},
		{"from empty", "", base},
		{"both empty", "", ""},
	}
	// Random edits: of distinct lines, and of lines drawn from a few that repeat, some
	// with more changes than udiff's search follows before it settles for a longer diff.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		lines := strings.SplitAfter(base, "\n")
		for range 1 + rng.IntN(4) {
			j := rng.IntN(len(lines))
			switch rng.IntN(3) {
			case 0:
				lines[j] = fmt.Sprintf("changed %d\n", rng.IntN(1000))
			case 1:
				lines[j] = ""
			default:
				lines[j] += "inserted\n"
			}
		}
		cases = append(cases, struct{ name, old, new string }{fmt.Sprintf("random %d", i), base, strings.Join(lines, "")})
	}
	repeated := []string{"}\n", "\n", "\treturn nil\n", "a\n", "x\r\n", "é\n", "u"}
	for i := range 2000 {
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
		cases = append(cases, struct{ name, old, new string }{fmt.Sprintf("repeated %d", i), old, strings.Join(lines, "")})
	}
	for _, c := range cases {
		for _, isNew := range []bool{false, true} {
			from := "a/f.txt"
			if isNew {
				from = "/dev/null"
			}
			want := udiff.Unified(from, "b/f.txt", c.old, c.new)
			if got := workspace.UnifiedDiff("f.txt", c.old, c.new, isNew); got != want {
				t.Errorf("%s (isNew %v): %q → %q: diff\n%s\nwant\n%s", c.name, isNew, c.old, c.new, got, want)
			}
		}
	}
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\n")
	f.Add("U1\na\na\na\na\nU2\n", "U1\na\na\na\nU2\n")
	f.Add("}\n}\n\n}\n", "}\n\n}\n}\n")
	f.Add(numbered(1, 20), strings.Replace(numbered(1, 20), "line 9\n", "", 1))
	f.Fuzz(func(t *testing.T, old, new string) {
		if old == new {
			return // UnifiedDiff gives "" there without diffing
		}
		want := udiff.Unified("a/f", "b/f", old, new)
		if got := workspace.UnifiedDiff("f", old, new, false); got != want {
			t.Fatalf("diff\n%s\nwant\n%s", got, want)
		}
	})
}
