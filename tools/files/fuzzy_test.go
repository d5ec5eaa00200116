package files

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

const fuzzyFile = "package p\n\n" +
	"func Add(a, b int) int {\n\treturn a + b\n}\n\n" +
	"func Describe(user *User) string {\n" +
	"\tname := strings.TrimSpace(user.Name)\n" +
	"\tif name == \"\" {\n" +
	"\t\treturn \"anonymous\"\n" +
	"\t}\n" +
	"\treturn fmt.Sprintf(\"%s <%s>\", name, user.Email)\n" +
	"}\n\n" +
	"func Hello() {\n\tfmt.Println(\"Hello, World\")\n}\n"

func TestFuzzyReplace(t *testing.T) {
	twins := "func one() {\n\tvalue := compute(1)\n}\n\nfunc two() {\n\tvalue := compute(2)\n}\n"
	cases := []struct {
		name     string
		content  string
		old, new string
		want     string // the new content; "" when nothing is applied
		kind     fuzzyKind
		lines    [2]int
		dist     int
		cands    int
	}{
		{
			name: "spacing around tokens", content: fuzzyFile,
			old:  "func Add(a,b int) int {\n\treturn a+b\n}",
			new:  "func Add(a,b int) int {\n\treturn a-b\n}",
			want: strings.Replace(fuzzyFile, "return a + b", "return a-b", 1),
			kind: fuzzyTokens, lines: [2]int{3, 5}, cands: 1,
		},
		{
			name: "a typo in a six-line old_string", content: fuzzyFile,
			old: "\tname := strings.TrimSpace(user.Name)\n\tif name == \"\" {\n\t\treturn \"anonymus\"\n\t}\n" +
				"\treturn fmt.Sprintf(\"%s <%s>\", name, user.Email)\n}",
			new: "\tname := strings.TrimSpace(user.Name)\n\tif name == \"\" {\n\t\treturn \"nobody\"\n\t}\n" +
				"\treturn fmt.Sprintf(\"%s <%s>\", name, user.Email)\n}",
			want: strings.Replace(fuzzyFile, "\"anonymous\"", "\"nobody\"", 1),
			kind: fuzzyDistance, lines: [2]int{8, 13}, dist: 1, cands: 1,
		},
		{
			name: "indented with spaces and a typo: re-indented with tabs", content: fuzzyFile,
			old:  "    if name == \"\" {\n        retrn \"anonymous\"\n    }",
			new:  "    if name == \"\" {\n        return \"someone\"\n    }",
			want: strings.Replace(fuzzyFile, "\"anonymous\"", "\"someone\"", 1),
			kind: fuzzyDistance, lines: [2]int{9, 11}, dist: 1, cands: 1,
		},
		{
			name: "a typo that fits two places is not applied", content: twins,
			old: "\tvalue := compute(3)", new: "\tvalue := compute(4)",
			kind: fuzzyDistance, cands: 2,
		},
		{
			name: "tokens that fit two places are not applied", content: twins + "func three() {\n\tvalue := compute(2)\n}\n",
			old: "value:=compute(2)", new: "value := compute(5)",
			kind: fuzzyTokens, cands: 2,
		},
		{
			name: "too different", content: fuzzyFile,
			old: "func Add(x, y int) int {\n\treturn x * y\n}", new: "x",
		},
		{
			name: "too short for the edit distance", content: "a := 1\nb := 2\n",
			old: "a := 9", new: "a := 3",
		},
		{
			name: "over-escaped text is not matched loosely", content: fuzzyFile,
			old: "\tfmt.Println(\\\"Helo, World\\\")", new: "\tfmt.Println(\\\"Hi\\\")",
		},
		{
			name: "no line that is not blank", content: fuzzyFile,
			old: "\n  \n", new: "x",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fuzzyReplace(c.content, c.old, c.new)
			if m.text != c.want {
				t.Fatalf("result:\n%s\nwant:\n%s", m.text, c.want)
			}
			if m.candidates != c.cands {
				t.Errorf("candidates %d, want %d", m.candidates, c.cands)
			}
			if c.want == "" && c.cands == 0 {
				return
			}
			if m.kind != c.kind {
				t.Errorf("kind %v, want %v", m.kind, c.kind)
			}
			if c.want != "" && ([2]int{m.first, m.last} != c.lines || m.dist != c.dist) {
				t.Errorf("lines %d-%d distance %d, want %v distance %d", m.first, m.last, m.dist, c.lines, c.dist)
			}
		})
	}
}

// TestBoundedDistance compares the banded distance with the whole table's.
func TestBoundedDistance(t *testing.T) {
	full := func(a, b string) int {
		prev := make([]int, len(b)+1)
		cur := make([]int, len(b)+1)
		for j := range prev {
			prev[j] = j
		}
		for i := 1; i <= len(a); i++ {
			cur[0] = i
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			}
			prev, cur = cur, prev
		}
		return prev[len(b)]
	}
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = "abc\n "[r.IntN(5)]
		}
		return string(b)
	}
	for range 5000 {
		a, b := word(), word()
		if r.IntN(2) == 0 && len(a) > 0 {
			// A near copy of a, so that small distances are common.
			w := word()
			b = a[:r.IntN(len(a))] + w[:min(2, len(w))] + a[r.IntN(len(a)):]
		}
		limit := r.IntN(8)
		want := full(a, b)
		got := boundedDistance(a, b, limit)
		if want <= limit && got != want || want > limit && got <= limit {
			t.Fatalf("boundedDistance(%q, %q, %d) = %d, distance %d", a, b, limit, got, want)
		}
	}
}

// TestReplaceFuzzyTool runs the fuzzy stage through the replace tool: the result says
// where and how it matched and shows the updated code; refusals stay refusals.
func TestReplaceFuzzyTool(t *testing.T) {
	cases := []struct {
		name   string
		old    string
		new    string
		extra  map[string]any
		disk   string   // "" when the call fails
		output []string // substrings of the output, or of the error
		errT   tools.ErrorType
	}{
		{
			name: "tokens", old: "func Add(a,b int) int {\n\treturn a+b\n}", new: "func Add(a,b int) int {\n\treturn a-b\n}",
			disk: strings.Replace(fuzzyFile, "return a + b", "return a-b", 1),
			output: []string{"(1 replacement)", "fuzzy match (the same tokens, whitespace between them ignored) to lines 3-5",
				"Here is the updated code (the whole file):\npackage p\n", "\treturn a-b\n"},
		},
		{
			name: "typo", old: "\t\treturn \"anonymus\"\n\t}", new: "\t\treturn \"nobody\"\n\t}",
			disk:   strings.Replace(fuzzyFile, "\"anonymous\"", "\"nobody\"", 1),
			output: []string{"fuzzy match (1 character different, ignoring indentation) to lines 10-11"},
		},
		{
			name: "over-escaped stays refused", old: `fmt.Println(\"Hello, World\")`, new: `fmt.Println(\"Hi\")`,
			errT: tools.ErrEditNoOccurrence, output: []string{"backslash escapes"},
		},
		{
			name: "several replacements asked for: no fuzzy stage", old: "func Add(a,b int) int {", new: "func Add(a, b int) int { //",
			extra: map[string]any{"allow_multiple": true},
			errT:  tools.ErrEditNoOccurrence, output: []string{"0 occurrences"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.go": fuzzyFile})
			args := replaceArgsJSON("f.go", c.old, c.new, c.extra)
			if c.errT != "" {
				mustFail(t, NewReplace(ws), args, c.errT, []string{root}, c.output...)
				return
			}
			res := mustCall(t, NewReplace(ws), args)
			if got := readDisk(t, filepath.Join(root, "f.go")); got != c.disk {
				t.Errorf("disk:\n%s\nwant:\n%s", got, c.disk)
			}
			for _, o := range c.output {
				if !strings.Contains(res.Output, o) {
					t.Errorf("output lacks %q:\n%s", o, res.Output)
				}
			}
			if !strings.Contains(res.Summary, "fuzzy") {
				t.Errorf("summary %q does not say the match was fuzzy", res.Summary)
			}
		})
	}
}

func TestUpdatedRegion(t *testing.T) {
	big := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				if s != "" {
					b.WriteString(s + "\n")
				}
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	lines := func(from, to int, change map[int]string) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s + "\n")
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name          string
		before, after string
		want          string
	}{
		{"small file whole", "a\nb\n", "a\nc\n", "Here is the updated code (the whole file):\na\nc"},
		{"40 lines: whole", big(40, nil), big(40, map[int]string{20: "X"}), "Here is the updated code (the whole file):\n" + strings.TrimSuffix(lines(1, 40, map[int]string{20: "X"}), "\n")},
		{"40 lines without a final newline: whole", strings.TrimSuffix(big(40, nil), "\n"), strings.TrimSuffix(big(40, map[int]string{20: "X"}), "\n"),
			"Here is the updated code (the whole file):\n" + strings.TrimSuffix(lines(1, 40, map[int]string{20: "X"}), "\n")},
		{"41 lines: the region", big(41, nil), big(41, map[int]string{20: "X"}), "Here is the updated code (lines 15-25 of 41):\n...\n" + lines(15, 25, map[int]string{20: "X"}) + "..."},
		{"emptied", "a\n", "", "The file is now empty."},
		{
			"one line in the middle of a big file", big(100, nil), big(100, map[int]string{50: "CHANGED"}),
			"Here is the updated code (lines 45-55 of 100):\n...\n" + lines(45, 55, map[int]string{50: "CHANGED"}) + "...",
		},
		{
			"at the start", big(100, nil), big(100, map[int]string{1: "FIRST"}),
			"Here is the updated code (lines 1-6 of 100):\n" + lines(1, 6, map[int]string{1: "FIRST"}) + "...",
		},
		{
			"at the end, no final newline", big(100, nil), strings.TrimSuffix(big(100, map[int]string{100: "LAST"}), "\n"),
			"Here is the updated code (lines 95-100 of 100):\n...\n" + strings.TrimSuffix(lines(95, 100, map[int]string{100: "LAST"}), "\n"),
		},
		{
			"a deleted line", big(100, nil), big(100, map[int]string{50: ""}),
			"Here is the updated code (lines 45-55 of 99):\n...\n" + lines(45, 49, nil) + lines(51, 56, nil) + "...",
		},
		{
			"a long change is cut", big(1000, nil), strings.ReplaceAll(big(1000, nil), "line", "LINE"),
			"Here is the updated code (the whole file):\n" + strings.ReplaceAll(lines(1, 120, nil), "line", "LINE") +
				"... (880 more lines not shown; read the file to see them)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := updatedRegion(c.before, c.after); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}
