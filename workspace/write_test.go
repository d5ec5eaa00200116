package workspace_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// edit reads path through ws, as a tool does, and commits newText over it.
func edit(t *testing.T, ws *workspace.Workspace, path, newText string) error {
	t.Helper()
	f, err := ws.ReadText(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ws.Commit(context.Background(), workspace.Change{Path: path, Old: f, New: newText})
}

// noTempFiles fails if a temporary file of WriteFileAtomic is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".agentls-") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

func TestDiskWriterKeepsFormat(t *testing.T) {
	le := []byte{0xFF, 0xFE}
	tests := []struct {
		name       string
		data       []byte
		perm       fs.FileMode
		newText    string
		wantOnDisk []byte
	}{
		{"0600 kept", []byte("a\n"), 0o600, "b\n", []byte("b\n")},
		{"0755 kept", []byte("#!/bin/sh\n"), 0o755, "#!/bin/sh\necho hi\n", []byte("#!/bin/sh\necho hi\n")},
		{"CRLF kept", []byte("a\r\nb\r\n"), 0o644, "a\nc\nd\n", []byte("a\r\nc\r\nd\r\n")},
		{"BOM kept", []byte("\xEF\xBB\xBFx\n"), 0o644, "y\n", []byte("\xEF\xBB\xBFy\n")},
		{"UTF-16LE kept", utf16Bytes("日本\r\n", binary.LittleEndian, le), 0o644, "😀\n",
			utf16Bytes("😀\r\n", binary.LittleEndian, le)},
		{"final newline added back", []byte("a\n"), 0o644, "b", []byte("b\n")},
		{"no final newline kept", []byte("a"), 0o644, "b\n", []byte("b")},
		{"empty file takes the new text's", []byte(""), 0o644, "b\n", []byte("b\n")},
	}
	for _, tt := range tests {
		ws, root := testutil.Workspace(t, nil)
		path := filepath.Join(root, "f")
		if err := os.WriteFile(path, tt.data, tt.perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tt.perm); err != nil { // whatever the umask
			t.Fatal(err)
		}
		if err := edit(t, ws, path, tt.newText); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got, _ := os.ReadFile(path)
		if string(got) != string(tt.wantOnDisk) {
			t.Errorf("%s: disk holds %q, want %q", tt.name, got, tt.wantOnDisk)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != tt.perm {
			t.Errorf("%s: mode %v, want %v", tt.name, fi.Mode().Perm(), tt.perm)
		}
		noTempFiles(t, root)
	}
}

func TestDiskWriterRefuses(t *testing.T) {
	ctx := context.Background()

	t.Run("changed on disk since read", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "one\n"})
		path := filepath.Join(root, "f")
		f, _ := ws.ReadText(path, 0)
		testutil.WriteFiles(t, root, map[string]string{"f": "someone else\n"})
		before := testutil.Snapshot(t, root)
		err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "mine\n"})
		if !errors.Is(err, workspace.ErrStale) {
			t.Fatalf("Commit = %v, want ErrStale", err)
		}
		if after := testutil.Snapshot(t, root); !equalSnap(before, after) {
			t.Errorf("a stale commit wrote: %v → %v", before, after)
		}
	})

	t.Run("deleted since read", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "one\n"})
		path := filepath.Join(root, "f")
		f, _ := ws.ReadText(path, 0)
		os.Remove(path)
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "mine\n"}); !errors.Is(err, workspace.ErrStale) {
			t.Fatalf("Commit = %v, want ErrStale", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Error("a stale commit recreated the file")
		}
	})

	t.Run("creation over an existing file", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "one\n"})
		before := testutil.Snapshot(t, root)
		err := ws.Commit(ctx, workspace.Change{Path: filepath.Join(root, "f"), New: "new\n"})
		if !errors.Is(err, workspace.ErrExists) {
			t.Fatalf("Commit = %v, want ErrExists", err)
		}
		if after := testutil.Snapshot(t, root); !equalSnap(before, after) {
			t.Errorf("a refused creation wrote: %v → %v", before, after)
		}
	})

	t.Run("directory", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"d/keep": ""})
		err := ws.Commit(ctx, workspace.Change{Path: filepath.Join(root, "d"), Old: &workspace.File{}, New: "x"})
		if !errors.Is(err, workspace.ErrIsDirectory) {
			t.Fatalf("Commit = %v, want ErrIsDirectory", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ws, root := testutil.Workspace(t, nil)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := ws.Commit(cctx, workspace.Change{Path: filepath.Join(root, "f"), New: "x"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Commit = %v, want context.Canceled", err)
		}
		if _, err := os.Stat(filepath.Join(root, "f")); err == nil {
			t.Error("a cancelled commit wrote")
		}
	})
}

func equalSnap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDiskWriterCreates(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	path := filepath.Join(root, "a", "b", "c.txt")
	if err := ws.Commit(context.Background(), workspace.Change{Path: path, New: "hello"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "hello" {
		t.Errorf("created file holds %q", got)
	}
	// A new file gets the mode os.WriteFile would give it under the same umask.
	ref := filepath.Join(root, "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	refFi, _ := os.Stat(ref)
	if fi.Mode() != refFi.Mode() {
		t.Errorf("new file mode %v, want %v", fi.Mode(), refFi.Mode())
	}
	noTempFiles(t, filepath.Dir(path))
}

func TestDiskWriterThroughSymlink(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"real.txt": "old\n"})
	link := filepath.Join(root, "link.txt")
	symlink(t, "real.txt", link)
	if err := edit(t, ws, link, "new\n"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v, %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "real.txt")); string(got) != "new\n" {
		t.Errorf("target holds %q, want the new text", got)
	}
}

func TestDiskWriterUnchangedIsNotWritten(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f": "same\r\n"})
	path := filepath.Join(root, "f")
	before, _ := os.Stat(path)
	if err := edit(t, ws, path, "same\n"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("an edit that changes nothing replaced the file")
	}
}

func TestCommitOverlay(t *testing.T) {
	ctx := context.Background()

	t.Run("open document changed in the editor", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		ws.Open(path, 1, "editor\n")
		f, _ := ws.ReadText(path, 0)
		ws.Update(path, 2, "typed more\n")
		err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"})
		if !errors.Is(err, workspace.ErrStale) {
			t.Fatalf("Commit = %v, want ErrStale", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "disk\n" {
			t.Errorf("disk holds %q after a stale commit", got)
		}
		if d, _ := ws.Document(path); d.Text != "typed more\n" {
			t.Errorf("overlay holds %q after a stale commit", d.Text)
		}
	})

	t.Run("new version with the same text", func(t *testing.T) {
		// As when the editor reports a committed edit back after the next tool read.
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		ws.Open(path, 1, "editor\n")
		f, _ := ws.ReadText(path, 0)
		ws.Update(path, 2, "editor\n")
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"}); err != nil {
			t.Fatalf("Commit = %v, want success", err)
		}
	})

	t.Run("read from disk, then opened with other text", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		f, _ := ws.ReadText(path, 0)
		ws.Open(path, 1, "unsaved edit\n")
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"}); !errors.Is(err, workspace.ErrStale) {
			t.Fatalf("Commit = %v, want ErrStale", err)
		}
	})

	t.Run("fresh: disk and overlay updated", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		ws.Open(path, 1, "editor\n")
		f, _ := ws.ReadText(path, 0)
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := ws.ReadText(path, 0); got.Text != "tool\n" {
			t.Errorf("next read sees %q, want the committed text", got.Text)
		}
		if got, _ := os.ReadFile(path); string(got) != "tool\n" {
			t.Errorf("disk holds %q", got)
		}
	})

	t.Run("closed unsaved since read", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		ws.Open(path, 1, "unsaved\n")
		f, _ := ws.ReadText(path, 0)
		ws.Close(path)
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"}); !errors.Is(err, workspace.ErrStale) {
			t.Fatalf("Commit = %v, want ErrStale", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "disk\n" {
			t.Errorf("disk holds %q after a stale commit", got)
		}
	})

	t.Run("closed after saving since read", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"f": "disk\n"})
		path := filepath.Join(root, "f")
		ws.Open(path, 1, "saved\n")
		f, _ := ws.ReadText(path, 0)
		testutil.WriteFiles(t, root, map[string]string{"f": "saved\n"})
		ws.Close(path)
		if err := ws.Commit(ctx, workspace.Change{Path: path, Old: f, New: "tool\n"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("custom writer", func(t *testing.T) {
		ws, root := testutil.Workspace(t, nil)
		var got []workspace.Change
		ws.SetWriter(writerFunc(func(_ context.Context, c workspace.Change) error {
			got = append(got, c)
			return nil
		}))
		path := filepath.Join(root, "x", "..", "f")
		if err := ws.Commit(ctx, workspace.Change{Path: path, New: "x", Label: "create f"}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Path != filepath.Join(root, "f") || got[0].Label != "create f" {
			t.Errorf("writer got %+v", got)
		}
		if _, err := os.Stat(filepath.Join(root, "f")); err == nil {
			t.Error("the disk was written despite another writer")
		}
	})
}

type writerFunc func(context.Context, workspace.Change) error

func (f writerFunc) Write(ctx context.Context, c workspace.Change) error { return f(ctx, c) }

func TestWriteFileAtomicFailures(t *testing.T) {
	root := tempDir(t)
	testutil.WriteFiles(t, root, map[string]string{"file": "x"})

	// A parent that is a file: nothing created.
	err := workspace.WriteFileAtomic(filepath.Join(root, "file", "sub", "f"), []byte("x"), 0o644)
	if err == nil {
		t.Fatal("writing below a file succeeded")
	}
	if after := testutil.Snapshot(t, root); len(after) != 1 {
		t.Errorf("files left: %v", after)
	}

	t.Run("directory not writable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root ignores directory permissions")
		}
		dir := filepath.Join(root, "ro")
		testutil.WriteFiles(t, dir, map[string]string{"f": "old"})
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		if err := workspace.WriteFileAtomic(filepath.Join(dir, "f"), []byte("new"), 0o644); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("WriteFileAtomic = %v, want a permission error", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != "old" {
			t.Errorf("file holds %q", got)
		}
		noTempFiles(t, dir)
	})
}
