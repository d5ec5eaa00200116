package session

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestMemoryHierarchy(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	config := t.TempDir()
	testutil.WriteFiles(t, config, map[string]string{"AGENTS.md": "user agents", "GEMINI.md": "user gemini"})
	testutil.WriteFiles(t, top, map[string]string{
		"outside/AGENTS.md":                   "above the repository: not read",
		"outside/repo/.git/HEAD":              "ref: refs/heads/main\n",
		"outside/repo/GEMINI.md":              "repo gemini",
		"outside/repo/pkg/AGENTS.md":          "pkg agents",
		"outside/repo/pkg/sub/AGENTS.md":      "root agents",
		"outside/repo/pkg/sub/GEMINI.md":      "root gemini",
		"outside/repo/pkg/sub/deep/GEMINI.md": "below the root: not read",
		"norepo/AGENTS.md":                    "no repository: the root only",
		"norepo/child/AGENTS.md":              "child",
	})
	tests := []struct {
		name  string
		env   Environment
		want  []string // texts in order
		paths []string // relative to top or config, for the first few
	}{
		{
			name: "config dir, then repository top down to the root",
			env:  Environment{ConfigDir: config, Roots: []string{filepath.Join(top, "outside/repo/pkg/sub")}},
			want: []string{"user agents", "user gemini", "repo gemini", "pkg agents", "root agents", "root gemini"},
		},
		{
			name: "no repository: the workspace root alone",
			env:  Environment{Roots: []string{filepath.Join(top, "norepo/child")}},
			want: []string{"child"},
		},
		{
			name: "several roots, shared directories once",
			env:  Environment{Roots: []string{filepath.Join(top, "outside/repo/pkg"), filepath.Join(top, "outside/repo/pkg/sub")}},
			want: []string{"repo gemini", "pkg agents", "root agents", "root gemini"},
		},
		{
			name: "nothing",
			env:  Environment{Roots: []string{t.TempDir()}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range loadMemory(tt.env, discard()) {
				got = append(got, f.Text)
				if !filepath.IsAbs(f.Path) {
					t.Errorf("path %s is not absolute", f.Path)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("memory %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMemoryBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := strings.Repeat("a", maxMemoryFile+100)
	testutil.WriteFiles(t, dir, map[string]string{"AGENTS.md": big})
	for _, sub := range []string{"a", "a/b", "a/b/c", "a/b/c/d"} {
		testutil.WriteFiles(t, filepath.Join(dir, sub), map[string]string{"AGENTS.md": big, "GEMINI.md": big})
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := loadMemory(Environment{Roots: []string{filepath.Join(dir, "a/b/c/d")}}, discard())
	total := 0
	for _, f := range files {
		if len(f.Text) > maxMemoryFile {
			t.Errorf("%s contributes %d bytes, more than %d", f.Path, len(f.Text), maxMemoryFile)
		}
		total += len(f.Text)
	}
	if total > maxMemoryTotal {
		t.Errorf("memory totals %d bytes, more than %d", total, maxMemoryTotal)
	}
	if len(files) != maxMemoryTotal/maxMemoryFile || !files[0].Truncated {
		t.Errorf("%d files (first truncated: %v), want %d, truncated", len(files), len(files) > 0 && files[0].Truncated, maxMemoryTotal/maxMemoryFile)
	}
	out := formatMemory(files)
	if !strings.Contains(out, "--- Context from: "+filepath.Join(dir, "AGENTS.md")+" ---") || !strings.Contains(out, "left out") {
		t.Errorf("formatted memory does not show the paths and the truncation:\n%.300s", out)
	}
}

func TestReadMemoryCutsAtCharacter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(p, []byte("ab€€"), 0o644); err != nil { // € is three bytes
		t.Fatal(err)
	}
	f, err := readMemory(p, 4)
	if err != nil {
		t.Fatal(err)
	}
	if f.Text != "ab" || !f.Truncated {
		t.Errorf("text %q truncated %v, want \"ab\" truncated", f.Text, f.Truncated)
	}
}

// TestMemoryLinksAndSpecialFiles: a project's memory file that is a symbolic link counts
// only when it leads to a file inside the project, and once however many names lead to
// it (GEMINI.md -> AGENTS.md is the usual set-up for sharing one file between tools); a
// named pipe is left out rather than waited on. The user's own configuration directory
// may link anywhere.
func TestMemoryLinksAndSpecialFiles(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	config := t.TempDir()
	elsewhere := t.TempDir()
	testutil.WriteFiles(t, elsewhere, map[string]string{"id_ed25519": "PRIVATE KEY", "dotfiles/AGENTS.md": "user agents"})
	testutil.WriteFiles(t, top, map[string]string{
		"repo/.git/HEAD":           "ref: refs/heads/main\n",
		"repo/AGENTS.md":           "repo agents",
		"repo/docs/agent-notes.md": "notes inside the repository",
		"repo/pkg/sub/placeholder": "",
	})
	repo := filepath.Join(top, "repo")
	links := map[string]string{
		filepath.Join(repo, "GEMINI.md"):         "AGENTS.md",
		filepath.Join(repo, "pkg/AGENTS.md"):     filepath.Join(elsewhere, "id_ed25519"),
		filepath.Join(repo, "pkg/GEMINI.md"):     "../AGENTS.md",
		filepath.Join(repo, "pkg/sub/GEMINI.md"): "../../docs/agent-notes.md",
		filepath.Join(config, "AGENTS.md"):       filepath.Join(elsewhere, "dotfiles/AGENTS.md"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(repo, "pkg/sub/AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}

	done := make(chan []memoryFile, 1)
	go func() {
		done <- loadMemory(Environment{ConfigDir: config, Roots: []string{filepath.Join(repo, "pkg/sub")}}, discard())
	}()
	var files []memoryFile
	select {
	case files = <-done:
	case <-time.After(20 * time.Second):
		// Opening a pipe for reading waits for a writer: be the writer, so that the
		// test ends and reports.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		files = <-done
		t.Error("reading the memory waited on a named pipe")
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Text)
	}
	want := []string{"user agents", "repo agents", "notes inside the repository"}
	if !slices.Equal(got, want) {
		t.Errorf("memory %q, want %q", got, want)
	}
}
