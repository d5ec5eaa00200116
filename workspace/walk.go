package workspace

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/charlievieth/fastwalk"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultExcludes are directory names every walk skips unless told otherwise: version
// control data and dependency or cache trees that are never the project's own code.
var DefaultExcludes = []string{".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".venv", ".tox", ".mypy_cache", ".pytest_cache"}

// Ignore files: .gitignore by Git's rules, and the agent-specific ones with the same
// syntax, read for Gemini CLI compatibility (.geminiignore) and for agentls itself.
const gitIgnoreFile = ".gitignore"

var agentIgnoreFiles = []string{".geminiignore", ".agentlsignore"}

// WalkOptions says which files a walk skips.
type WalkOptions struct {
	// GitIgnore skips what .gitignore files (at every level, from the top of the Git
	// working tree down) and .git/info/exclude ignore. It applies without a repository
	// too, from the workspace root down.
	GitIgnore bool
	// AgentIgnore skips what .geminiignore and .agentlsignore files ignore.
	AgentIgnore bool
	// DefaultExcludes skips the directories named in DefaultExcludes.
	DefaultExcludes bool
	// Exclude holds further doublestar patterns, matched against the path relative to
	// the walked directory (with slashes) and against the base name.
	Exclude []string
}

// DefaultWalk is what tools use unless the model asks otherwise.
var DefaultWalk = WalkOptions{GitIgnore: true, AgentIgnore: true, DefaultExcludes: true}

// Ignorer decides which paths a walk skips. It caches the ignore files it reads and is
// safe for concurrent use.
//
// .gitignore files are read from the top of the Git working tree that holds the
// workspace root (the root itself when there is none) down to each directory, with
// .git/info/exclude at that top, as Git and ripgrep do; .geminiignore and .agentlsignore
// files from the workspace root down. A deeper file's patterns win over a shallower
// one's, and within one directory the agent files win over .gitignore.
type Ignorer struct {
	base     string // the walked directory
	root     string // the workspace root holding base
	top      string // where .gitignore files are read from: the Git top, or root
	opts     WalkOptions
	patterns sync.Map // directory → []gitignore.Pattern of every ignore file from top down to it
	dirs     sync.Map // directory → bool: whether it or an ancestor below base is ignored
}

// NewIgnorer returns an Ignorer for walks of dir (an absolute, resolved path).
func (w *Workspace) NewIgnorer(dir string, opts WalkOptions) *Ignorer {
	dir = filepath.Clean(dir)
	root := dir
	for _, r := range w.Roots() {
		if within(r, dir) {
			root = r
			break
		}
	}
	top := root
	if opts.GitIgnore {
		top = gitTop(root)
	}
	return &Ignorer{base: dir, root: root, top: top, opts: opts}
}

// gitTop returns the top of the Git working tree holding dir, or dir if none does.
func gitTop(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// Ignored reports whether the absolute path, a directory if isDir, is skipped: by its
// own name or patterns, or because a directory between the walked one and it is (Git
// cannot re-include a file whose directory is excluded, and a walk never enters one).
func (ig *Ignorer) Ignored(path string, isDir bool) bool {
	path = filepath.Clean(path)
	return ig.dirIgnored(filepath.Dir(path)) || ig.ignoredHere(path, isDir)
}

// dirIgnored reports whether dir or one of its ancestors below base is ignored.
func (ig *Ignorer) dirIgnored(dir string) bool {
	if dir == ig.base || !within(ig.base, dir) {
		return false
	}
	if v, ok := ig.dirs.Load(dir); ok {
		return v.(bool)
	}
	v := ig.dirIgnored(filepath.Dir(dir)) || ig.ignoredHere(dir, true)
	ig.dirs.Store(dir, v)
	return v
}

// ignoredHere judges path by its own name and patterns only, as a walk does once it has
// entered the path's directory.
func (ig *Ignorer) ignoredHere(path string, isDir bool) bool {
	name := filepath.Base(path)
	if ig.opts.DefaultExcludes && isDir && slices.Contains(DefaultExcludes, name) {
		return true
	}
	if len(ig.opts.Exclude) > 0 {
		if rel, err := filepath.Rel(ig.base, path); err == nil {
			rel = filepath.ToSlash(rel)
			for _, p := range ig.opts.Exclude {
				if m, _ := doublestar.Match(p, rel); m {
					return true
				}
				if m, _ := doublestar.Match(p, name); m {
					return true
				}
			}
		}
	}
	if !ig.opts.GitIgnore && !ig.opts.AgentIgnore {
		return false
	}
	if path == ig.top || !within(ig.top, path) {
		return false
	}
	ps := ig.dirPatterns(filepath.Dir(path))
	if len(ps) == 0 {
		return false
	}
	return gitignore.NewMatcher(ps).Match(splitRel(ig.top, path), isDir)
}

// dirPatterns returns the patterns of every ignore file from top down to dir (top or
// below it), in increasing priority.
func (ig *Ignorer) dirPatterns(dir string) []gitignore.Pattern {
	if v, ok := ig.patterns.Load(dir); ok {
		return v.([]gitignore.Pattern)
	}
	var ps []gitignore.Pattern
	if dir == ig.top {
		if ig.opts.GitIgnore {
			ps = readPatterns(filepath.Join(dir, ".git", "info", "exclude"), nil)
		}
	} else {
		parent := ig.dirPatterns(filepath.Dir(dir))
		ps = parent[:len(parent):len(parent)] // appending must copy, not write into the parent's
	}
	domain := splitRel(ig.top, dir)
	if ig.opts.GitIgnore {
		ps = append(ps, readPatterns(filepath.Join(dir, gitIgnoreFile), domain)...)
	}
	if ig.opts.AgentIgnore && within(ig.root, dir) {
		for _, f := range agentIgnoreFiles {
			ps = append(ps, readPatterns(filepath.Join(dir, f), domain)...)
		}
	}
	ig.patterns.Store(dir, ps)
	return ps
}

// splitRel returns the components of path below dir (nil for dir itself).
func splitRel(dir, path string) []string {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." {
		return nil
	}
	return strings.Split(filepath.ToSlash(rel), "/")
}

func readPatterns(file string, domain []string) []gitignore.Pattern {
	f, err := os.Open(file)
	if err != nil {
		return nil // no ignore file here, or unreadable: nothing to ignore
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// stopWalk carries an error of the walk's callback (or the context's) through fastwalk,
// which hands a directory's failure back to the callback: it must not be mistaken for an
// unreadable directory, which is skipped.
type stopWalk struct{ err error }

func (s *stopWalk) Error() string { return s.err.Error() }

// Walk calls fn for every file and directory below dir (an absolute, resolved path; dir
// itself excluded) that opts do not skip. fn runs on several goroutines at once, in no
// particular order; its path argument is absolute. Returning filepath.SkipDir for a
// directory skips it, and for a file skips the remaining files (not subdirectories) of
// its directory; fs.SkipAll ends the walk without error; any other error stops the walk
// and is returned. Unreadable directories are skipped. Symlinks are reported, not
// followed. Cancelling ctx stops the walk with ctx's error.
func (w *Workspace) Walk(ctx context.Context, dir string, opts WalkOptions, fn func(path string, d fs.DirEntry) error) error {
	dir = filepath.Clean(dir)
	ig := w.NewIgnorer(dir, opts)
	conf := fastwalk.Config{Follow: false}
	err := fastwalk.Walk(&conf, dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			var stop *stopWalk
			if errors.As(err, &stop) || path == dir {
				return err
			}
			// An unreadable directory is skipped, not fatal: the rest of the tree is
			// still useful.
			return nil
		}
		if path == dir {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return &stopWalk{err}
		}
		isDir := d.IsDir()
		if ig.ignoredHere(path, isDir) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		switch err := fn(path, d); {
		case err == nil:
			return nil
		case errors.Is(err, filepath.SkipDir) && isDir:
			return filepath.SkipDir
		case errors.Is(err, filepath.SkipDir):
			return fastwalk.ErrSkipFiles
		default:
			return &stopWalk{err}
		}
	})
	var stop *stopWalk
	if errors.As(err, &stop) {
		if errors.Is(stop.err, fs.SkipAll) {
			return nil
		}
		return stop.err
	}
	return err
}
