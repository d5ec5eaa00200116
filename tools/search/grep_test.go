package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// engine is one way of running grep_search.
type engine struct {
	name  string
	rg    string // "" for the Go search
	chunk int    // read buffer of the Go search; 0 for the default
}

// engines returns the Go search with its normal buffer and with a tiny one (every
// file is then read in many pieces, which exercises the context carried between
// them) and, when rg is installed, the rg search.
func engines(t *testing.T) []engine {
	t.Helper()
	es := []engine{{name: "go"}, {name: "go-tiny-buffer", chunk: 7}}
	if rg, err := exec.LookPath("rg"); err == nil {
		es = append(es, engine{name: "rg", rg: rg})
	} else {
		t.Log("rg is not installed: only the Go search is tested")
	}
	return es
}

func (e engine) tool(ws *workspace.Workspace) *grepTool {
	return &grepTool{ws: ws, rg: e.rg, chunk: e.chunk, strict: true}
}

// grepAll runs args with every engine, requires the same outcome from each, and
// returns it.
func grepAll(t *testing.T, ws *workspace.Workspace, args string) (*tools.Result, error) {
	t.Helper()
	var (
		first    *tools.Result
		firstErr error
	)
	for i, e := range engines(t) {
		res, err := testutil.Call(context.Background(), t, e.tool(ws), args, nil)
		if i == 0 {
			first, firstErr = res, err
			continue
		}
		if (err == nil) != (firstErr == nil) {
			t.Fatalf("%s: engines disagree on failure: go: %v, %s: %v", args, firstErr, e.name, err)
		}
		if err != nil {
			if testutil.ErrorType(err) != testutil.ErrorType(firstErr) {
				t.Fatalf("%s: error types differ: go: %v, %s: %v", args, firstErr, e.name, err)
			}
			continue
		}
		if res.Output != first.Output || res.Summary != first.Summary {
			t.Fatalf("%s: output differs\n--- go:\n%s\n--- %s:\n%s", args, first.Output, e.name, res.Output)
		}
	}
	return first, firstErr
}

func utf16le(s string) string {
	u := utf16.Encode([]rune(s))
	b := []byte{0xFF, 0xFE}
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return string(b)
}

// fixture returns a tree with something for every rule the search follows.
func fixture() map[string]string {
	return map[string]string{
		"src/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"Hello, World\")\n}\n\n" +
			"func fooHandler(w int) {}\nfunc BarHandler(x int) {}\n\n// TODO: hello again\n",
		"src/util/strings.go":       "package util\n\n// Hello from util\nfunc helper() string { return \"hello\" }\n",
		"src/app.ts":                "export const hello = 1;\n",
		"src/app.tsx":               "export const Hello = () => null;\n",
		"src/readme.md":             "# Hello\n",
		"src/gen/gen.go":            "// hello generated\n",
		"top.txt":                   "hello top\nline two\n",
		".hidden/secret.txt":        "hello hidden\n",
		"node_modules/pkg/index.js": "hello from node_modules\n",
		".git/config":               "hello git\n",
		".gitignore":                "build/\n*.log\n/src/gen/\n",
		"build/out.txt":             "hello build\n",
		"debug.log":                 "hello log\n",
		".geminiignore":             "private/\n",
		"private/keys.txt":          "hello private\n",
		"nested/.agentlsignore":     "skip.txt\n",
		"nested/skip.txt":           "hello skipped\n",
		"nested/keep.txt":           "hello kept\n",
		"bin/data.bin":              "hello\x00binary\n",
		"bin/late.bin":              strings.Repeat("hello text line\n", 20000) + "\x00",
		// A NUL byte past the first 64 KiB: found by a search that reads the whole
		// file, not by one that stops at the first match (as names_only does).
		"bin/tail.bin":    "hello tail\n" + strings.Repeat("filler\n", 12000) + "\x00\n",
		"enc/crlf.txt":    "hello crlf  \r\nsecond\r\n",
		"enc/bom.txt":     "\xEF\xBB\xBFhello bom\n",
		"enc/utf16.txt":   utf16le("first\r\nhello utf16\r\n"),
		"enc/latin1.txt":  "hello caf\xe9\n",
		"enc/kelvin.txt":  "\u212Aelvin\n",
		"enc/unicode.txt": "café hello\n",
		"long/long.txt":   strings.Repeat("x", 2000) + "hello" + strings.Repeat("y", 2000) + "\n",
	}
}

func TestGrep(t *testing.T) {
	ws, root := testutil.Workspace(t, fixture())
	header := func(n int, pattern string) string {
		return fmt.Sprintf("Found %d %s for pattern \"%s\" in path \"%s\"", n, plural(n, "match", "matches"), pattern, root)
	}
	tests := []struct {
		name    string
		args    string
		want    []string // lines the output holds
		wantNot []string // substrings it must not hold
		exact   string   // the whole output, if set
	}{
		{
			name: "case-insensitive by default, ignore rules and binaries respected",
			args: `{"pattern":"hello","total_max_matches":100000}`,
			want: []string{
				"File: src/main.go", "L6: \tfmt.Println(\"Hello, World\")", "L12: // TODO: hello again",
				"File: .hidden/secret.txt", "File: nested/keep.txt", "File: src/app.tsx",
				"File: enc/crlf.txt", "L1: hello crlf",
				"File: enc/bom.txt", "L1: hello bom",
				"File: enc/utf16.txt", "L2: hello utf16",
				"File: enc/latin1.txt", "L1: hello caf\uFFFD",
			},
			wantNot: []string{"node_modules", ".git/", "build/", "debug.log", "private", "skip.txt", "bin/", "src/gen", "crlf  "},
		},
		{
			name:  "case-sensitive",
			args:  `{"pattern":"Hello","case_sensitive":true}`,
			exact: header(4, "Hello") + ":\n---\nFile: src/app.tsx\nL1: export const Hello = () => null;\n---\nFile: src/main.go\nL6: \tfmt.Println(\"Hello, World\")\n---\nFile: src/readme.md\nL1: # Hello\n---\nFile: src/util/strings.go\nL3: // Hello from util\n---",
		},
		{
			name:  "regular expression",
			args:  `{"pattern":"func \\w+Handler\\(","case_sensitive":true,"context":0}`,
			exact: header(2, `func \w+Handler\(`) + ":\n---\nFile: src/main.go\nL9: func fooHandler(w int) {}\nL10: func BarHandler(x int) {}\n---",
		},
		{
			name:  "fixed strings take metacharacters literally",
			args:  `{"pattern":"Println(\"","fixed_strings":true,"context":0}`,
			exact: header(1, `Println("`) + ":\n---\nFile: src/main.go\nL6: \tfmt.Println(\"Hello, World\")\n---",
		},
		{
			name:    "include by extension",
			args:    `{"pattern":"hello","include_pattern":"*.go"}`,
			want:    []string{"File: src/main.go", "File: src/util/strings.go", `(filter: "*.go")`},
			wantNot: []string{"app.ts", "top.txt"},
		},
		{
			name:    "include, the older name of include_pattern",
			args:    `{"pattern":"hello","include":"*.go"}`,
			want:    []string{"File: src/main.go", "File: src/util/strings.go", `(filter: "*.go")`},
			wantNot: []string{"app.ts", "top.txt"},
		},
		{
			name:    "include_pattern wins over include",
			args:    `{"pattern":"hello","include_pattern":"*.go","include":"*.ts"}`,
			want:    []string{"File: src/main.go", `(filter: "*.go")`},
			wantNot: []string{"app.ts"},
		},
		{
			name:    "include with braces",
			args:    `{"pattern":"hello","include_pattern":"**/*.{ts,tsx}"}`,
			want:    []string{"File: src/app.ts", "File: src/app.tsx"},
			wantNot: []string{"main.go"},
		},
		{
			name:    "include a subtree",
			args:    `{"pattern":"hello","include_pattern":"src/util/**"}`,
			want:    []string{"File: src/util/strings.go"},
			wantNot: []string{"main.go", "top.txt"},
		},
		{
			name:    "include anchored at the searched directory",
			args:    `{"pattern":"hello","include_pattern":"/top.txt"}`,
			want:    []string{"File: top.txt"},
			wantNot: []string{"main.go"},
		},
		{
			name:    "include negated",
			args:    `{"pattern":"hello","include_pattern":"!{src,enc,long}","total_max_matches":1000}`,
			want:    []string{"File: top.txt", "File: nested/keep.txt"},
			wantNot: []string{"src/", "enc/"},
		},
		{
			name:  "include matching only directories matches no file",
			args:  `{"pattern":"hello","include_pattern":"src/"}`,
			exact: fmt.Sprintf("No matches found for pattern \"hello\" in path \"%s\" (filter: \"src/\").", root),
		},
		{
			name:  "dir_path relative, with the root's anchored ignore pattern applied below it",
			args:  `{"pattern":"hello","dir_path":"src","case_sensitive":true,"context":0}`,
			exact: fmt.Sprintf("Found 3 matches for pattern \"hello\" in path \"%s\":\n---\nFile: app.ts\nL1: export const hello = 1;\n---\nFile: main.go\nL12: // TODO: hello again\n---\nFile: util/strings.go\nL4: func helper() string { return \"hello\" }\n---", filepath.Join(root, "src")),
		},
		{
			name:    "no_ignore searches git-ignored files but not agent-ignored ones",
			args:    `{"pattern":"hello","no_ignore":true,"total_max_matches":1000}`,
			want:    []string{"File: build/out.txt", "File: debug.log", "File: src/gen/gen.go"},
			wantNot: []string{"private", "skip.txt", "node_modules", ".git/"},
		},
		{
			name:  "names only",
			args:  `{"pattern":"hello","names_only":true,"include_pattern":"*.go"}`,
			exact: fmt.Sprintf("Found 2 files with matches for pattern \"hello\" in path \"%s\" (filter: \"*.go\"):\nsrc/main.go\nsrc/util/strings.go", root),
		},
		{
			name:  "exclude_pattern drops lines",
			args:  `{"pattern":"hello","include_pattern":"*.go","exclude_pattern":"TODO","context":0}`,
			exact: header(3, "hello") + ` (filter: "*.go"):` + "\n---\nFile: src/main.go\nL6: \tfmt.Println(\"Hello, World\")\n---\nFile: src/util/strings.go\nL3: // Hello from util\nL4: func helper() string { return \"hello\" }\n---",
		},
		{
			name: "Unicode case folding (Kelvin sign) but ASCII \\w, as in Go",
			args: `{"pattern":"kelvin|caf\\w","total_max_matches":1000}`,
			want: []string{"File: enc/kelvin.txt", "L1: \u212Aelvin"},
			// \w is ASCII in Go, so "café" does not match caf\w; rg gets an explicit class.
			wantNot: []string{"unicode.txt"},
		},
		{
			name:  "anchors match at line boundaries",
			args:  `{"pattern":"^line two$|\\Ahello top\\z","include_pattern":"top.txt","context":0}`,
			exact: header(2, `^line two$|\Ahello top\z`) + ` (filter: "top.txt"):` + "\n---\nFile: top.txt\nL1: hello top\nL2: line two\n---",
		},
		{
			name:  "empty matches select every line",
			args:  `{"pattern":"x*","include_pattern":"top.txt","context":0}`,
			exact: header(2, "x*") + ` (filter: "top.txt"):` + "\n---\nFile: top.txt\nL1: hello top\nL2: line two\n---",
		},
		{
			name: "long lines are cut around the match",
			args: `{"pattern":"hello","include_pattern":"long.txt"}`,
			want: []string{"L1: …" + strings.Repeat("x", 100) + "hello" + strings.Repeat("y", 395) + "… [line truncated]"},
		},
		{
			name:  "a binary file with its NUL byte past the first buffer is skipped whole",
			args:  `{"pattern":"hello text","no_ignore":true}`,
			exact: fmt.Sprintf("No matches found for pattern \"hello text\" in path \"%s\".", root),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := grepAll(t, ws, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if tt.exact != "" && res.Output != tt.exact {
				t.Fatalf("output:\n%s\nwant:\n%s", res.Output, tt.exact)
			}
			lines := strings.Split(res.Output, "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if l == w || strings.Contains(w, "filter") && strings.Contains(l, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("output lacks line %q:\n%s", w, res.Output)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(res.Output, w) {
					t.Errorf("output holds %q:\n%s", w, res.Output)
				}
			}
		})
	}
}

func TestGrepContext(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"c.txt": "a\nb\nM1\nc\nd\ne\nf\nM2\nM3\ng\nh\ni\nj\nk\nM4\n",
	})
	head := func(n int) string {
		return fmt.Sprintf("Found %d %s for pattern \"m\\d\" in path \"%s\":\n---\nFile: c.txt\n", n, plural(n, "match", "matches"), root)
	}
	tests := []struct{ name, args, want string }{
		{"no context", `{"pattern":"m\\d"}`, head(4) + "L3: M1\nL8: M2\nL9: M3\nL15: M4\n---"},
		{"context", `{"pattern":"m\\d","context":1}`,
			head(4) + "L2- b\nL3: M1\nL4- c\nL7- f\nL8: M2\nL9: M3\nL10- g\nL14- k\nL15: M4\n---"},
		{"before wins over context", `{"pattern":"m\\d","context":2,"before":0}`,
			head(4) + "L3: M1\nL4- c\nL5- d\nL8: M2\nL9: M3\nL10- g\nL11- h\nL15: M4\n---"},
		{"after", `{"pattern":"m\\d","after":3}`,
			head(4) + "L3: M1\nL4- c\nL5- d\nL6- e\nL8: M2\nL9: M3\nL10- g\nL11- h\nL12- i\nL15: M4\n---"},
		{"overlapping windows merge", `{"pattern":"m\\d","context":3}`,
			head(4) + "L1- a\nL2- b\nL3: M1\nL4- c\nL5- d\nL6- e\nL7- f\nL8: M2\nL9: M3\nL10- g\nL11- h\nL12- i\nL13- j\nL14- k\nL15: M4\n---"},
		{"per-file limit reports later matches in the last one's after-context as context",
			`{"pattern":"m\\d","max_matches_per_file":2,"after":2}`,
			head(2) + "L3: M1\nL4- c\nL5- d\nL8: M2\nL9- M3\nL10- g\n---"},
		{"total limit keeps the after-context of the last match",
			`{"pattern":"m\\d","total_max_matches":2,"context":1}`,
			strings.Replace(head(2), "\":\n", "\" (results limited to 2 matches for performance):\n", 1) +
				"L2- b\nL3: M1\nL4- c\nL7- f\nL8: M2\nL9- M3\n---\n" +
				"More matches may exist: results stop at total_max_matches (2). Narrow the search with a more specific pattern, dir_path or include_pattern, or raise total_max_matches."},
		{"exclude drops context left without a match", `{"pattern":"m\\d","exclude_pattern":"M[23]","context":1}`,
			head(2) + "L2- b\nL3: M1\nL4- c\nL14- k\nL15: M4\n---"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := grepAll(t, ws, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tt.want {
				t.Fatalf("output:\n%s\nwant:\n%s", res.Output, tt.want)
			}
		})
	}
}

func TestGrepTotalLimit(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = "needle one\nhay\nneedle two\n"
	}
	ws, _ := testutil.Workspace(t, files)
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			res, err := testutil.Call(context.Background(), t, e.tool(ws), `{"pattern":"needle","total_max_matches":7}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(res.Output, "\nL"); got != 7 {
				t.Errorf("%d matches reported, want 7:\n%s", got, res.Output)
			}
			if !strings.Contains(res.Output, "(results limited to 7 matches for performance)") || !strings.Contains(res.Output, "raise total_max_matches") {
				t.Errorf("output does not say it was limited:\n%s", res.Output)
			}
			if res.Summary != "Found 7 matches (limited)" {
				t.Errorf("summary %q", res.Summary)
			}
			if e.rg == "" {
				// The Go search keeps the first matches by path.
				want := "File: f00.txt\nL1: needle one\nL3: needle two\n---\nFile: f01.txt\nL1: needle one\nL3: needle two\n---\nFile: f02.txt\nL1: needle one\nL3: needle two\n---\nFile: f03.txt\nL1: needle one\n---"
				if !strings.Contains(res.Output, want) {
					t.Errorf("not the first matches by path:\n%s", res.Output)
				}
			}
			res, err = testutil.Call(context.Background(), t, e.tool(ws), `{"pattern":"needle","total_max_matches":4,"names_only":true}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(strings.Split(res.Output, "\n")) - 2; got != 4 || !strings.Contains(res.Output, "(results limited to 4 files)") {
				t.Errorf("names_only listed %d files, want 4 and a limit note:\n%s", got, res.Output)
			}
		})
	}
}

func TestGrepOpenDocuments(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"a.txt":       "old needle\n",
		"b.txt":       "nothing\n",
		".gitignore":  "ignored.txt\n",
		"ignored.txt": "needle on disk\n",
		"sub/c.txt":   "needle in c\n",
	})
	ws.Open(filepath.Join(root, "a.txt"), 1, "changed\n")                  // the disk's match is gone
	ws.Open(filepath.Join(root, "b.txt"), 1, "line\nunsaved needle\n")     // a match only in the editor
	ws.Open(filepath.Join(root, "new.txt"), 1, "needle in a new buffer\n") // not on disk at all
	ws.Open(filepath.Join(root, "ignored.txt"), 1, "needle unsaved\n")     // still ignored
	ws.Open(filepath.Join(filepath.Dir(root), "outside.txt"), 1, "needle outside\n")
	res, err := grepAll(t, ws, `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	// The context added around few matches comes from the editor's text too.
	want := fmt.Sprintf("Found 3 matches for pattern \"needle\" in path \"%s\" (no context was asked for, so up to 15 lines around each match are shown, as L<n>- lines):\n---\nFile: b.txt\nL1- line\nL2: unsaved needle\n---\nFile: new.txt\nL1: needle in a new buffer\n---\nFile: sub/c.txt\nL1: needle in c\n---", root)
	if res.Output != want {
		t.Fatalf("output:\n%s\nwant:\n%s", res.Output, want)
	}
	// Searching a subdirectory leaves out open documents elsewhere.
	res, err = grepAll(t, ws, `{"pattern":"needle","dir_path":"sub"}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "buffer") || !strings.Contains(res.Output, "File: c.txt") {
		t.Fatalf("output:\n%s", res.Output)
	}
}

func TestGrepSymlinks(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"real/a.txt": "needle\n"})
	outside := t.TempDir()
	testutil.WriteFiles(t, outside, map[string]string{"secret.txt": "needle outside\n"})
	for _, link := range []struct{ target, name string }{
		{filepath.Join(root, "real"), "linkdir"},
		{filepath.Join(root, "real", "a.txt"), "link.txt"},
		{outside, "out"},
	} {
		if err := os.Symlink(link.target, filepath.Join(root, link.name)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := grepAll(t, ws, `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Found 1 match for pattern \"needle\" in path \"%s\":\n---\nFile: real/a.txt\nL1: needle\n---", root)
	if res.Output != want {
		t.Fatalf("symlinks must not be followed; output:\n%s", res.Output)
	}
}

func TestGrepBadInput(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"dir/f.txt": "x\n"})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       tools.ErrorType
		msg        string
	}{
		{"missing pattern", `{}`, tools.ErrInvalidParams, "pattern"},
		{"empty pattern", `{"pattern":""}`, tools.ErrInvalidParams, "must not be empty"},
		{"invalid regex", `{"pattern":"func (("}`, tools.ErrInvalidParams, "missing closing )"},
		{"Perl syntax Go lacks", `{"pattern":"(?=x)"}`, tools.ErrInvalidParams, "invalid or unsupported Perl syntax"},
		{"regex matching a line break", `{"pattern":"a\\nb"}`, tools.ErrInvalidParams, "line"},
		{"fixed string with a line break", `{"pattern":"a\nb","fixed_strings":true}`, tools.ErrInvalidParams, "line break"},
		{"invalid exclude", `{"pattern":"x","exclude_pattern":"["}`, tools.ErrInvalidParams, "exclude_pattern"},
		{"invalid include", `{"pattern":"x","include_pattern":"[a"}`, tools.ErrInvalidParams, "include_pattern"},
		{"negative context", `{"pattern":"x","context":-1}`, tools.ErrInvalidParams, "context"},
		{"negative before", `{"pattern":"x","before":-2}`, tools.ErrInvalidParams, "before"},
		{"fractional after", `{"pattern":"x","after":1.5}`, tools.ErrInvalidParams, "after"},
		{"zero total", `{"pattern":"x","total_max_matches":0}`, tools.ErrInvalidParams, "total_max_matches"},
		{"dir_path climbing out", `{"pattern":"x","dir_path":"../"}`, tools.ErrPathNotInWorkspace, "outside the workspace"},
		{"dir_path absolute outside", fmt.Sprintf(`{"pattern":"x","dir_path":%q}`, outside), tools.ErrPathNotInWorkspace, "outside the workspace"},
		{"dir_path through a symlink out", `{"pattern":"x","dir_path":"escape"}`, tools.ErrPathNotInWorkspace, "outside the workspace"},
		{"dir_path missing", `{"pattern":"x","dir_path":"nope"}`, tools.ErrFileNotFound, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range engines(t) {
				_, err := testutil.Call(context.Background(), t, e.tool(ws), tt.args, nil)
				if got := testutil.ErrorType(err); got != tt.want {
					t.Fatalf("%s: error %v (type %q), want type %q", e.name, err, got, tt.want)
				}
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("%s: error %q does not mention %q", e.name, err, tt.msg)
				}
			}
		})
	}
	// Build alone, without the schema check, still refuses what the schema would.
	if _, err := (&grepTool{ws: ws}).Build([]byte(`{"pattern":"x","context":-1}`)); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("Build with negative context: %v", err)
	}
}

func TestGrepInfo(t *testing.T) {
	ws, _ := testutil.Workspace(t, nil)
	ts := Tools(ws, Options{Ripgrep: "none"})
	names := []string{}
	for _, tl := range ts {
		info := tl.Info()
		names = append(names, info.Name)
		if info.Kind != tools.KindSearch || !info.Idempotent || info.Source != tools.SourceBuiltin {
			t.Errorf("%s: kind %s, idempotent %v, source %s", info.Name, info.Kind, info.Idempotent, info.Source)
		}
		if _, err := tools.NewValidator(info.Parameters); err != nil {
			t.Errorf("%s: schema: %v", info.Name, err)
		}
		inv, err := testutil.Build(t, tl, `{"pattern":"x"}`)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := inv.Confirmation(context.Background()); d != nil || err != nil {
			t.Errorf("%s asks for confirmation: %v, %v", info.Name, d, err)
		}
	}
	if strings.Join(names, ",") != "glob,grep_search" {
		t.Errorf("tools %v", names)
	}
	// search_file_content is grep_search's alias: accepted, never a tool of its own.
	if a := ts[1].Info().Aliases; !slices.Equal(a, []string{"search_file_content"}) {
		t.Errorf("grep_search's aliases %v", a)
	}
}

// TestGrepPatternForms checks that patterns Go and Rust would read differently are
// given to rg in a form that selects the same lines as Go.
func TestGrepPatternForms(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{
		"p.txt": "a[b]c\na&&b\nfoo bar\nfoo\tbar\nÉcole école\nx-y\n\\back\nword_1 \n123\nn\u00e9e\n",
	})
	for _, p := range []string{
		`[[]`, `[a&&b]`, `a&&b`, `foo\sbar`, `(?i)école`, `\bbar\b`, `\Bar`, `[^a-z ]+`, `\pL+e`, `\d{2,}`,
		`(?s:foo.bar)`, `[\-x]`, `\\back`, `\w+\s$`, `(?U)o+`, `n.e`, `(?:)`, `[^\x00-\x{10FFFF}]`, `(a|)b`, `\x{e9}`,
		`\Qa[b]\E`, `[[:^alpha:]]`, `\PL`,
	} {
		for _, cs := range []bool{true, false} {
			args := fmt.Sprintf(`{"pattern":%q,"case_sensitive":%v}`, p, cs)
			if _, err := grepAll(t, ws, args); err != nil {
				t.Errorf("%s: %v", args, err)
			}
		}
	}
}

// TestGrepDifferential compares the engines on generated trees: random lines (empty,
// long, CRLF, Unicode, no final newline) and a spread of patterns and options.
func TestGrepDifferential(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	words := []string{"foo", "bar", "baz", "Foo", "BAR", "qux", "é", "École", "caf\xe9", "\xff\xfe", "\uFFFD", "x", "42", "  ", "\t", "fooBar", "foo_bar", "ſ", "K", "(", ")", "[", "-", "\\", "€", "αβγ"}
	files := map[string]string{}
	for i := range 40 {
		var b strings.Builder
		nLines := rnd.IntN(60)
		for range nLines {
			nWords := rnd.IntN(8)
			if rnd.IntN(50) == 0 {
				nWords = 300 // a long line
			}
			for w := range nWords {
				if w > 0 && rnd.IntN(3) > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rnd.IntN(len(words))])
			}
			if rnd.IntN(10) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		s := b.String()
		if rnd.IntN(4) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		files[fmt.Sprintf("d%d/f%02d.txt", i%5, i)] = s
	}
	ws, _ := testutil.Workspace(t, files)
	patterns := []string{`foo`, `bar`, `caf.`, `caf[^x]`, `\W+`, `^baz`, `qux$`, `\bfoo\b`, `fo+`, `[a-c]{2}`, `(foo|bar) baz`, `\d+`, `é`, `école`, `x*`, `^$`, `\s+$`,
		`k`, `s`, `[^ ]{20,}`, `foo.*bar`, `\(|\)`, `€`, `(?i)αΒγ`, `\W\w`, `^\s*foo`, `[[:upper:]]+`, `\\`}
	for _, p := range patterns {
		args := map[string]any{"pattern": p, "total_max_matches": 100000}
		switch rnd.IntN(4) {
		case 1:
			args["context"] = rnd.IntN(4)
		case 2:
			args["before"], args["after"] = rnd.IntN(3), rnd.IntN(3)
		case 3:
			args["max_matches_per_file"] = 1 + rnd.IntN(3)
			args["after"] = rnd.IntN(3)
		}
		if rnd.IntN(3) == 0 {
			args["case_sensitive"] = true
		}
		if rnd.IntN(4) == 0 {
			args["exclude_pattern"] = "baz"
		}
		if rnd.IntN(4) == 0 {
			args["include_pattern"] = []string{"d1/*", "*.txt", "f0*", "!d2"}[rnd.IntN(4)]
		}
		if rnd.IntN(5) == 0 {
			args["names_only"] = true
		}
		js, _ := json.Marshal(args)
		if _, err := grepAll(t, ws, string(js)); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
}

func TestGrepRipgrepFallback(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"a.txt": "needle\n"})
	// A stand-in for rg that fails the way an old or broken one would.
	fake := filepath.Join(t.TempDir(), "rg")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'rg: unknown flag' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := testutil.Call(context.Background(), t, &grepTool{ws: ws}, `{"pattern":"needle"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testutil.Call(context.Background(), t, &grepTool{ws: ws, rg: fake}, `{"pattern":"needle"}`, nil)
	if err != nil || got.Output != want.Output {
		t.Fatalf("with a failing rg: %v\n%v\nwant the Go search's output:\n%s", err, got, want.Output)
	}
	_, err = testutil.Call(context.Background(), t, &grepTool{ws: ws, rg: fake, strict: true}, `{"pattern":"needle"}`, nil)
	if err == nil || !strings.Contains(err.Error(), "rg: unknown flag") {
		t.Fatalf("strict: error %v, want rg's complaint", err)
	}
	// A configured binary that does not exist means the Go search, from the start.
	if g := Tools(ws, Options{Ripgrep: filepath.Join(t.TempDir(), "missing")})[1].(*grepTool); g.rg != "" {
		t.Errorf("missing binary kept: %q", g.rg)
	}
	if g := Tools(ws, Options{Ripgrep: "none"})[1].(*grepTool); g.rg != "" {
		t.Errorf(`"none" kept rg: %q`, g.rg)
	}
}

func TestGrepCancelled(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"a.txt": "needle\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range engines(t) {
		if _, err := testutil.Call(ctx, t, e.tool(ws), `{"pattern":"needle"}`, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want context.Canceled", e.name, err)
		}
	}
}
