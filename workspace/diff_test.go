package workspace_test

import (
	"strings"
	"testing"

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
