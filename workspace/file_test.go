package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

func TestOverlay(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "on disk\n"})
	path := filepath.Join(root, "a.txt")

	f, err := ws.ReadText(path, 0)
	if err != nil || f.Text != "on disk\n" || f.Open || f.Size != 8 || f.ModTime.IsZero() {
		t.Fatalf("ReadText before Open = %+v, %v", f, err)
	}

	// Editors send their own line endings; the overlay keeps LF text and the format.
	ws.Open(path, 1, "in the editor\r\n")
	d, ok := ws.Document(path)
	if !ok || d.Text != "in the editor\n" || d.Version != 1 || !d.Format.CRLF {
		t.Fatalf("Document = %+v, %v", d, ok)
	}
	f, err = ws.ReadText(path, 0)
	if err != nil || f.Text != "in the editor\n" || !f.Open || f.Version != 1 || f.Size != 8 {
		t.Fatalf("ReadText of an open document = %+v, %v; want the editor's text", f, err)
	}

	// The overlay is keyed by the cleaned path.
	if !ws.Update(filepath.Join(root, ".", "a.txt"), 2, "edited\n") {
		t.Fatal("Update of an open document reported it closed")
	}
	if f, _ := ws.ReadText(path, 0); f.Text != "edited\n" || f.Version != 2 {
		t.Fatalf("after Update: %+v", f)
	}
	if ws.Update(filepath.Join(root, "other.txt"), 1, "x") {
		t.Error("Update of a document that is not open reported success")
	}
	if docs := ws.Documents(); len(docs) != 1 || docs[0].Path != path {
		t.Errorf("Documents() = %+v", docs)
	}

	// An open document not yet on disk is readable.
	fresh := filepath.Join(root, "unsaved.txt")
	ws.Open(fresh, 7, "new\n")
	if f, err := ws.ReadText(fresh, 0); err != nil || f.Text != "new\n" || f.Size != 0 || !f.ModTime.IsZero() {
		t.Errorf("ReadText of an unsaved document = %+v, %v", f, err)
	}

	ws.Close(path)
	if f, _ := ws.ReadText(path, 0); f.Text != "on disk\n" || f.Open {
		t.Errorf("after Close: %+v; want the disk text", f)
	}
	if _, ok := ws.Document(path); ok {
		t.Error("Document still open after Close")
	}
}

func TestReadErrors(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"big.txt":  strings.Repeat("x", 100),
		"bin.dat":  "\x00\x01\x02",
		"latin1":   "caf\xe9\n",
		"dir/keep": "",
	})
	tests := []struct {
		name    string
		path    string
		max     int64
		wantErr error
		wantMsg string
	}{
		{"missing", "missing.txt", 0, fs.ErrNotExist, ""},
		{"directory", "dir", 0, workspace.ErrIsDirectory, ""},
		{"over the limit", "big.txt", 99, workspace.ErrTooLarge, "100 bytes"},
		{"binary", "bin.dat", 0, workspace.ErrBinary, "bin.dat"},
		{"not UTF-8", "latin1", 0, workspace.ErrBinary, ""},
	}
	for _, tt := range tests {
		_, err := ws.ReadText(filepath.Join(root, tt.path), tt.max)
		if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s: ReadText error = %v, want %v mentioning %q", tt.name, err, tt.wantErr, tt.wantMsg)
		}
	}
	if f, err := ws.ReadText(filepath.Join(root, "big.txt"), 100); err != nil || len(f.Text) != 100 {
		t.Errorf("ReadText at exactly the limit: %v", err)
	}
	if b, err := ws.ReadBytes(filepath.Join(root, "bin.dat"), 0); err != nil || string(b) != "\x00\x01\x02" {
		t.Errorf("ReadBytes = %q, %v", b, err)
	}
	if _, err := ws.ReadBytes(filepath.Join(root, "big.txt"), 10); !errors.Is(err, workspace.ErrTooLarge) {
		t.Errorf("ReadBytes over the limit: %v", err)
	}
	// Files whose size is not known in advance are read to their end.
	if b, err := ws.ReadBytes("/proc/self/status", 0); err != nil || !strings.Contains(string(b), "Name:") {
		if _, serr := os.Stat("/proc/self/status"); serr == nil {
			t.Errorf("ReadBytes(/proc/self/status) = %q, %v", b, err)
		}
	}
}
