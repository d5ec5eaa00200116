package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Change is one file edit a tool commits: the file as the tool read it (nil when the
// tool creates the file) and the complete new text, with LF line endings.
type Change struct {
	Path string
	Old  *File
	New  string
	// Label is the tool call's one-line description; editors show it in their undo
	// history.
	Label string
}

// Writer commits changes. The disk writer writes files atomically; the editor server
// provides one that sends workspace/applyEdit. A Writer must refuse a change whose Old
// no longer matches the file (ErrStale), and a creation over an existing file (ErrExists),
// and must write nothing when it fails.
type Writer interface {
	Write(ctx context.Context, c Change) error
}

// SetWriter replaces the writer through which Commit writes.
func (w *Workspace) SetWriter(wr Writer) {
	w.mu.Lock()
	w.writer = wr
	w.mu.Unlock()
}

// Commit writes c through the workspace's writer and, when the file is open in the
// editor, updates the overlay so that the next tool reads the new text at once.
func (w *Workspace) Commit(ctx context.Context, c Change) error {
	w.mu.RLock()
	wr := w.writer
	d, open := w.overlay[c.Path]
	stale := open && c.Old != nil && c.Old.Open && (d.Version != c.Old.Version || d.Text != c.Old.Text)
	w.mu.RUnlock()
	if stale {
		return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, ErrStale)
	}
	if err := wr.Write(ctx, c); err != nil {
		return err
	}
	w.mu.Lock()
	if d, ok := w.overlay[c.Path]; ok {
		d.Text = c.New
	}
	w.mu.Unlock()
	return nil
}

// DiskWriter commits changes straight to disk, atomically: the new content goes to a
// temporary file in the same directory, is synced, and is renamed over the target, so a
// reader sees the old file or the new one, never a mix. The file keeps its permissions,
// encoding, BOM, line endings and final-newline state.
type DiskWriter struct{}

// Write implements Writer.
func (DiskWriter) Write(ctx context.Context, c Change) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	format := DefaultFormat
	perm := fs.FileMode(0o644)
	current, err := os.ReadFile(c.Path)
	switch {
	case err == nil && c.Old == nil:
		return fmt.Errorf("%s: %w", c.Path, ErrExists)
	case err == nil:
		fi, serr := os.Stat(c.Path)
		if serr != nil {
			return serr
		}
		perm = fi.Mode().Perm()
		text, f, derr := Decode(current)
		// An open document's disk copy may lag its editor text; its freshness was
		// checked against the overlay by Commit.
		if !c.Old.Open && (derr != nil || text != c.Old.Text) {
			return fmt.Errorf("%s: %w", c.Path, ErrStale)
		}
		if derr == nil {
			format = f
		}
	case errors.Is(err, fs.ErrNotExist):
		if c.Old != nil && !c.Old.Open {
			return fmt.Errorf("%s was deleted since it was read: %w", c.Path, ErrStale)
		}
		if c.Old != nil {
			format = c.Old.Format
		}
	default:
		return fmt.Errorf("reading %s before writing: %w", c.Path, err)
	}
	if fi, err := os.Stat(c.Path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: %w", c.Path, ErrIsDirectory)
	}
	data := format.Encode(c.New, c.Old != nil)
	if c.Old != nil && bytes.Equal(data, current) {
		return nil
	}
	return WriteFileAtomic(c.Path, data, perm)
}

// WriteFileAtomic writes data to path through a temporary file in the same directory,
// synced and renamed into place, creating missing parent directories. On failure the
// target is untouched and the temporary file removed.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".agentls-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
