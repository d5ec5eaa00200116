package files

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// TestUnifiedDiff checks that the trimmed diff is the diff workspace.UnifiedDiff makes
// of the whole texts.
func TestUnifiedDiff(t *testing.T) {
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
		{"to empty", base, ""},
		{"from empty", "", base},
	}
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
	for _, c := range cases {
		want := workspace.UnifiedDiff("f.txt", c.old, c.new, false)
		if got := unifiedDiff("f.txt", c.old, c.new); got != want {
			t.Errorf("%s: diff\n%s\nwant\n%s", c.name, got, want)
		}
	}
}
