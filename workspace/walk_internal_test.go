package workspace

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
)

// openLog records the ignore files an Ignorer opens, so that tests can count its
// file-system work.
type openLog struct {
	mu     sync.Mutex
	opened []string // relative to root, with slashes
	failed []string
}

// hook makes ig open its ignore files through l.
func (l *openLog) hook(t *testing.T, ig *Ignorer, root string) {
	ig.open = func(name string) (io.ReadCloser, error) {
		f, err := openFile(name)
		rel, relErr := filepath.Rel(root, name)
		if relErr != nil {
			t.Errorf("opened %s, outside %s", name, root)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.failed = append(l.failed, filepath.ToSlash(rel))
		} else {
			l.opened = append(l.opened, filepath.ToSlash(rel))
		}
		return f, err
	}
}

// take returns what was opened and failed to open since the last call, sorted.
func (l *openLog) take() (opened, failed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	opened, failed = l.opened, l.failed
	l.opened, l.failed = nil, nil
	sort.Strings(opened)
	sort.Strings(failed)
	return opened, failed
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// ignoreWorkTree has ignore files at several levels and many directories without any.
var ignoreWorkTree = map[string]string{
	".git/info/exclude":        "*.bak\n",
	".gitignore":               "*.log\n",
	".agentlsignore":           "secret/\n",
	"a.go":                     "",
	"x.log":                    "",
	"secret/s.txt":             "",
	"pkg/one/a.go":             "",
	"pkg/one/b.go":             "",
	"pkg/two/a.go":             "",
	"pkg/two/deep/er/a.go":     "",
	"pkg/three/.geminiignore":  "gen.go\n",
	"pkg/three/gen.go":         "",
	"pkg/three/main.go":        "",
	"pkg/three/sub/.gitignore": "!keep.log\n",
	"pkg/three/sub/keep.log":   "",
	"pkg/three/sub/drop.bak":   "",
	"docs/readme.md":           "",
	"docs/img/logo.png":        "",
}

// A walk learns from its listings which ignore files a directory has: it opens the
// ones there are, each once, and tries no other, except those named after an ignore
// file that is listed first (see listedEntry).
func TestWalkFileSystemWork(t *testing.T) {
	root := writeTree(t, ignoreWorkTree)
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	var log openLog
	ig := ws.NewIgnorer(root, DefaultWalk())
	log.hook(t, ig, root)
	var mu sync.Mutex
	var got []string
	err = ig.walk(context.Background(), func(path string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(root, path)
		mu.Lock()
		got = append(got, filepath.ToSlash(rel))
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{
		".agentlsignore", ".gitignore", "a.go", "docs", "docs/img", "docs/img/logo.png", "docs/readme.md",
		"pkg", "pkg/one", "pkg/one/a.go", "pkg/one/b.go", "pkg/three", "pkg/three/.geminiignore",
		"pkg/three/main.go", "pkg/three/sub", "pkg/three/sub/.gitignore", "pkg/three/sub/keep.log",
		"pkg/two", "pkg/two/a.go", "pkg/two/deep", "pkg/two/deep/er", "pkg/two/deep/er/a.go",
	}
	if !slices.Equal(got, want) {
		t.Errorf("walked\n %q\nwant\n %q", got, want)
	}
	opened, failed := log.take()
	wantOpened := []string{".agentlsignore", ".git/info/exclude", ".gitignore", "pkg/three/.geminiignore", "pkg/three/sub/.gitignore"}
	// .agentlsignore is judged first in the root, .geminiignore first in pkg/three,
	// before the listing shows what follows them.
	wantFailed := []string{".geminiignore", "pkg/three/.gitignore"}
	if !slices.Equal(opened, wantOpened) || !slices.Equal(failed, wantFailed) {
		t.Errorf("the walk opened %q and failed to open %q; want %q and %q", opened, failed, wantOpened, wantFailed)
	}
}

// Outside a walk, each directory's ignore files are looked for once; questions about
// further paths in directories already seen are answered without touching the disk.
func TestIgnoredLooksOncePerDirectory(t *testing.T) {
	root := writeTree(t, ignoreWorkTree)
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	var log openLog
	ig := ws.NewIgnorer(root, DefaultWalk())
	log.hook(t, ig, root)

	var files []string
	for name := range ignoreWorkTree {
		if filepath.Dir(name) != ".git/info" {
			files = append(files, filepath.Join(root, filepath.FromSlash(name)))
		}
	}
	sort.Strings(files)
	for _, f := range files {
		ig.Ignored(f, false)
	}
	opened, failed := log.take()
	// Every directory holding a file, and every one between it and the root, is looked
	// at once (pkg and pkg/two/deep hold no file of their own).
	seen := map[string]int{}
	for _, p := range slices.Concat(opened, failed) {
		seen[filepath.Dir(p)]++
	}
	for _, d := range []string{".", "pkg", "pkg/one", "pkg/two", "pkg/two/deep", "pkg/two/deep/er", "pkg/three", "pkg/three/sub", "docs", "docs/img"} {
		if seen[d] != 3 {
			t.Errorf("looked for %d ignore files in %s, want the three, once each (opened %q, failed %q)", seen[d], d, opened, failed)
		}
	}
	if !slices.Contains(opened, ".git/info/exclude") {
		t.Errorf(".git/info/exclude not read: opened %q", opened)
	}
	// secret/ is ignored, so nothing below it is looked at.
	if seen["secret"] != 0 {
		t.Errorf("looked for ignore files in the ignored directory secret: %q %q", opened, failed)
	}

	for range 3 {
		for _, f := range files {
			ig.Ignored(f, false)
			ig.Ignored(filepath.Join(filepath.Dir(f), "not-there.log"), false)
		}
	}
	if opened, failed := log.take(); len(opened)+len(failed) != 0 {
		t.Errorf("asking again opened %q and failed to open %q; want no file-system work", opened, failed)
	}
}

// Where an entry sorts before an ignore file's name, the listing cannot yet tell whether
// that file exists, so only the names after the entry are tried, once per directory.
func TestWalkTriesOnlyIgnoreFilesNotYetListed(t *testing.T) {
	root := writeTree(t, map[string]string{
		"-dash":                "",
		"a.go":                 "",
		"dock/.dockerignore":   "",
		"dock/.gitignore":      "x\n",
		"dock/x":               "",
		"agent/.agentlsignore": "y\n",
		"agent/y":              "",
		"gh/.github/ci.yml":    "",
		"gh/.gitignore":        ".github/\n",
		"odd/.gitignore/f":     "", // a directory, not an ignore file
		"odd/a":                "",
	})
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	var log openLog
	ig := ws.NewIgnorer(root, DefaultWalk())
	log.hook(t, ig, root)
	var mu sync.Mutex
	var got []string
	err = ig.walk(context.Background(), func(path string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(root, path)
		mu.Lock()
		got = append(got, filepath.ToSlash(rel))
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{
		"-dash", "a.go", "agent", "agent/.agentlsignore", "dock", "dock/.dockerignore", "dock/.gitignore",
		"gh", "gh/.gitignore", "odd", "odd/.gitignore", "odd/.gitignore/f", "odd/a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	opened, failed := log.take()
	// In gh, the directory .github sorts before .gitignore and may be judged first, on
	// another goroutine, so that both open gh/.gitignore; no ignore file named before
	// .github needs trying there.
	opened = slices.Compact(opened)
	wantOpened := []string{"agent/.agentlsignore", "dock/.gitignore", "gh/.gitignore"}
	wantFailed := []string{
		".agentlsignore", ".geminiignore", ".gitignore", // named after "-dash"
		"agent/.geminiignore", "agent/.gitignore", // named after ".agentlsignore"
		"dock/.geminiignore", // named after ".dockerignore"
	}
	if !slices.Equal(opened, wantOpened) || !slices.Equal(failed, wantFailed) {
		t.Errorf("opened %q and failed %q; want %q and %q", opened, failed, wantOpened, wantFailed)
	}
}
