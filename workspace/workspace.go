// Package workspace is what agentls's tools see of the file system: the workspace roots
// and the confinement of every path to them, the overlay of documents open in the editor
// (whose text, saved or not, is what tools read), text decoding and encoding that keeps a
// file's BOM, line endings and final newline, atomic writes, walking with ignore rules,
// and diffs with their conversion to editor text edits.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Workspace is a set of root folders, the open-document overlay over them, and the
// Writer through which edits are committed. It is safe for concurrent use.
type Workspace struct {
	mu      sync.RWMutex
	roots   []string // absolute, cleaned, symlinks resolved
	overlay map[string]*openDocument
	// edited are the files Commit wrote while they are open, or since (see Unsaved).
	edited map[string]bool
	writer Writer
	locks  PathLocks // see LockPaths
}

// New returns a workspace over roots (at least one), which must be existing
// directories. Edits are committed to disk until SetWriter says otherwise.
func New(roots ...string) (*Workspace, error) {
	w := &Workspace{overlay: make(map[string]*openDocument), edited: make(map[string]bool), writer: DiskWriter{}}
	if err := w.SetRoots(roots...); err != nil {
		return nil, err
	}
	return w, nil
}

// SetRoots replaces the workspace roots.
func (w *Workspace) SetRoots(roots ...string) error {
	if len(roots) == 0 {
		return errors.New("workspace: no root folder")
	}
	clean := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return fmt.Errorf("workspace root %q: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return fmt.Errorf("workspace root %q: %w", r, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return fmt.Errorf("workspace root %q: %w", r, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("workspace root %q is not a directory", r)
		}
		clean = append(clean, real)
	}
	w.mu.Lock()
	w.roots = clean
	w.mu.Unlock()
	return nil
}

// Roots returns the workspace roots; the first is where relative paths resolve.
func (w *Workspace) Roots() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return append([]string(nil), w.roots...)
}

// OutsideError reports a path that does not lie inside any workspace root.
type OutsideError struct {
	Path  string
	Roots []string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("path %s is outside the workspace (roots: %s)", e.Path, strings.Join(e.Roots, ", "))
}

// Resolve returns the absolute, cleaned form of path, which may be relative to the first
// root. After resolving ".." and every symlink along it, the path must lie inside a root,
// else the error is an *OutsideError. The path itself need not exist (a file about to be
// created); its deepest existing ancestor is what symlinks are resolved through, and a
// dangling symlink is judged by where it points. A path spelled below a root keeps the
// caller's spelling (a symlink inside the workspace that points inside the workspace is
// returned as the link's path); one spelled elsewhere that really lands inside a root is
// returned as its real path, so that it is named below that root.
func (w *Workspace) Resolve(path string) (string, error) {
	roots := w.Roots()
	if path == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", path)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	real, err := realPath(p)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(roots, func(r string) bool { return within(r, real) }) {
		return "", &OutsideError{Path: path, Roots: roots}
	}
	if slices.ContainsFunc(roots, func(r string) bool { return within(r, p) }) {
		return p, nil
	}
	return real, nil
}

// Contains reports whether the absolute path abs, after resolving symlinks, lies inside a
// workspace root.
func (w *Workspace) Contains(abs string) bool {
	real, err := realPath(filepath.Clean(abs))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(w.Roots(), func(r string) bool { return within(r, real) })
}

// Real returns the file the absolute path abs reaches when written: every symbolic
// link along it resolved, through a missing final part and a dangling link too. Two
// calls that return different paths for one abs saw a link along it change.
func (w *Workspace) Real(abs string) (string, error) {
	return realPath(filepath.Clean(abs))
}

// Rel returns abs relative to the root that holds it, for display; abs itself if no
// root does.
func (w *Workspace) Rel(abs string) string {
	abs = filepath.Clean(abs)
	roots := w.Roots()
	if rel, ok := relTo(roots, abs); ok {
		return rel
	}
	// Spelled through a symlink to a root (such as /tmp on macOS)?
	if real, err := realPath(abs); err == nil {
		if rel, ok := relTo(roots, real); ok {
			return rel
		}
	}
	return abs
}

func relTo(roots []string, abs string) (string, bool) {
	for _, r := range roots {
		if within(r, abs) {
			if rel, err := filepath.Rel(r, abs); err == nil {
				return filepath.ToSlash(rel), true
			}
		}
	}
	return "", false
}

// within reports whether p is root or below it. Both are clean absolute paths.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// maxLinks bounds the symlinks followed while resolving one path, as the kernel's
// ELOOP limit does.
const maxLinks = 40

// realPath resolves every symlink along the clean absolute path p. Only a prefix of p
// need exist: the rest is appended to the resolved deepest existing ancestor, and a
// dangling symlink is followed to where it points, so that a path about to be created is
// judged by where it would really land.
func realPath(p string) (string, error) {
	rest := "" // the components below cur, which do not exist
	cur := p
	for links := 0; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		fi, lerr := os.Lstat(cur)
		switch {
		case lerr == nil && fi.Mode()&fs.ModeSymlink != 0:
			// A dangling symlink (or a loop): judge by where it points. Creating a file
			// through it would create the target.
			if links++; links > maxLinks {
				return "", fmt.Errorf("resolving %s: too many levels of symbolic links", p)
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", fmt.Errorf("resolving %s: %w", p, err)
			}
			if !filepath.IsAbs(target) {
				// Relative to the link's real directory, not its spelling: ".." in the
				// target must climb out of where the link really is.
				dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
				if err != nil {
					return "", fmt.Errorf("resolving %s: %w", p, err)
				}
				target = filepath.Join(dir, target)
			}
			cur = filepath.Clean(target)
		case lerr == nil:
			return "", fmt.Errorf("resolving %s: %w", p, err)
		case errors.Is(lerr, fs.ErrNotExist):
			parent := filepath.Dir(cur)
			if parent == cur {
				return filepath.Join(cur, rest), nil
			}
			rest = filepath.Join(filepath.Base(cur), rest)
			cur = parent
		default:
			// Not a directory, permission denied, …: the path cannot be judged.
			return "", fmt.Errorf("resolving %s: %w", p, lerr)
		}
	}
}
