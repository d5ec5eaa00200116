package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// tempDir returns a new temporary directory with its symlinks resolved, as workspace
// roots are kept.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	root, root2, out := tempDir(t), tempDir(t), tempDir(t)
	testutil.WriteFiles(t, root, map[string]string{"in.txt": "in", "dir/a.txt": "a"})
	testutil.WriteFiles(t, root2, map[string]string{"two.txt": "2"})
	testutil.WriteFiles(t, out, map[string]string{"secret.txt": "s", "odir/o.txt": "o", "deep/a/keep": ""})
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "link-out-file"))
	symlink(t, filepath.Join(out, "odir"), filepath.Join(root, "link-out-dir"))
	symlink(t, filepath.Join(root, "in.txt"), filepath.Join(root, "link-in"))
	symlink(t, "dir", filepath.Join(root, "link-in-dir"))
	symlink(t, filepath.Join(root2, "two.txt"), filepath.Join(root, "link-root2"))
	symlink(t, filepath.Join(out, "nope.txt"), filepath.Join(root, "dangling-out"))
	symlink(t, "../"+filepath.Base(out)+"/nope.txt", filepath.Join(root, "dangling-rel-out"))
	symlink(t, "notyet.txt", filepath.Join(root, "dangling-in"))
	symlink(t, filepath.Join(out, "no-such-dir"), filepath.Join(root, "dangling-dir-out"))
	symlink(t, "loop", filepath.Join(root, "loop"))
	symlink(t, filepath.Join(root, "in.txt"), filepath.Join(out, "link-into-root"))
	// A relative target is relative to where the link really is: from out/deep/a,
	// "../<root's name>/f" is out/deep/<root's name>/f, outside, though spelled through
	// root/link-deep it would read as root/<root's name>/f.
	symlink(t, filepath.Join(out, "deep", "a"), filepath.Join(root, "link-deep"))
	symlink(t, "../"+filepath.Base(root)+"/f", filepath.Join(out, "deep", "a", "esc"))

	ws, err := workspace.New(root, root2)
	if err != nil {
		t.Fatal(err)
	}
	const outside = "OUTSIDE"
	tests := []struct {
		name, path string
		want       string // the resolved path, OUTSIDE for an *OutsideError, or "error: …" for another error
	}{
		{"relative", "dir/a.txt", filepath.Join(root, "dir", "a.txt")},
		{"relative, not yet existing", "new/deeper/file.go", filepath.Join(root, "new", "deeper", "file.go")},
		{"dot", ".", root},
		{"absolute inside", filepath.Join(root, "in.txt"), filepath.Join(root, "in.txt")},
		{"absolute in the second root", filepath.Join(root2, "two.txt"), filepath.Join(root2, "two.txt")},
		{"absolute outside", filepath.Join(out, "secret.txt"), outside},
		{"filesystem root", "/", outside},
		{"dot-dot escape", "../x", outside},
		{"dot-dot escape through a directory", "dir/../../x", outside},
		{"dot-dot staying inside", "dir/../in.txt", filepath.Join(root, "in.txt")},
		{"absolute with dot-dot escape", root + "/../" + filepath.Base(out) + "/secret.txt", outside},
		{"symlink to a file outside", "link-out-file", outside},
		{"symlink to a directory outside", "link-out-dir", outside},
		{"file below a symlinked directory outside", "link-out-dir/o.txt", outside},
		{"new file below a symlinked directory outside", "link-out-dir/new.txt", outside},
		{"symlink inside pointing inside", "link-in", filepath.Join(root, "link-in")},
		{"below a symlinked directory inside", "link-in-dir/a.txt", filepath.Join(root, "link-in-dir", "a.txt")},
		{"symlink into another root", "link-root2", filepath.Join(root, "link-root2")},
		{"dangling symlink pointing outside", "dangling-out", outside},
		{"dangling relative symlink pointing outside", "dangling-rel-out", outside},
		{"dangling symlink pointing inside", "dangling-in", filepath.Join(root, "dangling-in")},
		{"new file below a dangling directory symlink outside", "dangling-dir-out/x/y.txt", outside},
		{"relative target judged from the link's real directory", "link-deep/esc", outside},
		{"spelled outside, really inside", filepath.Join(out, "link-into-root"), filepath.Join(root, "in.txt")},
		{"symlink loop", "loop", "error: too many levels of symbolic links"},
		{"below a file", "in.txt/x", "error: not a directory"},
		{"NUL byte", "a\x00b", "error: NUL byte"},
		{"empty", "", "error: empty path"},
	}
	for _, tt := range tests {
		got, err := ws.Resolve(tt.path)
		var oe *workspace.OutsideError
		switch {
		case tt.want == outside:
			if !errors.As(err, &oe) {
				t.Errorf("%s: Resolve(%q) = %q, %v; want an *OutsideError", tt.name, tt.path, got, err)
			}
		case strings.HasPrefix(tt.want, "error: "):
			if err == nil || errors.As(err, &oe) || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
				t.Errorf("%s: Resolve(%q) = %q, %v; want an error saying %q", tt.name, tt.path, got, err, strings.TrimPrefix(tt.want, "error: "))
			}
		default:
			if err != nil || got != tt.want {
				t.Errorf("%s: Resolve(%q) = %q, %v; want %q", tt.name, tt.path, got, err, tt.want)
			}
		}
	}
}

func TestOutsideErrorMessage(t *testing.T) {
	root, root2 := tempDir(t), tempDir(t)
	ws, err := workspace.New(root, root2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Resolve("/etc/passwd")
	var oe *workspace.OutsideError
	if !errors.As(err, &oe) {
		t.Fatalf("Resolve(/etc/passwd) error = %v, want *OutsideError", err)
	}
	msg := err.Error()
	for _, want := range []string{"/etc/passwd", "outside the workspace", root, root2} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not mention %q", msg, want)
		}
	}
	if oe.Path != "/etc/passwd" || len(oe.Roots) != 2 {
		t.Errorf("OutsideError = %+v", oe)
	}
}

func TestNewRoots(t *testing.T) {
	root := tempDir(t)
	testutil.WriteFiles(t, root, map[string]string{"file": "x"})
	link := filepath.Join(tempDir(t), "link")
	symlink(t, root, link)
	tests := []struct {
		name    string
		roots   []string
		wantErr string
	}{
		{"none", nil, "no root"},
		{"missing", []string{filepath.Join(root, "missing")}, "no such file"},
		{"a file", []string{filepath.Join(root, "file")}, "not a directory"},
	}
	for _, tt := range tests {
		_, err := workspace.New(tt.roots...)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: New(%q) error = %v, want %q", tt.name, tt.roots, err, tt.wantErr)
		}
	}
	// A root given through a symlink is kept resolved.
	ws, err := workspace.New(link)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Roots(); len(got) != 1 || got[0] != root {
		t.Errorf("Roots() = %q, want [%q]", got, root)
	}
	if got := ws.Rel(filepath.Join(link, "a", "b.go")); got != "a/b.go" {
		t.Errorf("Rel through the link = %q, want a/b.go", got)
	}
	if got := ws.Rel(filepath.Join(root, "a", "b.go")); got != "a/b.go" {
		t.Errorf("Rel = %q, want a/b.go", got)
	}
	if got := ws.Rel("/elsewhere/x"); got != "/elsewhere/x" {
		t.Errorf("Rel outside = %q, want it unchanged", got)
	}
	if !ws.Contains(filepath.Join(link, "file")) || ws.Contains("/etc") {
		t.Errorf("Contains is wrong")
	}
}
