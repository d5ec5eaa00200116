package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestGlob(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"src/main.go":               "",
		"src/Util.GO":               "",
		"src/sub/deep.go":           "",
		"src/app/[id]/page.tsx":     "",
		"src/app/x/page.tsx":        "",
		"web/a.ts":                  "",
		"web/b.tsx":                 "",
		"docs/readme.md":            "",
		".hidden/h.txt":             "",
		"notes.txt":                 "",
		".gitignore":                "build/\n*.log\n!keep.log\n",
		"a.log":                     "",
		"src/b.log":                 "",
		"keep.log":                  "",
		"build/gen.go":              "",
		".geminiignore":             "secret/\n",
		"secret/s.go":               "",
		"node_modules/m/index.go":   "",
		"real/target.go":            "",
		"recent/r1.txt":             "",
		"recent/r2.txt":             "",
		"recent/r3.txt":             "",
		"recent/a_old.txt":          "",
		"recent/b_old.txt":          "",
		"recent/z_old.txt":          "",
		"recent/sub/only_depth.txt": "",
	})
	if err := os.Symlink(filepath.Join(root, "real", "target.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-72 * time.Hour)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	for name, age := range map[string]time.Duration{
		"recent/r1.txt": time.Hour, "recent/r2.txt": 2 * time.Hour, "recent/r3.txt": 10 * time.Minute,
		"recent/a_old.txt": 50 * time.Hour, "recent/b_old.txt": 60 * time.Hour, "recent/z_old.txt": 30 * time.Hour,
	} {
		ts := now.Add(-age)
		if err := os.Chtimes(filepath.Join(root, name), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	abs := func(names ...string) string {
		for i, n := range names {
			names[i] = filepath.Join(root, n)
		}
		return strings.Join(names, "\n")
	}
	found := func(pattern, dir string, names ...string) string {
		return fmt.Sprintf("Found %d file(s) matching \"%s\" within %s, sorted by modification time (newest first):\n%s", len(names), pattern, dir, abs(names...))
	}
	// noted puts what ignore rules left out into an expected output.
	noted := func(want string, files, dirs int64) string {
		note := ignoredNote(files, dirs)
		if before, after, ok := strings.Cut(want, ", sorted by"); ok {
			return before + note + ", sorted by" + after
		}
		return want + note
	}
	tests := []struct{ name, args, want string }{
		{"recent files first by time, then the rest by path", `{"pattern":"recent/*.txt"}`,
			found("recent/*.txt", root, "recent/r3.txt", "recent/r1.txt", "recent/r2.txt", "recent/a_old.txt", "recent/b_old.txt", "recent/z_old.txt")},
		{"doublestar, ignore rules, default excludes, links to files", `{"pattern":"**/*.go"}`,
			noted(found("**/*.go", root, "link.go", "real/target.go", "src/Util.GO", "src/main.go", "src/sub/deep.go"), 0, 3)},
		{"case-sensitive", `{"pattern":"**/*.go","case_sensitive":true}`,
			noted(found("**/*.go", root, "link.go", "real/target.go", "src/main.go", "src/sub/deep.go"), 0, 3)},
		{"case-insensitive fixed directories", `{"pattern":"SRC/*.go"}`,
			found("SRC/*.go", root, "src/Util.GO", "src/main.go")},
		{"gitignore can be turned off", `{"pattern":"**/*.go","respect_git_ignore":false,"case_sensitive":true}`,
			noted(found("**/*.go", root, "build/gen.go", "link.go", "real/target.go", "src/main.go", "src/sub/deep.go"), 0, 2)},
		{"geminiignore can be turned off", `{"pattern":"**/*.go","respect_gemini_ignore":false,"case_sensitive":true}`,
			noted(found("**/*.go", root, "link.go", "real/target.go", "secret/s.go", "src/main.go", "src/sub/deep.go"), 0, 2)},
		{"both off, default excludes stay", `{"pattern":"**/*.go","respect_gemini_ignore":false,"respect_git_ignore":false,"case_sensitive":true}`,
			noted(found("**/*.go", root, "build/gen.go", "link.go", "real/target.go", "secret/s.go", "src/main.go", "src/sub/deep.go"), 0, 1)},
		{"ignored files that match are counted", `{"pattern":"**/*.log"}`,
			noted(found("**/*.log", root, "keep.log"), 2, 3)},
		{"ignored files that do not match are not", `{"pattern":"keep.*"}`, found("keep.*", root, "keep.log")},
		{"braces", `{"pattern":"web/*.{ts,tsx}"}`, found("web/*.{ts,tsx}", root, "web/a.ts", "web/b.tsx")},
		{"a pattern naming an existing file is taken literally", `{"pattern":"src/app/[id]/page.tsx"}`,
			found("src/app/[id]/page.tsx", root, "src/app/[id]/page.tsx")},
		{"hidden files match", `{"pattern":"**/h.txt"}`, noted(found("**/h.txt", root, ".hidden/h.txt"), 0, 3)},
		{"one level only", `{"pattern":"*.txt"}`, found("*.txt", root, "notes.txt")},
		{"dir_path", `{"pattern":"*.go","dir_path":"src"}`, found("*.go", filepath.Join(root, "src"), "src/Util.GO", "src/main.go")},
		{"absolute pattern inside the directory", fmt.Sprintf(`{"pattern":%q}`, root+"/src/**/deep.go"),
			found(root+"/src/**/deep.go", root, "src/sub/deep.go")},
		{"leading ./", `{"pattern":"./docs/*.md"}`, found("./docs/*.md", root, "docs/readme.md")},
		{"wildcard directories", `{"pattern":"src/*/*/page.tsx"}`, found("src/*/*/page.tsx", root, "src/app/[id]/page.tsx", "src/app/x/page.tsx")},
		{"nothing found is not an error", `{"pattern":"**/*.rs"}`, noted(fmt.Sprintf("No files found matching pattern \"**/*.rs\" within %s", root), 0, 3)},
		{"nothing found, and nothing left out", `{"pattern":"src/*.rs"}`, fmt.Sprintf("No files found matching pattern \"src/*.rs\" within %s", root)},
		{"an ignored fixed directory finds nothing", `{"pattern":"node_modules/**/*.go"}`,
			fmt.Sprintf("No files found matching pattern \"node_modules/**/*.go\" within %s", root)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := testutil.Call(context.Background(), t, &globTool{ws: ws}, tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tt.want {
				t.Fatalf("output:\n%s\nwant:\n%s", res.Output, tt.want)
			}
		})
	}
}

func TestGlobBadInput(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"dir/f.txt": ""})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       tools.ErrorType
	}{
		{"missing pattern", `{}`, tools.ErrInvalidParams},
		{"blank pattern", `{"pattern":"  "}`, tools.ErrInvalidParams},
		{"invalid pattern", `{"pattern":"[a"}`, tools.ErrInvalidParams},
		{"pattern climbing out", `{"pattern":"../*"}`, tools.ErrInvalidParams},
		{"absolute pattern outside", fmt.Sprintf(`{"pattern":%q}`, outside+"/*"), tools.ErrPathNotInWorkspace},
		{"dir_path outside", `{"pattern":"*","dir_path":".."}`, tools.ErrPathNotInWorkspace},
		{"dir_path through a symlink out", `{"pattern":"*","dir_path":"escape"}`, tools.ErrPathNotInWorkspace},
		{"dir_path a file", `{"pattern":"*","dir_path":"dir/f.txt"}`, tools.ErrInvalidParams},
		{"dir_path missing", `{"pattern":"*","dir_path":"nope"}`, tools.ErrFileNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testutil.Call(context.Background(), t, &globTool{ws: ws}, tt.args, nil)
			if got := testutil.ErrorType(err); got != tt.want {
				t.Fatalf("error %v (type %q), want type %q", err, got, tt.want)
			}
		})
	}
}

func TestSortHits(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	hits := []globHit{
		{"/b", ago(48 * time.Hour)},
		{"/recent-old", ago(23 * time.Hour)},
		{"/a", ago(25 * time.Hour)},
		{"/newest", ago(time.Minute)},
		{"/tie-b", ago(time.Hour)},
		{"/tie-a", ago(time.Hour)},
	}
	sortHits(hits, now)
	var got []string
	for _, h := range hits {
		got = append(got, h.path)
	}
	if want := "/newest /tie-a /tie-b /recent-old /a /b"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestGlobCancelled(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"a/b.txt": ""})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := testutil.Call(ctx, t, &globTool{ws: ws}, `{"pattern":"**/*.txt"}`, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestGlobIgnoredNote checks the wording of glob's note of what ignore rules left out
// (TestGlob builds its expected outputs with ignoredNote, so it cannot see the words).
func TestGlobIgnoredNote(t *testing.T) {
	const why = " left out by .gitignore, .geminiignore or .agentlsignore rules, or as dependency or version-control directories such as node_modules and .git)"
	cases := []struct {
		files, dirs int64
		want        string
	}{
		{0, 0, ""},
		{1, 0, " (1 matching file was" + why},
		{3, 0, " (3 matching files were" + why},
		{0, 1, " (1 directory that could hold more was" + why},
		{0, 2, " (2 directories that could hold more were" + why},
		{1, 1, " (1 matching file and 1 directory that could hold more were" + why},
		{3, 2, " (3 matching files and 2 directories that could hold more were" + why},
	}
	for _, tc := range cases {
		if got := ignoredNote(tc.files, tc.dirs); got != tc.want {
			t.Errorf("ignoredNote(%d, %d) = %q, want %q", tc.files, tc.dirs, got, tc.want)
		}
	}
}
