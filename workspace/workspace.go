// Package workspace is what agentls's tools see of the file system: the workspace roots
// and the confinement of every path to them, the overlay of documents open in the editor
// (whose text, saved or not, is what tools read), text decoding and encoding that keeps a
// file's BOM, line endings and final newline, atomic writes, walking with ignore rules,
// and diffs with their conversion to editor text edits.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Workspace is a set of root folders, the open-document overlay over them, and the
// Writer through which edits are committed. It is safe for concurrent use.
type Workspace struct {
	mu      sync.RWMutex
	roots   []string // absolute, cleaned, symlinks resolved
	overlay map[string]*Document
	writer  Writer
}

// New returns a workspace over roots (at least one), which must be existing
// directories. Edits are committed to disk until SetWriter says otherwise.
func New(roots ...string) (*Workspace, error) {
	w := &Workspace{overlay: make(map[string]*Document), writer: DiskWriter{}}
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
// created); its deepest existing ancestor is what symlinks are resolved through. The
// returned path keeps the caller's spelling below a root (a symlink inside the workspace
// that points inside the workspace is returned as the link's path).
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
	for _, r := range roots {
		if within(r, real) {
			return p, nil
		}
	}
	return "", &OutsideError{Path: path, Roots: roots}
}

// Contains reports whether the absolute path abs, after resolving symlinks, lies inside a
// workspace root.
func (w *Workspace) Contains(abs string) bool {
	real, err := realPath(filepath.Clean(abs))
	if err != nil {
		return false
	}
	for _, r := range w.Roots() {
		if within(r, real) {
			return true
		}
	}
	return false
}

// Rel returns abs relative to the root that holds it, for display; abs itself if no
// root does.
func (w *Workspace) Rel(abs string) string {
	for _, r := range w.Roots() {
		if within(r, abs) {
			rel, err := filepath.Rel(r, abs)
			if err == nil {
				return filepath.ToSlash(rel)
			}
		}
	}
	return abs
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

// realPath resolves the symlinks of the deepest existing ancestor of the clean absolute
// path p and appends the rest, so that a path about to be created is judged by where it
// would really land.
func realPath(p string) (string, error) { return realPathN(p, 0) }

func realPathN(p string, depth int) (string, error) {
	if depth > 40 {
		return "", fmt.Errorf("resolving %s: too many levels of symbolic links", p)
	}
	rest := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			// A dangling symlink or a loop: judge where the link points.
			if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
				target, rerr := os.Readlink(cur)
				if rerr != nil {
					return "", fmt.Errorf("resolving %s: %w", p, rerr)
				}
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(cur), target)
				}
				if filepath.Clean(target) == cur {
					return "", fmt.Errorf("resolving %s: symlink loop", p)
				}
				return realPathN(filepath.Join(filepath.Clean(target), rest), depth+1)
			}
			return "", fmt.Errorf("resolving %s: %w", p, err)
		}
		// A missing component may itself be a dangling symlink.
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", fmt.Errorf("resolving %s: %w", p, rerr)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return realPathN(filepath.Join(filepath.Clean(target), rest), depth+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(cur, rest), nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
