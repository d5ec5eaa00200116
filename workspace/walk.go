package workspace

import (
	"bufio"
	"context"
	"errors"
	"io"
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

// defaultExcludes are directory names every walk skips unless told otherwise: version
// control data and dependency or cache trees that are never the project's own code.
var defaultExcludes = []string{".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".venv", ".tox", ".mypy_cache", ".pytest_cache"}

// DefaultExcludedDirs returns the directory names that WalkOptions.DefaultExcludes
// skips, for engines that walk by themselves (ripgrep).
func DefaultExcludedDirs() []string { return slices.Clone(defaultExcludes) }

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
	// DefaultExcludes skips version control data and dependency or cache trees (.git,
	// node_modules, __pycache__, .venv …).
	DefaultExcludes bool
	// Exclude holds further doublestar patterns, matched against the path relative to
	// the walked directory (with slashes) and against the base name.
	Exclude []string
	// Skipped, when set, is told of every entry a walk leaves out by these options:
	// an ignored file, or an ignored directory (whose contents the walk never reads).
	// It is the walk's own judgement passed on, so counting costs no more than the
	// call; like the walk's callback it runs on several goroutines at once.
	Skipped func(path string, isDir bool)
}

// DefaultWalk returns what tools use unless the model asks otherwise.
func DefaultWalk() WalkOptions {
	return WalkOptions{GitIgnore: true, AgentIgnore: true, DefaultExcludes: true}
}

// Ignorer decides which paths a walk skips. It caches, per directory, the rules that
// apply there, and is safe for concurrent use.
//
// .gitignore files are read from the top of the Git working tree that holds the
// workspace root (the root itself when there is none) down to each directory, with
// .git/info/exclude at that top, as Git and ripgrep do; .geminiignore and .agentlsignore
// files from the workspace root down. A deeper file's patterns win over a shallower
// one's, and within one directory the agent files win over .gitignore.
//
// Most directories have no ignore file, so looking for them must cost next to nothing:
// a walk learns which ones a directory has from the listing it reads anyway (see
// listedEntry), and Ignored looks once per directory, the first time it is asked about
// a path there; every later question about that directory is answered from the cache.
type Ignorer struct {
	base   string // the walked directory
	root   string // the workspace root holding base
	top    string // where .gitignore files are read from: the Git top, or root
	hasGit bool   // whether top holds .git, so that .git/info/exclude may exist
	opts   WalkOptions
	open   func(name string) (io.ReadCloser, error) // opens ignore files; tests count through it
	rules  sync.Map                                 // directory → *dirRules
	dirs   sync.Map                                 // directory → bool: whether it or an ancestor below base is ignored
}

// dirRules are the ignore patterns that apply to the entries of one directory.
type dirRules struct {
	rel      []string            // the directory's path components below top
	patterns []gitignore.Pattern // of every ignore file from top down to the directory, in increasing priority
	matcher  gitignore.Matcher   // over patterns; nil when there are none
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
	top, hasGit := root, false
	if opts.GitIgnore {
		top, hasGit = gitTop(root)
	}
	return &Ignorer{base: dir, root: root, top: top, hasGit: hasGit, opts: opts, open: openFile}
}

// openFile opens an ignore file for reading.
func openFile(name string) (io.ReadCloser, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// gitTop returns the top of the Git working tree holding dir and true, or dir and
// false if none does.
func gitTop(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, false
		}
		d = parent
	}
}

// Ignored reports whether the absolute path, a directory if isDir, is skipped: by its
// own name or patterns, or because a directory between the walked one and it is (Git
// cannot re-include a file whose directory is excluded, and a walk never enters one).
func (ig *Ignorer) Ignored(path string, isDir bool) bool {
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	return ig.dirIgnored(dir) || ig.ignoredIn(dir, filepath.Base(path), path, isDir)
}

// dirIgnored reports whether dir or one of its ancestors below base is ignored.
func (ig *Ignorer) dirIgnored(dir string) bool {
	if dir == ig.base {
		return false
	}
	if v, ok := ig.dirs.Load(dir); ok {
		return v.(bool)
	}
	if !within(ig.base, dir) {
		return false
	}
	parent := filepath.Dir(dir)
	v := ig.dirIgnored(parent) || ig.ignoredIn(parent, filepath.Base(dir), dir, true)
	ig.dirs.Store(dir, v)
	return v
}

// ignoredIn judges path, the entry name of dir, by its own name and patterns only, as a
// walk does once it has entered dir.
func (ig *Ignorer) ignoredIn(dir, name, path string, isDir bool) bool {
	return ig.judge(ig.rulesFor(dir, path, listedEntry{}), name, path, isDir)
}

// judge judges path, named name, by its name and r, the rules of its directory.
func (ig *Ignorer) judge(r *dirRules, name, path string, isDir bool) bool {
	if ig.opts.DefaultExcludes && isDir && slices.Contains(defaultExcludes, name) {
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
	if r == nil || r.matcher == nil {
		return false
	}
	n := len(r.rel)
	return r.matcher.Match(append(r.rel[:n:n], name), isDir)
}

// rulesFor returns the rules for path, an entry of dir, or nil if no ignore file can
// apply to it.
func (ig *Ignorer) rulesFor(dir, path string, listed listedEntry) *dirRules {
	if !ig.opts.GitIgnore && !ig.opts.AgentIgnore || path == ig.top {
		return nil
	}
	if v, ok := ig.rules.Load(dir); ok {
		return v.(*dirRules)
	}
	if !within(ig.top, dir) {
		return nil
	}
	return ig.dirRules(dir, listed)
}

// listedEntry is, during a walk, the entry whose judgement first needs the rules of its
// directory; the zero value stands for none (outside a walk, or for an ancestor).
//
// A walk lists each directory sorted by name (fastwalk.SortLexical) and hands its files
// to the callback one by one in that order on one goroutine, enqueueing each
// subdirectory at its place in that order, so after the files named before it were
// handed over; and every callback fetches the rules of its entry's directory before
// anything else. So when the rules of a directory are built on behalf of an entry, no
// file named before it exists there: that file's callback would have built them first.
// The entry itself is an ignore file if it is one by name and not a directory, and only
// the ignore files named after it need to be opened to find out whether they exist.
// Entries usually start with a letter or digit, which sort after all the ignore files'
// names, so a walk opens the ignore files there are and no others; an ignore file (or
// a name such as .dockerignore) judged first leaves those named after it to be tried.
// On a case-insensitive file system, a differently cased ignore file sorts before the
// lower-case name it stands for, so that name is tried, as outside a walk.
type listedEntry struct {
	name  string
	isDir bool
}

// dirRules returns the rules that apply to the entries of dir (top or below it),
// reading its ignore files the first time.
func (ig *Ignorer) dirRules(dir string, listed listedEntry) *dirRules {
	if v, ok := ig.rules.Load(dir); ok {
		return v.(*dirRules)
	}
	r := &dirRules{}
	if dir == ig.top {
		if ig.opts.GitIgnore && ig.hasGit {
			r.patterns = ig.readPatterns(filepath.Join(dir, ".git", "info", "exclude"), nil)
		}
	} else {
		parent := ig.dirRules(filepath.Dir(dir), listedEntry{})
		// Appending must copy, not write into the parent's.
		r.rel = append(parent.rel[:len(parent.rel):len(parent.rel)], filepath.Base(dir))
		r.patterns = parent.patterns[:len(parent.patterns):len(parent.patterns)]
	}
	if ig.opts.GitIgnore {
		r.patterns = append(r.patterns, ig.readIgnoreFile(dir, gitIgnoreFile, r.rel, listed)...)
	}
	if ig.opts.AgentIgnore && within(ig.root, dir) {
		for _, f := range agentIgnoreFiles {
			r.patterns = append(r.patterns, ig.readIgnoreFile(dir, f, r.rel, listed)...)
		}
	}
	if len(r.patterns) > 0 {
		r.matcher = gitignore.NewMatcher(r.patterns)
	}
	v, _ := ig.rules.LoadOrStore(dir, r)
	return v.(*dirRules)
}

// readIgnoreFile returns the patterns of the ignore file name in dir, if it exists.
func (ig *Ignorer) readIgnoreFile(dir, name string, domain []string, listed listedEntry) []gitignore.Pattern {
	if listed.name != "" && (name < listed.name || name == listed.name && listed.isDir) {
		return nil // the walk's listing shows there is none
	}
	return ig.readPatterns(filepath.Join(dir, name), domain)
}

func (ig *Ignorer) readPatterns(file string, domain []string) []gitignore.Pattern {
	f, err := ig.open(file)
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
	return w.NewIgnorer(dir, opts).walk(ctx, fn)
}

// walk walks ig's directory for Walk.
func (ig *Ignorer) walk(ctx context.Context, fn func(path string, d fs.DirEntry) error) error {
	dir := ig.base
	// Sorted listings let the Ignorer learn a directory's ignore files from them.
	conf := fastwalk.Config{Follow: false, Sort: fastwalk.SortLexical}
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
		isDir := d.IsDir()
		name := d.Name()
		// The rules come first, whatever happens next: see listedEntry.
		r := ig.rulesFor(filepath.Dir(path), path, listedEntry{name, isDir})
		if err := ctx.Err(); err != nil {
			return &stopWalk{err}
		}
		if ig.judge(r, name, path, isDir) {
			if ig.opts.Skipped != nil {
				ig.opts.Skipped(path, isDir)
			}
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
