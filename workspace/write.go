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
	"strings"
	"syscall"
	"unicode/utf8"
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
	// Delete removes the file, which must still hold Old's text; New is ignored.
	Delete bool
}

// BatchWriter is a Writer that can commit several changes as one: the editor's writer
// sends them in one workspace/applyEdit, which the editor undoes in one step.
type BatchWriter interface {
	Writer
	// WriteAll commits cs as one, or none of them.
	WriteAll(ctx context.Context, cs []Change) error
}

// Writer commits changes. The disk writer writes files atomically; the editor server
// provides one that sends workspace/applyEdit. A Writer must refuse a change whose Old
// no longer matches the file (ErrStale), and a creation over an existing file (ErrExists),
// and must write nothing when it fails.
type Writer interface {
	Write(ctx context.Context, c Change) error
}

// A Settler is a Writer through which the editor may hold changes it has not reported
// yet: an edit of agentls's it applied, typing since. Commit lets it wait for them
// (bounded) before comparing the change with the overlay, so that the change is judged
// against what the editor holds.
type Settler interface {
	Settle(ctx context.Context, paths []string)
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
	w.settle(ctx, []Change{c})
	w.mu.Lock()
	wr := w.writer
	d, open := w.overlay[c.Path]
	var version int32
	if open {
		d.derive()
		version = d.version
	}
	stale := open && c.Old != nil && d.text != c.Old.Text
	w.mu.Unlock()
	if stale {
		return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, ErrStale)
	}
	if !open && c.Old != nil && c.Old.Open {
		old := *c.Old
		old.Open = false
		c.Old = &old
	}
	// The lock is not held while writing: an editor writer waits for the editor, which
	// reports the edit back through Change.
	if err := wr.Write(ctx, c); err != nil {
		return err
	}
	w.committed(c, version)
	return nil
}

// settle lets the writer, if it is a Settler, wait for the editor's reports of the
// files cs change.
func (w *Workspace) settle(ctx context.Context, cs []Change) {
	w.mu.Lock()
	st, ok := w.writer.(Settler)
	w.mu.Unlock()
	if !ok {
		return
	}
	paths := make([]string, len(cs))
	for i, c := range cs {
		paths[i] = filepath.Clean(c.Path)
	}
	st.Settle(ctx, paths)
}

// committed brings the overlay up to date with a change its writer committed, made
// against the editor's version of the document (when it is open).
func (w *Workspace) committed(c Change, version int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.Delete {
		delete(w.overlay, c.Path)
		delete(w.edited, c.Path)
		return
	}
	if d, ok := w.overlay[c.Path]; ok && d.version == version {
		// Until the editor reports the edit, its text lacks it (see documents.go). An
		// editor that has reported since (an editor applying the edit reports it before
		// it answers, and may report typing after it too) holds the truth: its text is
		// kept, as Change keeps it.
		d.text, d.current = c.New, true
	}
	w.edited[c.Path] = true
}

// CommitAll commits cs as Commit commits each, as one edit where the writer can
// (BatchWriter): in the editor, one step to undo. Otherwise they are committed one after
// another, and the first that fails stops the rest: the error says which were written.
// Every change is checked against the overlay before any is written.
func (w *Workspace) CommitAll(ctx context.Context, cs []Change) error {
	w.settle(ctx, cs)
	w.mu.Lock()
	wr := w.writer
	versions := make([]int32, len(cs))
	for i := range cs {
		cs[i].Path = filepath.Clean(cs[i].Path)
		c := cs[i]
		if d, open := w.overlay[c.Path]; open {
			d.derive()
			versions[i] = d.version
			if c.Old != nil && d.text != c.Old.Text {
				w.mu.Unlock()
				return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, ErrStale)
			}
		}
	}
	w.mu.Unlock()
	bw, ok := wr.(BatchWriter)
	if !ok {
		for i, c := range cs {
			if err := w.Commit(ctx, c); err != nil {
				if i > 0 {
					return fmt.Errorf("%w (the %d changes before it were written)", err, i)
				}
				return err
			}
		}
		return nil
	}
	if err := bw.WriteAll(ctx, cs); err != nil {
		return err
	}
	for i, c := range cs {
		w.committed(c, versions[i])
	}
	return nil
}

// DiskWriter commits changes straight to disk, atomically (see WriteFileAtomic). An
// existing file keeps its permissions, encoding, BOM and final-newline state, and every
// line a change leaves alone keeps its bytes, line ending included, so that an edit of a
// file that mixes CRLF and LF line endings changes only the lines it changes. A symlink
// keeps pointing to the file it names.
//
// Writers exclude each other, in one process or in several (the editor server and
// agentls prompt, two editors on one repository): a DiskWriter holds an advisory lock
// (flock(2), where the system has it) on the file across its re-read, its comparison with
// the text the tool read, and its rename, so that of two changes computed from the same
// text one is written and the other is ErrStale, and of two creations of one file one
// is ErrExists. Programs that take no lock (an editor saving, git) are caught by the
// comparison, unless they write between it and the rename.
type DiskWriter struct{}

// maxRounds bounds how often a write starts again because the file was created, removed
// or replaced between its look at it and its act. Each such round is another writer's
// progress, so they are few; the bound only keeps a pathological race from spinning.
const maxRounds = 100

// Write implements Writer.
func (DiskWriter) Write(ctx context.Context, c Change) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.Delete {
		return deleteFile(ctx, c)
	}
	target, err := writeTarget(c.Path)
	if err != nil {
		return err
	}
	for range maxRounds {
		fi, err := os.Stat(target)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Errorf("%s: %w", c.Path, ErrIsDirectory)
		case err == nil && c.Old == nil:
			return fmt.Errorf("%s: %w", c.Path, ErrExists)
		case err == nil && !fi.Mode().IsRegular():
			return fmt.Errorf("writing %s: it is %s, not a regular file", c.Path, FileKind(fi.Mode()))
		case errors.Is(err, fs.ErrNotExist):
			if c.Old != nil && !c.Old.Open {
				return fmt.Errorf("%s was deleted since it was read: %w", c.Path, ErrStale)
			}
			// A new file, or a document the editor holds that was never saved.
			format := DefaultFormat()
			if c.Old != nil {
				format = c.Old.Format
			}
			err := createFile(target, format.Encode(c.New, false), 0o644)
			switch {
			case errors.Is(err, fs.ErrExist) && c.Old == nil:
				return fmt.Errorf("%s was created by another writer meanwhile: %w", c.Path, ErrExists)
			case errors.Is(err, fs.ErrExist):
				continue // saved meanwhile: written over as any existing file
			case err != nil:
				return fmt.Errorf("writing %s: %w", c.Path, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("checking %s before writing: %w", c.Path, err)
		}
		unlock, err := lockFile(ctx, target)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while this waited for the lock
		}
		if err != nil {
			return fmt.Errorf("locking %s before writing: %w", c.Path, err)
		}
		err = writeLocked(ctx, c, target)
		unlock()
		return err
	}
	return fmt.Errorf("writing %s: other writers kept creating and removing it", c.Path)
}

// deleteFile removes c.Path, a regular file, if it still holds c.Old's text.
func deleteFile(ctx context.Context, c Change) error {
	if c.Old == nil {
		return fmt.Errorf("deleting %s: nothing says what it must hold", c.Path)
	}
	fi, err := os.Lstat(c.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s was deleted since it was read: %w", c.Path, ErrStale)
	case err != nil:
		return fmt.Errorf("checking %s before deleting it: %w", c.Path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("deleting %s: it is %s, not a regular file", c.Path, FileKind(fi.Mode()))
	}
	unlock, err := lockFile(ctx, c.Path)
	if err != nil {
		return fmt.Errorf("locking %s before deleting it: %w", c.Path, err)
	}
	defer unlock()
	current, _, err := readLimited(c.Path, 0)
	if err != nil {
		return fmt.Errorf("reading %s before deleting it: %w", c.Path, err)
	}
	if stored, _, derr := decodeStored(current); derr != nil || lfText(stored) != c.Old.Text {
		return fmt.Errorf("%s changed on disk since it was read: %w", c.Path, ErrStale)
	}
	if err := os.Remove(c.Path); err != nil {
		return fmt.Errorf("deleting %s: %w", c.Path, err)
	}
	return nil
}

// writeLocked writes c over target, the real path of c.Path, an existing regular file
// whose lock the caller holds: it compares the file with the text the tool read and, if
// that is what it still holds, replaces it.
func writeLocked(ctx context.Context, c Change, target string) error {
	current, fi, err := readLimited(target, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Removed by a program that takes no lock.
			return fmt.Errorf("%s was deleted since it was read: %w", c.Path, ErrStale)
		}
		return fmt.Errorf("reading %s before writing: %w", c.Path, err)
	}
	stored, format, derr := decodeStored(current)
	text := lfText(stored)
	switch {
	case c.Old.Open && derr != nil:
		// The editor's text is what the tool read; the disk copy is of no help.
		stored, text, format = "", c.Old.Text, c.Old.Format
	case c.Old.Open:
		// An open document's disk copy may lag its editor text; its freshness was
		// checked against the overlay by Commit.
	case derr != nil || text != c.Old.Text:
		return fmt.Errorf("%s changed on disk since it was read (by another program, or another agentls): %w", c.Path, ErrStale)
	}
	var data []byte
	switch {
	case text == "":
		// An empty file has no final-newline convention to keep.
		data = format.Encode(c.New, false)
	case derr != nil:
		data = format.Encode(c.New, true)
	default:
		data = format.encodeOver(stored, text, format.WithFinalNewline(c.New))
	}
	if bytes.Equal(data, current) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := replaceFile(target, data, 0, keptMode(fi)); err != nil {
		return fmt.Errorf("writing %s: %w", c.Path, err)
	}
	return nil
}

// writeTarget returns the file a write to path replaces: its absolute path with every
// symlink resolved, so that a symlink is written through and kept.
func writeTarget(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	target, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return target, nil
}

// keptMode returns the mode bits of fi that a replacement of the file keeps.
func keptMode(fi fs.FileInfo) fs.FileMode {
	return fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// WriteFileAtomic writes data to path through a temporary file in the same directory,
// synced and renamed into place, so that a reader sees the old content or the new, never
// a mix. As with os.WriteFile, a new file gets perm (before the umask) and an existing
// one keeps its mode. A symlink is written through: the file it points to is replaced
// and the link kept. Missing parent directories are created. On failure the target is
// untouched and neither the temporary file nor any directory made for it is left.
//
// An existing file is replaced under the lock a DiskWriter takes, so that this write
// does not fall between another writer's comparison and its rename.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	for range maxRounds {
		fi, err := os.Stat(target)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Errorf("writing %s: %w", path, ErrIsDirectory)
		case err == nil && !fi.Mode().IsRegular():
			return fmt.Errorf("writing %s: it is %s, not a regular file", path, FileKind(fi.Mode()))
		case errors.Is(err, fs.ErrNotExist):
			if err := replaceFile(target, data, perm, 0); err != nil {
				return fmt.Errorf("writing %s: %w", path, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("writing %s: %w", path, err)
		}
		unlock, err := lockFile(context.Background(), target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed while this waited for the lock
		case errors.Is(err, fs.ErrPermission):
			// Not readable, so not lockable; nor can a DiskWriter compare it.
			unlock = func() {}
		case err != nil:
			return fmt.Errorf("locking %s before writing: %w", path, err)
		}
		if fi, err = os.Stat(target); err == nil {
			err = replaceFile(target, data, 0, keptMode(fi))
		}
		unlock()
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	return fmt.Errorf("writing %s: other writers kept creating and removing it", path)
}

// replaceFile writes data to target, an absolute path with no symlink in it, through a
// synced temporary file renamed over it. A new file is created with perm (before the
// umask); keepMode, when not zero, is the mode of the file replaced, which the new one
// keeps. On failure neither the temporary file nor a directory made for it is left.
func replaceFile(target string, data []byte, perm, keepMode fs.FileMode) error {
	return writeThroughTemp(target, data, perm, keepMode, false)
}

// createFile writes data to target, an absolute path with no symlink in it, if no file
// is there, and returns an error matching fs.ErrExist if one is: of two writers creating
// the same file, one fails. The file is written in full under a temporary name and then
// linked into place, so that no reader sees part of it; where the file system has no
// hard links, it is created in place with O_EXCL instead.
func createFile(target string, data []byte, perm fs.FileMode) error {
	err := writeThroughTemp(target, data, perm, 0, true)
	if errors.Is(err, errNoLink) {
		return createInPlace(target, data, perm)
	}
	return err
}

// errNoLink reports that a temporary file could not be linked into place for a reason
// other than a file already there, such as a file system without hard links.
var errNoLink = errors.New("cannot link the temporary file into place")

// writeThroughTemp writes data to a new temporary file next to target, syncs it and puts
// it in target's place: renamed over whatever is there, or with link set, linked there
// only if nothing is (an error matching fs.ErrExist otherwise). Missing directories are
// created; on failure neither they nor the temporary file are left. perm and keepMode
// are as for replaceFile.
func writeThroughTemp(target string, data []byte, perm, keepMode fs.FileMode, link bool) (err error) {
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
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	removeOrphanTemps(dir)

	createPerm := perm
	if keepMode != 0 {
		// Readable only by us until the final mode is set below.
		createPerm = 0o600
	}
	tmp, err := createTemp(dir, filepath.Base(target), createPerm)
	if err != nil {
		return err
	}
	placed := false
	defer func() {
		if err != nil {
			tmp.Close()
		}
		if err != nil || (link && placed) {
			// After a link the data has two names; the temporary one goes.
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if keepMode != 0 {
		if err = tmp.Chmod(keepMode); err != nil {
			return err
		}
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if !link {
		return os.Rename(tmp.Name(), target)
	}
	switch err = os.Link(tmp.Name(), target); {
	case err == nil:
		placed = true
	case !errors.Is(err, fs.ErrExist):
		err = fmt.Errorf("%w: %w", errNoLink, err)
	}
	return err
}

// createInPlace creates target, which must not exist, and writes data to it: createFile
// for file systems without hard links. A reader may see the file before all of it is
// written. On failure the file and any directory made for it are removed.
func createInPlace(target string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	made, err := mkdirAll(dir)
	defer func() {
		if err != nil {
			for i := len(made) - 1; i >= 0; i-- {
				os.Remove(made[i])
			}
		}
	}()
	if err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(target) // ours: O_EXCL created it
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// tempMark is what names a temporary file of ours: "." + base + tempMark + pid + "-" +
// random letters and digits, base being the name of the file it will replace. The pid
// lets a later write tell the temporary files of a process killed while writing (which
// could not remove its own) from those of writes still under way.
const tempMark = ".agentls-"

// maxTempBase bounds the bytes of the target's name kept in a temporary file's name, so
// that a long name with the additions stays under the file systems' 255-byte limit.
const maxTempBase = 128

// createTemp creates a new file next to the one named base in dir. Unlike os.CreateTemp
// it takes the permissions, so that the umask applies to a new file as it would to one
// created in place.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	if len(base) > maxTempBase {
		n := maxTempBase
		for n > 0 && !utf8.RuneStart(base[n]) {
			n--
		}
		base = base[:n]
	}
	prefix := "." + base + tempMark + strconv.Itoa(os.Getpid()) + "-"
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("creating a temporary file in %s: too many attempts", dir)
}

// tempOwner returns the pid in name if name is that of one of our temporary files (see
// tempMark), and 0 if it is not.
func tempOwner(name string) int {
	i := strings.LastIndex(name, tempMark)
	if i < 2 || name[0] != '.' {
		return 0
	}
	pid, random, ok := strings.Cut(name[i+len(tempMark):], "-")
	if !ok || !allIn(pid, "0123456789") || !allIn(random, "0123456789abcdefghijklmnopqrstuvwxyz") || len(random) > 13 {
		return 0
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// allIn reports whether s is not empty and every byte of it is in set.
func allIn(s, set string) bool {
	return s != "" && strings.Trim(s, set) == ""
}

// removeOrphanTemps removes from dir the temporary files of processes that are no longer
// running: a process killed between creating its temporary file and renaming it could
// not remove it itself. Only names of our pattern whose process is gone are removed, and
// only regular files; errors are ignored, as the write at hand does not depend on it.
func removeOrphanTemps(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := os.Getpid()
	for _, name := range names {
		pid := tempOwner(name)
		if pid == 0 || pid == self || !processGone(pid) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.Remove(p)
		}
	}
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
