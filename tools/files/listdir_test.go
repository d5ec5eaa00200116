package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestListDirectory(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"b.txt":            "12345",
		"A.md":             strings.Repeat("x", 1536),
		"app.log":          "log\n",
		"secret.key":       "k\n",
		"scratch.tmp":      "t\n",
		"zdir/x":           "",
		"adir/y":           "",
		"node_modules/m":   "",
		".git/HEAD":        "ref\n",
		".gitignore":       "*.log\n",
		".geminiignore":    "secret.key\n",
		".agentlsignore":   "*.tmp\n",
		"sub/inner.txt":    "i\n",
		"sub/.gitignore":   "inner.txt\n",
		"emptydir/.keep":   "",
		"bigdir/big.bin":   "",
		"links/target.txt": "t\n",
	})
	if err := os.Truncate(filepath.Join(root, "bigdir/big.bin"), 3<<20); err != nil {
		t.Fatal(err)
	}
	out := outsideDir(t)
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "links/outside"))
	symlink(t, "target.txt", filepath.Join(root, "links/inside"))
	symlink(t, filepath.Join(root, "adir"), filepath.Join(root, "links/dirlink"))
	symlink(t, "nowhere", filepath.Join(root, "links/broken"))

	cases := []struct {
		name   string
		args   string
		output string
	}{
		{
			name: "root",
			args: `{"dir_path": "."}`,
			output: "Directory listing for " + root + ":\n" +
				"[DIR] adir\n[DIR] bigdir\n[DIR] emptydir\n[DIR] links\n[DIR] sub\n[DIR] zdir\n" +
				".agentlsignore (6 B)\n.geminiignore (11 B)\n.gitignore (6 B)\nA.md (1.5 KB)\nb.txt (5 B)\n\n(5 ignored)",
		},
		{
			name: "absolute path, sizes",
			args: fmt.Sprintf(`{"dir_path": %q}`, filepath.Join(root, "bigdir")),
			output: "Directory listing for " + filepath.Join(root, "bigdir") + ":\n" +
				"big.bin (3.0 MB)",
		},
		{
			name: "without git ignore",
			args: `{"dir_path": ".", "respect_git_ignore": false}`,
			output: "Directory listing for " + root + ":\n" +
				"[DIR] adir\n[DIR] bigdir\n[DIR] emptydir\n[DIR] links\n[DIR] sub\n[DIR] zdir\n" +
				".agentlsignore (6 B)\n.geminiignore (11 B)\n.gitignore (6 B)\nA.md (1.5 KB)\napp.log (4 B)\nb.txt (5 B)\n\n(4 ignored)",
		},
		{
			name: "without gemini ignore, with patterns",
			args: `{"dir_path": ".", "ignore": ["*.md", "zdir/", ".*ignore"], "file_filtering_options": {"respect_gemini_ignore": false, "respect_git_ignore": true}}`,
			output: "Directory listing for " + root + ":\n" +
				"[DIR] adir\n[DIR] bigdir\n[DIR] emptydir\n[DIR] links\n[DIR] sub\n" +
				"b.txt (5 B)\nscratch.tmp (2 B)\nsecret.key (2 B)\n\n(8 ignored)",
		},
		{
			name:   "nested gitignore",
			args:   `{"dir_path": "sub"}`,
			output: "Directory listing for " + filepath.Join(root, "sub") + ":\n.gitignore (10 B)\n\n(1 ignored)",
		},
		{
			name:   "symlinks",
			args:   `{"dir_path": "links"}`,
			output: "Directory listing for " + filepath.Join(root, "links") + ":\n[DIR] dirlink\nbroken (broken symlink)\ninside (2 B)\noutside (symlink to a path outside the workspace)\ntarget.txt (2 B)",
		},
		{
			name:   "empty",
			args:   `{"dir_path": "emptydir", "ignore": [".keep"]}`,
			output: "Directory " + filepath.Join(root, "emptydir") + " is empty.\n\n(1 ignored)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustCall(t, NewListDirectory(ws), c.args)
			if res.Output != c.output {
				t.Errorf("output\n%s\nwant\n%s", res.Output, c.output)
			}
			if res.Summary == "" {
				t.Error("no summary")
			}
		})
	}
}

func TestListDirectoryRefusals(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "x\n"})
	dirs := []string{root}
	mustFail(t, NewListDirectory(ws), `{"dir_path": "f.txt"}`, tools.ErrInvalidParams, dirs, "not a directory", "read_file")
	mustFail(t, NewListDirectory(ws), `{"dir_path": "missing"}`, tools.ErrFileNotFound, dirs, "missing")
}

func TestListDirectoryCap(t *testing.T) {
	files := map[string]string{}
	for i := range maxListEntries + 5 {
		files[fmt.Sprintf("f%05d", i)] = ""
	}
	ws, _ := testutil.Workspace(t, files)
	res := mustCall(t, NewListDirectory(ws), `{"dir_path": "."}`)
	if !strings.Contains(res.Output, "... and 5 more entries not shown") || strings.Contains(res.Output, fmt.Sprintf("f%05d", maxListEntries)) {
		t.Errorf("cap not applied: %s", res.Output[len(res.Output)-200:])
	}
}
