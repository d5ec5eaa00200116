package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

var walkTree = map[string]string{
	".git/HEAD":                    "ref: refs/heads/main\n",
	".git/info/exclude":            "# local excludes\nexcluded-by-info.txt\n",
	".gitignore":                   "*.log\n!keep.log\nbuild/\n!build/keep.txt\n/rootonly.txt\n\n# comment\n",
	".geminiignore":                "secret.txt\n",
	".agentlsignore":               "private/\n",
	"a.go":                         "package a\n",
	"keep.log":                     "",
	"x.log":                        "",
	"rootonly.txt":                 "",
	"excluded-by-info.txt":         "",
	"secret.txt":                   "",
	"build/out.bin":                "",
	"build/keep.txt":               "",
	"private/p.txt":                "",
	"node_modules/m/m.js":          "",
	"sub/.gitignore":               "*.tmp\r\n!important.log\r\n",
	"sub/important.log":            "",
	"sub/other.log":                "",
	"sub/t.tmp":                    "",
	"sub/rootonly.txt":             "",
	"sub/deeper/.gitignore":        "!*.tmp\n",
	"sub/deeper/d.tmp":             "",
	"sub/deeper/e.go":              "",
	"sub/node_modules/n.js":        "",
	"sub/deeper/__pycache__/c.pyc": "",
}

// walked returns the paths, relative to root, that a walk of dir reports.
func walked(t *testing.T, ws *workspace.Workspace, root, dir string, opts workspace.WalkOptions) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	err := ws.Walk(context.Background(), dir, opts, func(path string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		mu.Lock()
		got = append(got, filepath.ToSlash(rel))
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

func TestWalk(t *testing.T) {
	ws, root := testutil.Workspace(t, walkTree)
	everything := []string{
		".agentlsignore", ".geminiignore", ".git", ".git/HEAD", ".git/info", ".git/info/exclude", ".gitignore",
		"a.go", "build", "build/keep.txt", "build/out.bin", "excluded-by-info.txt", "keep.log",
		"node_modules", "node_modules/m", "node_modules/m/m.js", "private", "private/p.txt",
		"rootonly.txt", "secret.txt", "sub", "sub/.gitignore", "sub/deeper", "sub/deeper/.gitignore",
		"sub/deeper/__pycache__", "sub/deeper/__pycache__/c.pyc", "sub/deeper/d.tmp", "sub/deeper/e.go",
		"sub/important.log", "sub/node_modules", "sub/node_modules/n.js", "sub/other.log",
		"sub/rootonly.txt", "sub/t.tmp", "x.log",
	}
	without := func(drop ...string) []string {
		var out []string
		for _, p := range everything {
			if !slices.ContainsFunc(drop, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
				out = append(out, p)
			}
		}
		return out
	}
	gitIgnored := []string{"x.log", "rootonly.txt", "excluded-by-info.txt", "build", "sub/other.log", "sub/t.tmp"}
	agentIgnored := []string{"secret.txt", "private"}
	defaultExcluded := []string{".git", "node_modules", "sub/node_modules", "sub/deeper/__pycache__"}

	tests := []struct {
		name string
		opts workspace.WalkOptions
		want []string
	}{
		{"default", workspace.DefaultWalk(), without(slices.Concat(gitIgnored, agentIgnored, defaultExcluded)...)},
		{"options off", workspace.WalkOptions{}, everything},
		{"gitignore only", workspace.WalkOptions{GitIgnore: true}, without(gitIgnored...)},
		{"agent ignore only", workspace.WalkOptions{AgentIgnore: true}, without(agentIgnored...)},
		{"default excludes only", workspace.WalkOptions{DefaultExcludes: true}, without(defaultExcluded...)},
		{"exclude by base name glob", workspace.WalkOptions{Exclude: []string{"*.go"}}, without("a.go", "sub/deeper/e.go")},
		{"exclude by relative path", workspace.WalkOptions{Exclude: []string{"sub/deeper"}}, without("sub/deeper")},
		{"exclude with doublestar", workspace.WalkOptions{Exclude: []string{"**/*.log"}}, without("keep.log", "x.log", "sub/important.log", "sub/other.log")},
	}
	for _, tt := range tests {
		if got := walked(t, ws, root, root, tt.opts); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}

	// A walk of a subdirectory still obeys the ignore files above it.
	got := walked(t, ws, root, filepath.Join(root, "sub"), workspace.DefaultWalk())
	want := []string{"sub/.gitignore", "sub/deeper", "sub/deeper/.gitignore", "sub/deeper/d.tmp", "sub/deeper/e.go", "sub/important.log", "sub/rootonly.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("walk of sub:\n got %q\nwant %q", got, want)
	}
}

// .gitignore files between the top of the Git working tree and a workspace root below
// it apply, as they do for Git.
func TestWalkGitTopAboveRoot(t *testing.T) {
	repo := tempDir(t)
	testutil.WriteFiles(t, repo, map[string]string{
		".git/HEAD":           "",
		".git/info/exclude":   "*.bak\n",
		".gitignore":          "generated/\n",
		"proj/.gitignore":     "*.out\n",
		"proj/main.go":        "",
		"proj/a.out":          "",
		"proj/x.bak":          "",
		"proj/generated/g.go": "",
		"proj/.agentlsignore": "main.go\n",
	})
	root := filepath.Join(repo, "proj")
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := walked(t, ws, root, root, workspace.DefaultWalk()); !slices.Equal(got, []string{".agentlsignore", ".gitignore"}) {
		t.Errorf("got %q", got)
	}
	// .agentlsignore files above the workspace root are not read.
	testutil.WriteFiles(t, repo, map[string]string{".agentlsignore": ".gitignore\n"})
	ws, _ = workspace.New(root)
	if got := walked(t, ws, root, root, workspace.DefaultWalk()); !slices.Equal(got, []string{".agentlsignore", ".gitignore"}) {
		t.Errorf("with an .agentlsignore above the root: got %q", got)
	}
}

func TestIgnored(t *testing.T) {
	ws, root := testutil.Workspace(t, walkTree)
	ig := ws.NewIgnorer(root, workspace.DefaultWalk())
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.go", false, false},
		{"x.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build/out.bin", false, true},
		{"build/keep.txt", false, true}, // Git cannot re-include below an excluded directory
		{"rootonly.txt", false, true},
		{"sub/rootonly.txt", false, false},
		{"sub/important.log", false, false},
		{"sub/other.log", false, true},
		{"sub/t.tmp", false, true},
		{"sub/deeper/d.tmp", false, false},
		{"secret.txt", false, true},
		{"private", true, true},
		{"private/p.txt", false, true},
		{"node_modules", true, true},
		{"node_modules/m/m.js", false, true},
		{"node_modules", false, false}, // a file of that name is not a dependency tree
		{"sub/deeper/__pycache__/c.pyc", false, true},
		{".git/HEAD", false, true},
		{"excluded-by-info.txt", false, true},
		{"not/yet/there.log", false, true},
	}
	for _, tt := range tests {
		if got := ig.Ignored(filepath.Join(root, filepath.FromSlash(tt.path)), tt.isDir); got != tt.want {
			t.Errorf("Ignored(%s, dir=%v) = %v, want %v", tt.path, tt.isDir, got, tt.want)
		}
	}
	if ig := ws.NewIgnorer(root, workspace.WalkOptions{}); ig.Ignored(filepath.Join(root, "x.log"), false) {
		t.Error("with every option off, x.log is ignored")
	}
}

func TestWalkCallbackErrors(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"only/f1": "", "only/f2": "", "only/f3": "", "only/f4": "", "only/d/x": "",
		"skip/a": "", "skip/b/c": "",
		"deep/er/still/deeper/target": "",
	})
	ctx := context.Background()
	collect := func(fn func(rel string, d fs.DirEntry) error) ([]string, error) {
		var mu sync.Mutex
		var got []string
		err := ws.Walk(ctx, root, workspace.DefaultWalk(), func(path string, d fs.DirEntry) error {
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			mu.Lock()
			got = append(got, rel)
			mu.Unlock()
			return fn(rel, d)
		})
		sort.Strings(got)
		return got, err
	}

	t.Run("SkipDir on a directory", func(t *testing.T) {
		got, err := collect(func(rel string, d fs.DirEntry) error {
			if rel == "skip" {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "skip/") }) || !slices.Contains(got, "skip") {
			t.Errorf("got %q; want skip reported and nothing below it", got)
		}
	})

	t.Run("SkipDir on a file", func(t *testing.T) {
		got, err := collect(func(rel string, d fs.DirEntry) error {
			if strings.HasPrefix(rel, "only/f") {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range got {
			if strings.HasPrefix(p, "only/f") {
				n++
			}
		}
		if n != 1 || !slices.Contains(got, "only/d/x") {
			t.Errorf("got %q; want one file of only/ and its subdirectory still walked", got)
		}
	})

	t.Run("error deep down stops the walk", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := collect(func(rel string, d fs.DirEntry) error {
			if rel == "deep/er/still/deeper/target" {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Errorf("Walk = %v, want the callback's error", err)
		}
	})

	t.Run("error on a directory", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := collect(func(rel string, d fs.DirEntry) error {
			if rel == "deep/er" {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Errorf("Walk = %v, want the callback's error", err)
		}
	})

	t.Run("SkipAll", func(t *testing.T) {
		var calls atomic.Int32
		err := ws.Walk(ctx, root, workspace.DefaultWalk(), func(string, fs.DirEntry) error {
			calls.Add(1)
			return fs.SkipAll
		})
		if err != nil || calls.Load() == 0 {
			t.Errorf("Walk = %v after %d calls; want nil", err, calls.Load())
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var after atomic.Int32
		var once sync.Once
		err := ws.Walk(cctx, root, workspace.DefaultWalk(), func(string, fs.DirEntry) error {
			cancelled := false
			once.Do(func() { cancel(); cancelled = true })
			if !cancelled && cctx.Err() != nil {
				after.Add(1)
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Walk = %v, want context.Canceled", err)
		}
		// Calls already under way on other goroutines may finish; no new one starts
		// after the cancellation is seen, so at most one per worker.
		if n := after.Load(); n > int32(max(4, runtime.GOMAXPROCS(0))) {
			t.Errorf("%d calls after the cancellation", n)
		}
	})

	t.Run("cancelled before", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		var calls atomic.Int32
		err := ws.Walk(cctx, root, workspace.DefaultWalk(), func(string, fs.DirEntry) error {
			calls.Add(1)
			return nil
		})
		if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
			t.Errorf("Walk = %v after %d calls, want context.Canceled and none", err, calls.Load())
		}
	})
}

func TestWalkSymlinksNotFollowed(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"real/f": ""})
	symlink(t, "real", filepath.Join(root, "link"))
	got := walked(t, ws, root, root, workspace.DefaultWalk())
	if want := []string{"link", "real", "real/f"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWalkUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	ws, root := testutil.Workspace(t, map[string]string{"open/f": "", "closed/g": ""})
	closed := filepath.Join(root, "closed")
	if err := os.Chmod(closed, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(closed, 0o755)
	got := walked(t, ws, root, root, workspace.DefaultWalk())
	if want := []string{"closed", "open", "open/f"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// unfiltered returns every path below dir (dir excluded), relative to root, whose
// Ignored answer from a fresh Ignorer is false: what a walk of dir must report.
func unfiltered(t *testing.T, ws *workspace.Workspace, root, dir string, opts workspace.WalkOptions) []string {
	t.Helper()
	ig := ws.NewIgnorer(dir, opts)
	var want []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && !ig.Ignored(path, d.IsDir()) {
			rel, _ := filepath.Rel(root, path)
			want = append(want, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want
}

// A walk learns which ignore files a directory has from its listing, Ignored by looking
// for them: both must agree, whatever the names around the ignore files, on trees made
// at random (with a fixed seed) from names that sort before, between and after them.
func TestWalkAgreesWithIgnored(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := []string{"a.go", "b.txt", "x.log", "keep.log", "-dash", "!bang", "+plus", ".DS_Store", ".dockerignore", ".env", ".hidden", "Z.md", "_u", "0.bin", "~tmp"}
	dirs := []string{"d1", "sub", ".github", "-sub", ".cache", "node_modules", "Zd", ".gitignore"}
	ignoreFiles := []string{".gitignore", ".geminiignore", ".agentlsignore"}
	lines := []string{
		"*.log", "!keep.log", "b.txt", "/a.go", "sub/", "-dash", ".DS_Store", ".gitignore", ".geminiignore",
		".agentlsignore", ".dockerignore", "!.env", ".*", "!/.github", "d1/", "**/Z*", "0.*", "!*.go", "/-sub/", "!d1/",
	}
	pick := func(from []string, p float64) []string {
		var out []string
		for _, s := range from {
			if rng.Float64() < p {
				out = append(out, s)
			}
		}
		return out
	}
	for i := range 30 {
		tree := map[string]string{}
		var fill func(dir string, depth int)
		fill = func(dir string, depth int) {
			for _, f := range pick(files, 0.3) {
				tree[dir+f] = ""
			}
			for _, f := range pick(ignoreFiles, 0.3) {
				tree[dir+f] = strings.Join(pick(lines, 0.15), "\n") + "\n"
			}
			if depth < 3 {
				for _, d := range pick(dirs, 0.25) {
					if _, isFile := tree[dir+d]; !isFile {
						fill(dir+d+"/", depth+1)
						tree[dir+d+"/f"] = ""
					}
				}
			}
		}
		fill("", 0)
		if rng.IntN(2) == 0 {
			tree[".git/info/exclude"] = strings.Join(pick(lines, 0.1), "\n") + "\n"
		}
		ws, root := testutil.Workspace(t, tree)
		if rng.IntN(3) == 0 {
			// An ignore file that is a symlink, to a file or to nothing.
			target := []string{"a.go", "missing"}[rng.IntN(2)]
			if err := os.Symlink(target, filepath.Join(root, ".geminiignore")); err != nil && !errors.Is(err, fs.ErrExist) {
				t.Fatal(err)
			}
		}
		for _, opts := range []workspace.WalkOptions{workspace.DefaultWalk(), {GitIgnore: true}, {AgentIgnore: true}} {
			for _, dir := range []string{root, filepath.Join(root, "sub"), filepath.Join(root, "d1")} {
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					continue
				}
				want := unfiltered(t, ws, root, dir, opts)
				if got := walked(t, ws, root, dir, opts); !slices.Equal(got, want) {
					t.Errorf("tree %d, walk of %s with %+v:\n got %q\nwant %q\ntree %q", i, dir, opts, got, want, tree)
				}
			}
		}
	}
}

// A file that the callback skips its directory's remaining files with can come before
// the directory's .gitignore: its rules still apply to the subdirectories.
func TestWalkSkipFilesBeforeIgnoreFile(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"-first":     "",
		".gitignore": "gen/\n",
		"gen/g.go":   "",
		"src/s.go":   "",
	})
	var mu sync.Mutex
	var got []string
	err := ws.Walk(context.Background(), root, workspace.DefaultWalk(), func(path string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(root, path)
		mu.Lock()
		got = append(got, filepath.ToSlash(rel))
		mu.Unlock()
		if rel == "-first" {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if want := []string{"-first", "src", "src/s.go"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// BenchmarkWalkGoroot walks the Go source tree with the default options.
func BenchmarkWalkGoroot(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	ws, err := workspace.New(src)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var files atomic.Int64
	for b.Loop() {
		files.Store(0)
		err := ws.Walk(ctx, ws.Roots()[0], workspace.DefaultWalk(), func(_ string, d fs.DirEntry) error {
			if !d.IsDir() {
				files.Add(1)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(files.Load()), "files")
}

// BenchmarkIgnoredGoroot judges every file of the Go source tree, in walk order, with a
// fresh Ignorer each time: what the search tools do with the files ripgrep reports.
func BenchmarkIgnoredGoroot(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	ws, err := workspace.New(src)
	if err != nil {
		b.Fatal(err)
	}
	root := ws.Roots()[0]
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	var ignored int
	for b.Loop() {
		ig := ws.NewIgnorer(root, workspace.DefaultWalk())
		ignored = 0
		for _, f := range files {
			if ig.Ignored(f, false) {
				ignored++
			}
		}
	}
	b.ReportMetric(float64(len(files)), "files")
	b.ReportMetric(float64(ignored), "ignored")
}
