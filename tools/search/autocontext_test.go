package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// numbered returns n lines "line 1" … "line n", with the lines in marks replaced.
func numbered(n int, marks map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if m, ok := marks[i]; ok {
			b.WriteString(m + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// TestGrepAutoContext checks the context grep_search adds, as Gemini CLI does, when it
// finds one to three matches and no context was asked for: ±50 lines around one match,
// ±15 around each of two or three, bounded by the file and by the output budget.
func TestGrepAutoContext(t *testing.T) {
	long := strings.Repeat("w", 480)
	var longFile strings.Builder
	for i := 1; i <= 200; i++ {
		if i == 100 {
			longFile.WriteString("MATCH here\n")
			continue
		}
		fmt.Fprintf(&longFile, "%d %s\n", i, long)
	}
	ws, root := testutil.Workspace(t, map[string]string{
		"one.txt":               numbered(200, map[int]string{100: "MATCH one"}),
		"top.txt":               numbered(10, map[int]string{3: "MATCH top"}),
		"two/a.txt":             numbered(100, map[int]string{40: "MATCH a", 50: "MATCH b"}),
		"four/f.txt":            numbered(40, map[int]string{5: "MATCH", 10: "MATCH", 20: "MATCH", 30: "MATCH"}),
		"wide/w.txt":            longFile.String(),
		"file/f.go":             numbered(20, map[int]string{8: "func Sub(a, b int) int {"}),
		"file/other.go":         "func Sub() {}\n",
		"hidden/.agentlsignore": "skip.txt\n",
		"hidden/skip.txt":       "MATCH skipped\n",
	})
	span := func(from, to, match int, text string) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if i == match {
				fmt.Fprintf(&b, "L%d: %s\n", i, text)
			} else {
				fmt.Fprintf(&b, "L%d- line %d\n", i, i)
			}
		}
		return b.String()
	}
	note := func(n int) string {
		return fmt.Sprintf(" (no context was asked for, so up to %d lines around each match are shown, as L<n>- lines):\n---\n", n)
	}
	tests := []struct {
		name  string
		args  string
		exact string
		check func(t *testing.T, out string)
	}{
		{
			name:  "one match: 50 lines each side",
			args:  `{"pattern":"MATCH one"}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"MATCH one\" in path \"%s\"", root) + note(50) + "File: one.txt\n" + span(50, 150, 100, "MATCH one") + "---",
		},
		{
			name:  "bounded by the file",
			args:  `{"pattern":"MATCH top"}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"MATCH top\" in path \"%s\"", root) + note(50) + "File: top.txt\n" + span(1, 10, 3, "MATCH top") + "---",
		},
		{
			name: "two matches: 15 lines each side, windows merged",
			args: `{"pattern":"MATCH [ab]","dir_path":"two"}`,
			exact: fmt.Sprintf("Found 2 matches for pattern \"MATCH [ab]\" in path \"%s/two\"", root) + note(15) + "File: a.txt\n" +
				strings.Replace(span(25, 65, 40, "MATCH a"), "L50- line 50", "L50: MATCH b", 1) + "---",
		},
		{
			name:  "four matches: no context",
			args:  `{"pattern":"MATCH","dir_path":"four"}`,
			exact: fmt.Sprintf("Found 4 matches for pattern \"MATCH\" in path \"%s/four\":\n---\nFile: f.txt\nL5: MATCH\nL10: MATCH\nL20: MATCH\nL30: MATCH\n---", root),
		},
		{
			name:  "context asked for, even 0: none added",
			args:  `{"pattern":"MATCH top","context":0}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"MATCH top\" in path \"%s\":\n---\nFile: top.txt\nL3: MATCH top\n---", root),
		},
		{
			name:  "before asked for: only that",
			args:  `{"pattern":"MATCH top","before":1}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"MATCH top\" in path \"%s\":\n---\nFile: top.txt\nL2- line 2\nL3: MATCH top\n---", root),
		},
		{
			name:  "names_only: none",
			args:  `{"pattern":"MATCH top","names_only":true}`,
			exact: fmt.Sprintf("Found 1 file with matches for pattern \"MATCH top\" in path \"%s\":\ntop.txt", root),
		},
		{
			name: "long lines: the context shrinks to fit the output budget",
			args: `{"pattern":"MATCH here"}`,
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, note(25)) || !strings.Contains(out, "L75- 75 ") || strings.Contains(out, "L74-") ||
					!strings.Contains(out, "L125- 125 ") || strings.Contains(out, "L126-") || len(out) > autoContextBudget {
					t.Errorf("output of %d bytes:\n%.300s", len(out), out)
				}
			},
		},
		{
			name:  "dir_path a file: that file is searched",
			args:  `{"pattern":"func Sub","dir_path":"file/f.go","context":1}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"func Sub\" in path \"%s/file/f.go\":\n---\nFile: f.go\nL7- line 7\nL8: func Sub(a, b int) int {\nL9- line 9\n---", root),
		},
		{
			name:  "dir_path a file, with context added",
			args:  `{"pattern":"func Sub","dir_path":"file/f.go"}`,
			exact: fmt.Sprintf("Found 1 match for pattern \"func Sub\" in path \"%s/file/f.go\"", root) + note(50) + "File: f.go\n" + span(1, 20, 8, "func Sub(a, b int) int {") + "---",
		},
		{
			name:  "dir_path a file the agent ignores",
			args:  `{"pattern":"MATCH","dir_path":"hidden/skip.txt"}`,
			exact: fmt.Sprintf("No matches found for pattern \"MATCH\" in path \"%s/hidden/skip.txt\".", root),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := grepAll(t, ws, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, res.Output)
				return
			}
			if res.Output != tt.exact {
				t.Fatalf("output:\n%s\nwant:\n%s", res.Output, tt.exact)
			}
		})
	}
}
