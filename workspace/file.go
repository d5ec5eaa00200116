package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Errors that reading and writing report; test them with errors.Is.
var (
	// ErrNotExist reports a missing file; it matches fs.ErrNotExist.
	ErrNotExist = fs.ErrNotExist
	// ErrIsDirectory reports a directory where a file was expected.
	ErrIsDirectory = errors.New("is a directory")
	// ErrTooLarge reports a file over the size a reader accepts.
	ErrTooLarge = errors.New("file too large")
	// ErrStale reports a file that changed since the tool read it.
	ErrStale = errors.New("file changed since it was read")
	// ErrExists reports a file that exists where a new one was to be created.
	ErrExists = fs.ErrExist
)

// File is the text of a file as a tool reads it: from the overlay when the document is
// open in the editor, else from disk.
type File struct {
	Path string
	// Text has LF line endings whatever the file stores.
	Text   string
	Format Format
	// Open reports that Text came from the editor's overlay; Version is then its version.
	Open    bool
	Version int32
	// Size is the size on disk in bytes, and ModTime the modification time (both zero
	// for an open document not yet saved to disk).
	Size    int64
	ModTime time.Time
}

// Stat describes the file at the absolute path abs, which must already be resolved.
func (w *Workspace) Stat(abs string) (fs.FileInfo, error) {
	return os.Stat(abs)
}

// ReadText returns the text of the file at the resolved absolute path abs. A file larger
// than maxBytes on disk (0: no limit) is ErrTooLarge; a directory is ErrIsDirectory;
// binary content is ErrBinary.
func (w *Workspace) ReadText(abs string, maxBytes int64) (*File, error) {
	if d, ok := w.Document(abs); ok {
		f := &File{Path: abs, Text: d.Text, Format: d.Format, Open: true, Version: d.Version}
		if fi, err := os.Stat(abs); err == nil {
			f.Size, f.ModTime = fi.Size(), fi.ModTime()
		}
		return f, nil
	}
	data, fi, err := readLimited(abs, maxBytes)
	if err != nil {
		return nil, err
	}
	text, format, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	return &File{Path: abs, Text: text, Format: format, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// ReadBytes returns the stored bytes of the file at the resolved absolute path abs, with
// the same limits as ReadText. It does not consult the overlay: it is for binary files.
func (w *Workspace) ReadBytes(abs string, maxBytes int64) ([]byte, error) {
	data, _, err := readLimited(abs, maxBytes)
	return data, err
}

func readLimited(abs string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	// Opening a FIFO blocks until a writer comes, and a device such as /dev/zero never
	// ends: only regular files are read.
	if fi, err := os.Stat(abs); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, fi, fmt.Errorf("%s is %s, not a regular file", abs, FileKind(fi.Mode()))
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.IsDir() {
		return nil, fi, fmt.Errorf("%s: %w", abs, ErrIsDirectory)
	}
	if maxBytes > 0 && fi.Size() > maxBytes {
		return nil, fi, fmt.Errorf("%s is %d bytes, over the limit of %d: %w", abs, fi.Size(), maxBytes, ErrTooLarge)
	}
	// The size is only a hint: the file may grow while it is read, and pipes and files
	// such as those in /proc report none. Read to the end, one byte past the limit.
	r := io.Reader(f)
	if maxBytes > 0 {
		r = io.LimitReader(f, maxBytes+1)
	}
	size := 512
	if n := fi.Size(); n > 0 && (maxBytes <= 0 || n <= maxBytes) {
		size = int(n) + 1 // one more byte, so that EOF is seen without growing
	}
	data := make([]byte, 0, size)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fi, fmt.Errorf("reading %s: %w", abs, err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, fi, fmt.Errorf("%s: over the limit of %d bytes: %w", abs, maxBytes, ErrTooLarge)
	}
	return data, fi, nil
}

// FileKind names, for messages, the kind of a file that is not a regular file or a
// directory, such as "a named pipe".
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "a special file"
	}
}
