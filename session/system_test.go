package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
)

func TestListingBounded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		".git/HEAD":             "x",
		"node_modules/lib/a.js": "x",
		"a.go":                  "x",
		"pkg/b.go":              "x",
		"pkg/deep/c.go":         "x",
		"pkg/deep/deeper/d.go":  "x",
		"pkg/node_modules/e.js": "x",
		"pkg/.git/config":       "x",
	}
	for i := range 300 {
		files[fmt.Sprintf("zmany/f%03d.txt", i)] = "x"
	}
	testutil.WriteFiles(t, root, files)

	out := listing(root, maxListing)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	entries := len(lines) - 2 // the root line and the truncation note
	if entries != maxListing {
		t.Errorf("%d entries listed, want %d", entries, maxListing)
	}
	if !strings.Contains(out, "listing stops at 200 entries") {
		t.Errorf("no truncation note")
	}
	for _, s := range []string{".git", "node_modules", "deeper", "c.go"} {
		if strings.Contains(out, s) {
			t.Errorf("listing shows %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"  a.go\n", "  pkg/\n", "    b.go\n", "    deep/\n", "    f000.txt\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("listing lacks %q:\n%.500s", s, out)
		}
	}

	small := listing(filepath.Join(root, "pkg"), maxListing)
	if strings.Contains(small, "listing stops") {
		t.Errorf("a small tree is reported truncated:\n%s", small)
	}
}

func TestSystemInstruction(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	config := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{"main.go": "package main", "AGENTS.md": "Run make test before finishing."})
	now := func() time.Time { return time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) }
	tests := []struct {
		name    string
		env     Environment
		ec      *EditorContext
		want    []string
		notWant []string
	}{
		{
			name:    "environment and memory",
			env:     Environment{Roots: []string{root}, ConfigDir: config, Now: now},
			want:    []string{"You are agentls", "Wednesday, 4 March 2026", "The workspace folder is " + root, "  main.go\n", "--- Context from: " + filepath.Join(root, "AGENTS.md"), "Run make test before finishing."},
			notWant: []string{"# Editor context"},
		},
		{
			name: "editor context",
			env:  Environment{Roots: []string{root}, Now: now},
			ec:   &EditorContext{Path: filepath.Join(root, "main.go"), StartLine: 3, EndLine: 5, Selection: "x := 1\n```\n", Diagnostic: "undefined: y"},
			want: []string{"# Editor context", "Current file: " + filepath.Join(root, "main.go"), "Selected lines: 3-5", "````\nx := 1\n```\n````", "diagnostic: undefined: y"},
		},
		{
			name:    "empty editor context says nothing",
			env:     Environment{Roots: []string{root}, Now: now},
			ec:      &EditorContext{},
			notWant: []string{"# Editor context"},
		},
		{
			name: "several roots",
			env:  Environment{Roots: []string{root, config}, Now: now},
			want: []string{"The workspace folders are:\n- " + root + "\n- " + config},
		},
		{
			name:    "no roots",
			env:     Environment{Now: now},
			want:    []string{"There is no workspace folder"},
			notWant: []string{"The top of"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := systemInstruction(tt.env, tt.ec, discard())
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("system instruction lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("system instruction has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("system instruction:\n%s", got)
			}
		})
	}
}

// TestListingStaysInTheWorkspace: a link to a directory elsewhere is listed, not
// entered, so the listing never shows what lies outside the workspace.
func TestListingStaysInTheWorkspace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{"pkg/a.go": "x"})
	testutil.WriteFiles(t, outside, map[string]string{"private-notes.txt": "x", "sub/deeper.txt": "x"})
	if err := os.Symlink(outside, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "pkg", "loop")); err != nil {
		t.Fatal(err)
	}
	out := listing(root, maxListing)
	if strings.Contains(out, "private-notes") || strings.Contains(out, "deeper") {
		t.Errorf("the listing shows files outside the workspace:\n%s", out)
	}
	if !strings.Contains(out, "  elsewhere\n") || !strings.Contains(out, "    a.go\n") {
		t.Errorf("the listing lacks the link or the workspace's own files:\n%s", out)
	}
}

// TestReadDirBounded: a folder larger than the bound is read only in part, sorted; a
// smaller one whole, as os.ReadDir reads it.
func TestReadDirBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d", 49-i)] = "x"
	}
	testutil.WriteFiles(t, dir, files)
	for _, n := range []int{10, 50, 100} {
		got, err := readDirBounded(dir, n)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(n, 50); len(got) != want {
			t.Errorf("n=%d: %d entries, want %d", n, len(got), want)
		}
		if !slices.IsSortedFunc(got, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
			t.Errorf("n=%d: entries not sorted", n)
		}
	}
	if _, err := readDirBounded(filepath.Join(dir, "missing"), 10); err == nil {
		t.Error("a missing folder read without an error")
	}
}
