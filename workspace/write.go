package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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
//
// When the file is open, the change is stale (ErrStale, nothing written) if the editor's
// text is no longer what the tool read. The text is compared, not the version: after a
// commit the editor reports the edit back under a new version, and a tool that read the
// committed text before that report is not stale. A document the tool read from the
// overlay that has been closed since is judged by the writer against the file itself,
// as if the tool had read it from disk.
func (w *Workspace) Commit(ctx context.Context, c Change) error {
	c.Path = filepath.Clean(c.Path)
	w.mu.RLock()
	wr := w.writer
	d, open := w.overlay[c.Path]
	stale := open && c.Old != nil && d.Text != c.Old.Text
	w.mu.RUnlock()
	if stale {
		return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, ErrStale)
	}
	if !open && c.Old != nil && c.Old.Open {
		old := *c.Old
		old.Open = false
		c.Old = &old
	}
	// The lock is not held while writing: an editor writer waits for the editor, which
	// reports the edit back through Update.
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

// DiskWriter commits changes straight to disk, atomically (see WriteFileAtomic). An
// existing file keeps its permissions, encoding, BOM, line endings and final-newline
// state; a symlink keeps pointing to the file it names.
type DiskWriter struct{}

// Write implements Writer.
func (DiskWriter) Write(ctx context.Context, c Change) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := os.Stat(c.Path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s: %w", c.Path, ErrIsDirectory)
	case err == nil && c.Old == nil:
		return fmt.Errorf("%s: %w", c.Path, ErrExists)
	case errors.Is(err, fs.ErrNotExist):
		if c.Old != nil && !c.Old.Open {
			return fmt.Errorf("%s was deleted since it was read: %w", c.Path, ErrStale)
		}
		// A new file, or a document the editor holds that was never saved.
		format := DefaultFormat
		if c.Old != nil {
			format = c.Old.Format
		}
		return WriteFileAtomic(c.Path, format.Encode(c.New, false), 0o644)
	case err != nil:
		return fmt.Errorf("checking %s before writing: %w", c.Path, err)
	}
	current, _, err := readLimited(c.Path, 0)
	if err != nil {
		return fmt.Errorf("reading %s before writing: %w", c.Path, err)
	}
	text, format, derr := Decode(current)
	switch {
	case c.Old.Open && derr != nil:
		// The editor's text is what the tool read; the disk copy is of no help.
		text, format = c.Old.Text, c.Old.Format
	case c.Old.Open:
		// An open document's disk copy may lag its editor text; its freshness was
		// checked against the overlay by Commit.
	case derr != nil || text != c.Old.Text:
		return fmt.Errorf("%s changed on disk since it was read: %w", c.Path, ErrStale)
	}
	// An empty file has no final-newline convention to keep.
	data := format.Encode(c.New, text != "")
	if bytes.Equal(data, current) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return WriteFileAtomic(c.Path, data, fi.Mode().Perm())
}

// WriteFileAtomic writes data to path through a temporary file in the same directory,
// synced and renamed into place, so that a reader sees the old content or the new, never
// a mix. As with os.WriteFile, a new file gets perm (before the umask) and an existing
// one keeps its mode. A symlink is written through: the file it points to is replaced
// and the link kept. Missing parent directories are created. On failure the target is
// untouched and neither the temporary file nor any directory made for it is left.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	target, err := realPath(abs)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	keepMode := fs.FileMode(0)
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("writing %s: %w", path, ErrIsDirectory)
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("writing %s: it is %s, not a regular file", path, FileKind(fi.Mode()))
	case err == nil:
		keepMode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("writing %s: %w", path, err)
	}

	dir := filepath.Dir(target)
	made, err := mkdirAll(dir)
	defer func() {
		if err != nil {
			for i := len(made) - 1; i >= 0; i-- {
				os.Remove(made[i]) // only if still empty: someone else may have used it
			}
		}
	}()
	if err != nil {
		return fmt.Errorf("writing %s: creating %s: %w", path, dir, err)
	}

	createPerm := perm
	if keepMode != 0 {
		// Readable only by us until the final mode is set below.
		createPerm = 0o600
	}
	tmp, err := createTemp(dir, filepath.Base(target), createPerm)
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
	if keepMode != 0 {
		if err = tmp.Chmod(keepMode); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new file next to the one named base in dir. Unlike os.CreateTemp
// it takes the permissions, so that the umask applies to a new file as it would to one
// created in place.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, "."+base+".agentls-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("creating a temporary file in %s: too many attempts", dir)
}

// mkdirAll is os.MkdirAll that reports the directories it created, outermost first, so
// that a failed write can remove them again.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, &fs.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // made by someone else meanwhile
		}
		if err != nil {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}
