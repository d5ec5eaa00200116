package files

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// call runs tool with args the way the scheduler does, minus consent.
func call(t *testing.T, tool tools.Tool, args string) (*tools.Result, error) {
	t.Helper()
	return testutil.Call(context.Background(), t, tool, args, nil)
}

// mustCall runs tool and fails the test on an error.
func mustCall(t *testing.T, tool tools.Tool, args string) *tools.Result {
	t.Helper()
	res, err := call(t, tool, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tool.Info().Name, args, err)
	}
	return res
}

// snapshots records the files under dirs, to check that a failing call wrote nothing.
type snapshots map[string]map[string]string

func snapshot(t *testing.T, dirs ...string) snapshots {
	t.Helper()
	s := snapshots{}
	for _, d := range dirs {
		s[d] = testutil.Snapshot(t, d)
	}
	return s
}

// unchanged fails the test if any file under the snapshotted directories changed.
func (s snapshots) unchanged(t *testing.T) {
	t.Helper()
	for d, before := range s {
		after := testutil.Snapshot(t, d)
		if !maps.Equal(before, after) {
			t.Errorf("files under %s changed by a failing call:\nbefore %v\nafter  %v", d, keys(before), keys(after))
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// mustFail runs tool, requires an error of type want whose message contains every one
// of msgParts, and requires that nothing under dirs was written.
func mustFail(t *testing.T, tool tools.Tool, args string, want tools.ErrorType, dirs []string, msgParts ...string) *tools.Error {
	t.Helper()
	snap := snapshot(t, dirs...)
	res, err := call(t, tool, args)
	if err == nil {
		t.Fatalf("%s %s succeeded (%q), want %s", tool.Info().Name, args, res.Output, want)
	}
	if got := testutil.ErrorType(err); got != want {
		t.Fatalf("%s %s: error type %q (%v), want %q", tool.Info().Name, args, got, err, want)
	}
	for _, p := range msgParts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s %s: error %q does not mention %q", tool.Info().Name, args, err, p)
		}
	}
	snap.unchanged(t)
	return tools.AsError(err, "")
}

// outsideDir makes a directory outside the workspace holding secret.txt.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, dir, map[string]string{"secret.txt": "secret\n", "sub/deep.txt": "deep\n"})
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readDisk(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeDisk(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// interferingWriter changes the file on disk just before handing the change to the
// disk writer: another program writing between the tool's read and its commit.
type interferingWriter struct {
	t       *testing.T
	content string
}

func (w interferingWriter) Write(ctx context.Context, c workspace.Change) error {
	if err := os.WriteFile(c.Path, []byte(w.content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return workspace.DiskWriter{}.Write(ctx, c)
}

// tinyPNG is a 1×1 PNG image.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
