package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestWriteFileCreate(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	inv, err := testutil.Build(t, NewWriteFile(ws), `{"file_path": "sub/dir/new.txt", "content": "hello\nworld\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(root, "sub/dir/new.txt")
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Type != confirm.TypeEdit || d.Path != abs || d.OriginalContent != nil || d.NewContent != "hello\nworld\n" {
		t.Fatalf("details %+v", d)
	}
	for _, s := range []string{"--- /dev/null", "+++ b/sub/dir/new.txt", "+hello", "+world"} {
		if !strings.Contains(d.Diff, s) {
			t.Errorf("diff lacks %q:\n%s", s, d.Diff)
		}
	}
	if _, err := os.Stat(abs); !os.IsNotExist(err) {
		t.Fatalf("Confirmation wrote the file: %v", err)
	}
	res, err := inv.Execute(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readDisk(t, abs); got != "hello\nworld\n" {
		t.Errorf("disk %q", got)
	}
	if want := "Successfully created and wrote to new file: " + abs + "."; res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	if res.Diff == nil || res.Diff.Path != abs || res.Diff.OriginalContent != nil || res.Diff.NewContent != "hello\nworld\n" || res.Diff.Diff != d.Diff {
		t.Errorf("result diff %+v", res.Diff)
	}
	if l := inv.Locations(); len(l) != 1 || l[0].Path != abs {
		t.Errorf("locations %+v", l)
	}
}

func TestWriteFileOverwrite(t *testing.T) {
	utf16 := "\xFF\xFEa\x00\r\x00\n\x00"
	cases := []struct {
		name, old, content, disk, shownOld, shownNew string
	}{
		{name: "plain", old: "old\n", content: "new\n", disk: "new\n", shownOld: "old\n", shownNew: "new\n"},
		{name: "crlf kept", old: "a\r\nb\r\n", content: "x\ny\n", disk: "x\r\ny\r\n", shownOld: "a\nb\n", shownNew: "x\ny\n"},
		{name: "crlf content into crlf file", old: "a\r\nb\r\n", content: "x\r\ny\r\n", disk: "x\r\ny\r\n", shownOld: "a\nb\n", shownNew: "x\ny\n"},
		{name: "bom kept", old: "\uFEFFold\n", content: "new\n", disk: "\uFEFFnew\n", shownOld: "old\n", shownNew: "new\n"},
		{name: "bom in content not doubled", old: "\uFEFFold\n", content: "\uFEFFnew\n", disk: "\uFEFFnew\n", shownOld: "old\n", shownNew: "new\n"},
		{name: "utf-16 kept", old: utf16, content: "b\n", disk: "\xFF\xFEb\x00\r\x00\n\x00", shownOld: "a\n", shownNew: "b\n"},
		{name: "final newline kept", old: "old\n", content: "new", disk: "new\n", shownOld: "old\n", shownNew: "new\n"},
		{name: "no final newline kept", old: "old", content: "new\n", disk: "new", shownOld: "old", shownNew: "new"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": c.old})
			abs := filepath.Join(root, "f.txt")
			inv, err := testutil.Build(t, NewWriteFile(ws), fmt.Sprintf(`{"file_path": "f.txt", "content": %q}`, c.content))
			if err != nil {
				t.Fatal(err)
			}
			d, err := inv.Confirmation(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.OriginalContent == nil || *d.OriginalContent != c.shownOld || d.NewContent != c.shownNew {
				t.Errorf("details original %v new %q", d.OriginalContent, d.NewContent)
			}
			res, err := inv.Execute(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := readDisk(t, abs); got != c.disk {
				t.Errorf("disk %q, want %q", got, c.disk)
			}
			if want := "Successfully overwrote file: " + abs + "."; res.Output != want {
				t.Errorf("output %q", res.Output)
			}
		})
	}
}

func TestWriteFileModify(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "old\n"})
	inv, err := testutil.Build(t, NewWriteFile(ws), `{"file_path": "f.txt", "content": "proposed\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	modify := inv.Capabilities().Modify
	if modify == nil {
		t.Fatal("write_file call takes no modified version")
	}
	if err := modify("edited by a person\r\n"); err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.NewContent != "edited by a person\n" {
		t.Errorf("details new content %q", d.NewContent)
	}
	res, err := inv.Execute(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readDisk(t, filepath.Join(root, "f.txt")); got != "edited by a person\n" {
		t.Errorf("disk %q", got)
	}
	if !strings.Contains(res.Output, "user modified") {
		t.Errorf("output does not say the content was modified: %q", res.Output)
	}
}

// TestWriteFileStale checks that a file changed by someone else while the write is
// being committed is not overwritten.
func TestWriteFileStale(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "v1\n"})
	abs := filepath.Join(root, "f.txt")
	ws.SetWriter(interferingWriter{t: t, content: "external\n"})
	_, err := call(t, NewWriteFile(ws), `{"file_path": "f.txt", "content": "mine\n"}`)
	if got := testutil.ErrorType(err); got != tools.ErrStaleContent {
		t.Fatalf("error %v, want stale_content", err)
	}
	if !strings.Contains(err.Error(), "f.txt") || !strings.Contains(err.Error(), "Read the file again") {
		t.Errorf("message %q", err)
	}
	if got := readDisk(t, abs); got != "external\n" {
		t.Errorf("the tool overwrote the external change: %q", got)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestWriteFileStaleCreate checks that a file created by someone else while a new file
// is being written is not overwritten.
func TestWriteFileStaleCreate(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	ws.SetWriter(interferingWriter{t: t, content: "external\n"})
	_, err := call(t, NewWriteFile(ws), `{"file_path": "f.txt", "content": "mine\n"}`)
	if got := testutil.ErrorType(err); got != tools.ErrStaleContent {
		t.Fatalf("error %v, want stale_content", err)
	}
	if got := readDisk(t, filepath.Join(root, "f.txt")); got != "external\n" {
		t.Errorf("disk %q", got)
	}
}

func TestWriteFileRefusals(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"bin.dat":    "\x00\x01binary",
		"latin1.txt": "caf\xe9\n",
		"dir/x.txt":  "x\n",
		"file":       "a file\n",
	})
	big := filepath.Join(root, "huge.txt")
	writeDisk(t, big, "")
	if err := os.Truncate(big, 21<<20); err != nil {
		t.Fatal(err)
	}
	dirs := []string{root}
	tool := NewWriteFile(ws)
	mustFail(t, tool, `{"file_path": "bin.dat", "content": "x"}`, tools.ErrReadContentFailure, dirs, "bin.dat", "binary")
	mustFail(t, tool, `{"file_path": "latin1.txt", "content": "x"}`, tools.ErrReadContentFailure, dirs, "latin1.txt", "UTF-8")
	mustFail(t, tool, `{"file_path": "dir", "content": "x"}`, tools.ErrTargetIsDirectory, dirs, "dir")
	mustFail(t, tool, `{"file_path": "huge.txt", "content": "x"}`, tools.ErrFileTooLarge, dirs, "huge.txt")
	// A parent that is a file: nothing can be created below it.
	mustFail(t, tool, `{"file_path": "file/child.txt", "content": "x"}`, tools.ErrInvalidParams, dirs, "not a directory")
}

// TestWriteFileOverlay checks that a document open in the editor is what an overwrite
// replaces, and that the overlay follows the write.
func TestWriteFileOverlay(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "disk\n"})
	abs := filepath.Join(root, "a.txt")
	ws.Open(abs, 7, "editor text\n")
	inv, err := testutil.Build(t, NewWriteFile(ws), `{"file_path": "a.txt", "content": "new\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.OriginalContent == nil || *d.OriginalContent != "editor text\n" {
		t.Errorf("original %v, want the editor's text", d.OriginalContent)
	}
	if _, err := inv.Execute(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if doc, _ := ws.Document(abs); doc.Text != "new\n" {
		t.Errorf("overlay %q", doc.Text)
	}
	if got := readDisk(t, abs); got != "new\n" {
		t.Errorf("disk %q", got)
	}

}

func TestWriteFileCancelled(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "a\n"})
	inv, err := testutil.Build(t, NewWriteFile(ws), `{"file_path": "a.txt", "content": "b\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := inv.Execute(ctx, nil); err != context.Canceled {
		t.Errorf("error %v, want context.Canceled", err)
	}
	snap.unchanged(t)
}
