package workspace

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
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
	// GitIgnore skips what .gitignore files (at every level) and .git/info/exclude ignore.
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
type Ignorer struct {
	base     string // the walked directory
	root     string // the workspace root holding base; ignore files are read from here down
	opts     WalkOptions
	matchers sync.Map // directory → gitignore.Matcher
}

// NewIgnorer returns an Ignorer for walks of dir (an absolute, resolved path).
func (w *Workspace) NewIgnorer(dir string, opts WalkOptions) *Ignorer {
	root := dir
	for _, r := range w.Roots() {
		if within(r, dir) {
			root = r
			break
		}
	}
	return &Ignorer{base: dir, root: root, opts: opts}
}

// Ignored reports whether the absolute path, a directory if isDir, is skipped.
func (ig *Ignorer) Ignored(path string, isDir bool) bool {
	name := filepath.Base(path)
	if ig.opts.DefaultExcludes && isDir {
		for _, x := range DefaultExcludes {
			if name == x {
				return true
			}
		}
	}
	if len(ig.opts.Exclude) > 0 {
		rel, err := filepath.Rel(ig.base, path)
		if err == nil {
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
	if !within(ig.root, path) || path == ig.root {
		return false
	}
	rel, err := filepath.Rel(ig.root, path)
	if err != nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return ig.matcher(filepath.Dir(path)).Match(parts, isDir)
}

// matcher returns the matcher holding the patterns of every ignore file from the root
// down to dir.
func (ig *Ignorer) matcher(dir string) gitignore.Matcher {
	if m, ok := ig.matchers.Load(dir); ok {
		return m.(gitignore.Matcher)
	}
	var patterns []gitignore.Pattern
	rel, _ := filepath.Rel(ig.root, dir)
	var domain []string
	if rel != "." {
		domain = strings.Split(filepath.ToSlash(rel), "/")
	}
	for i := 0; i <= len(domain); i++ {
		d := filepath.Join(append([]string{ig.root}, domain[:i]...)...)
		if i == 0 && ig.opts.GitIgnore {
			patterns = append(patterns, readPatterns(filepath.Join(d, ".git", "info", "exclude"), nil)...)
		}
		if ig.opts.GitIgnore {
			patterns = append(patterns, readPatterns(filepath.Join(d, gitIgnoreFile), domain[:i])...)
		}
		if ig.opts.AgentIgnore {
			for _, f := range agentIgnoreFiles {
				patterns = append(patterns, readPatterns(filepath.Join(d, f), domain[:i])...)
			}
		}
	}
	m := gitignore.NewMatcher(patterns)
	ig.matchers.Store(dir, m)
	return m
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
		ps = append(ps, gitignore.ParsePattern(line, append([]string(nil), domain...)))
	}
	return ps
}

// Walk calls fn for every file and directory below dir (an absolute, resolved path; dir
// itself excluded) that opts do not skip. fn runs on several goroutines at once; its
// path argument is absolute. Returning filepath.SkipDir for a directory skips it, and any
// other error stops the walk and is returned. Symlinks are reported, not followed.
// Cancelling ctx stops the walk with ctx's error.
func (w *Workspace) Walk(ctx context.Context, dir string, opts WalkOptions, fn func(path string, d fs.DirEntry) error) error {
	ig := w.NewIgnorer(dir, opts)
	conf := fastwalk.Config{Follow: false}
	err := fastwalk.Walk(&conf, dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// An unreadable entry is skipped, not fatal: the rest of the tree is still useful.
			if d != nil && d.IsDir() && path != dir {
				return filepath.SkipDir
			}
			if path == dir {
				return err
			}
			return nil
		}
		if path == dir {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if ig.Ignored(path, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(path, d)
	})
	return err
}
