package files

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestReadManyFiles(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"src/b.go":            "package b\n",
		"src/a.go":            "package a\n",
		"src/sub/c.go":        "package c\n",
		"src/sub/c_test.go":   "package c_test\n",
		"src/notes.txt":       "notes\n",
		"docs/intro.md":       "# Intro\n",
		"docs/deep/more.md":   "# More\n",
		"dist/bundle.js":      "bundle\n",
		"node_modules/m/i.js": "module\n",
		"web/app.js":          "app\n",
		"archive.zip":         "PK\x03\x04zip",
		"ignored.gen.go":      "package gen\n",
		".gitignore":          "*.gen.go\n",
		".env":                "TOKEN=secret\n",
		"temp/x.go":           "package temp\n",
		".geminiignore":       "private/\n",
		"private/p.md":        "# Private\n",
	})
	cases := []struct {
		name   string
		args   string
		output string   // exact when set
		has    []string // else these substrings
		hasNot []string
	}{
		{
			name: "glob, sorted",
			args: `{"include": ["src/**/*.go"]}`,
			output: "--- src/a.go ---\npackage a\n\n--- src/b.go ---\npackage b\n\n--- src/sub/c.go ---\npackage c\n\n" +
				"--- src/sub/c_test.go ---\npackage c_test\n\n--- End of content ---",
		},
		{
			name:   "several includes, deduplicated",
			args:   `{"include": ["src/a.go", "src/*.go", "docs/intro.md"]}`,
			output: "--- docs/intro.md ---\n# Intro\n\n--- src/a.go ---\npackage a\n\n--- src/b.go ---\npackage b\n\n--- End of content ---",
		},
		{
			name:   "directory",
			args:   `{"include": ["docs/"]}`,
			output: "--- docs/deep/more.md ---\n# More\n\n--- docs/intro.md ---\n# Intro\n\n--- End of content ---",
		},
		{
			name:   "directory, not recursive",
			args:   `{"include": ["docs"], "recursive": false}`,
			output: "--- docs/intro.md ---\n# Intro\n\n--- End of content ---",
		},
		{
			name:   "absolute glob",
			args:   fmt.Sprintf(`{"include": [%q]}`, filepath.Join(root, "docs", "*.md")),
			output: "--- docs/intro.md ---\n# Intro\n\n--- End of content ---",
		},
		{
			name:   "exclude",
			args:   `{"include": ["**/*.go"], "exclude": ["**/*_test.go", "temp/", "b.go"]}`,
			output: "--- src/a.go ---\npackage a\n\n--- src/sub/c.go ---\npackage c\n\n--- End of content ---",
		},
		{
			name:   "default excludes",
			args:   `{"include": ["**/*"]}`,
			has:    []string{"--- web/app.js ---", "--- src/a.go ---", "--- .gitignore ---", "2 matching files were left out by the default excludes"},
			hasNot: []string{"bundle", "module", "TOKEN", "archive.zip", "package gen"},
		},
		{
			name:   "without default excludes or git ignore",
			args:   `{"include": ["**/*"], "useDefaultExcludes": false, "file_filtering_options": {"respect_git_ignore": false}}`,
			has:    []string{"--- dist/bundle.js ---", "--- node_modules/m/i.js ---", "--- .env ---", "--- ignored.gen.go ---", "- archive.zip: a binary file, not text"},
			hasNot: []string{"default excludes"},
		},
		{
			name:   "geminiignore honoured",
			args:   `{"include": ["**/*.md"]}`,
			output: "--- docs/deep/more.md ---\n# More\n\n--- docs/intro.md ---\n# Intro\n\n--- End of content ---",
		},
		{
			name:   "geminiignore turned off",
			args:   `{"include": ["**/*.md"], "file_filtering_options": {"respect_gemini_ignore": false}}`,
			output: "--- docs/deep/more.md ---\n# More\n\n--- docs/intro.md ---\n# Intro\n\n--- private/p.md ---\n# Private\n\n--- End of content ---",
		},
		{
			name:   "include reaching into an excluded directory",
			args:   `{"include": ["dist/**/*.js"]}`,
			output: "--- dist/bundle.js ---\nbundle\n\n--- End of content ---",
		},
		{
			name:   "git ignored by pattern, literal path honoured",
			args:   `{"include": ["*.go", "ignored.gen.go"]}`,
			output: "--- ignored.gen.go ---\npackage gen\n\n--- End of content ---",
		},
		{
			name:   "no match",
			args:   `{"include": ["**/*.rs", "missing.txt"]}`,
			output: "No files matching the criteria were found or all were skipped.\n\nSkipped 1 file:\n- missing.txt: not found",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustCall(t, NewReadManyFiles(ws), c.args)
			if c.output != "" && res.Output != c.output {
				t.Errorf("output\n%s\nwant\n%s", res.Output, c.output)
			}
			for _, h := range c.has {
				if !strings.Contains(res.Output, h) {
					t.Errorf("output lacks %q:\n%s", h, res.Output)
				}
			}
			for _, h := range c.hasNot {
				if strings.Contains(res.Output, h) {
					t.Errorf("output has %q:\n%s", h, res.Output)
				}
			}
		})
	}
}

func TestReadManyFilesSkips(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"img/logo.png":   string(tinyPNG),
		"img/notes.txt":  "about the logo\n",
		"data/bin.dat":   "\x00\x01\x02",
		"data/latin.txt": "caf\xe9\n",
		"data/ok.txt":    "ok\n",
		"big/lines.txt":  numbered(1, 2500),
		"big/long.txt":   strings.Repeat("x", 3000) + "\n",
	})
	out := outsideDir(t)
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "data/zlink.txt"))

	t.Run("media not requested", func(t *testing.T) {
		res := mustCall(t, NewReadManyFiles(ws), `{"include": ["img/*"]}`)
		want := "--- img/notes.txt ---\nabout the logo\n\n--- End of content ---\n\nSkipped 1 file:\n" +
			"- img/logo.png: image file not requested explicitly; name it or its extension (e.g. *.png) in include to read it"
		if res.Output != want || len(res.Parts) != 0 {
			t.Errorf("output\n%s\nparts %d", res.Output, len(res.Parts))
		}
	})
	for _, inc := range []string{`["img/*.png"]`, `["img/logo.png"]`, `["**/*.png"]`} {
		t.Run("media requested "+inc, func(t *testing.T) {
			res := mustCall(t, NewReadManyFiles(ws), `{"include": `+inc+`}`)
			if len(res.Parts) != 1 || res.Parts[0].MIMEType != "image/png" || !bytes.Equal(res.Parts[0].Data, tinyPNG) {
				t.Fatalf("parts %+v", res.Parts)
			}
			if !strings.HasPrefix(res.Output, "--- img/logo.png ---\n[image file, image/png") {
				t.Errorf("output %q", res.Output)
			}
		})
	}
	t.Run("not text, outside", func(t *testing.T) {
		res := mustCall(t, NewReadManyFiles(ws), `{"include": ["data/*"]}`)
		want := "--- data/ok.txt ---\nok\n\n--- End of content ---\n\nSkipped 3 files:\n" +
			"- data/bin.dat: a binary file, not text\n" +
			"- data/latin.txt: not valid UTF-8 text (byte 0xE9 on line 1 is not UTF-8)\n" +
			"- data/zlink.txt: symlink to a path outside the workspace"
		if res.Output != want {
			t.Errorf("output\n%s\nwant\n%s", res.Output, want)
		}
	})
	t.Run("per-file caps", func(t *testing.T) {
		res := mustCall(t, NewReadManyFiles(ws), `{"include": ["big/*.txt"]}`)
		for _, h := range []string{
			"--- big/lines.txt ---\nline 1\n", "line 2000\n\n[File truncated: showing lines 1-2000 of 2500 total lines. Use read_file with start_line: 2001 to read more.]\n",
			strings.Repeat("x", 2000) + truncatedMarker + "\n\n[Lines longer than 2000 characters",
		} {
			if !strings.Contains(res.Output, h) {
				t.Errorf("output lacks %q", h)
			}
		}
		if strings.Contains(res.Output, "line 2001") {
			t.Error("more than 2000 lines returned")
		}
	})
}

func TestReadManyFilesTotalCap(t *testing.T) {
	chunk := strings.Repeat(strings.Repeat("y", 99)+"\n", 4000) // 400,000 bytes in 4000 lines... cut to 2000
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d.txt", i)] = chunk
	}
	files["g.txt"] = "small\n"
	ws, _ := testutil.Workspace(t, files)
	res := mustCall(t, NewReadManyFiles(ws), `{"include": ["*.txt"]}`)
	if len(res.Output) > maxManyTextBytes+4096 {
		t.Errorf("output is %d bytes, over the cap", len(res.Output))
	}
	// Each file contributes 200,000 bytes after the 2000-line cut: five fit in 1 MB.
	for i := range 5 {
		if !strings.Contains(res.Output, fmt.Sprintf("--- f%d.txt ---", i)) {
			t.Errorf("f%d.txt missing", i)
		}
	}
	for _, h := range []string{"--- g.txt ---\nsmall\n", "- f5.txt: the output limit of 1.0 MB for one call was reached"} {
		if !strings.Contains(res.Output, h) {
			t.Errorf("output lacks %q", h)
		}
	}
	if !strings.Contains(res.Summary, "(1 skipped)") {
		t.Errorf("summary %q", res.Summary)
	}
}

func TestReadManyFilesOverlay(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "disk\n"})
	ws.Open(filepath.Join(root, "a.txt"), 1, "editor\n")
	ws.Open(filepath.Join(root, "unsaved.txt"), 1, "unsaved\n")
	res := mustCall(t, NewReadManyFiles(ws), `{"include": ["*.txt", "unsaved.txt"]}`)
	if want := "--- a.txt ---\neditor\n\n--- unsaved.txt ---\nunsaved\n\n--- End of content ---"; res.Output != want {
		t.Errorf("output\n%s\nwant\n%s", res.Output, want)
	}
}

func TestReadManyFilesDescribe(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "a\n"})
	inv, err := testutil.Build(t, NewReadManyFiles(ws), `{"include": ["a.txt", "src/**", "b", "c"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(); d != "Read files: a.txt, src/**, b, and 1 more" {
		t.Errorf("Describe = %q", d)
	}
	if l := inv.Locations(); len(l) != 4 || l[0].Path != filepath.Join(root, "a.txt") || l[1].Path != filepath.Join(root, "src") {
		t.Errorf("Locations = %+v", l)
	}
	var _ tools.Invocation = inv
}
