package search

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentls/agentls/workspace"
)

// includeGlob is grep_search's include_pattern, matched as ripgrep matches a --glob:
// gitignore-style, relative to the searched directory. A pattern without a slash
// matches a file's name at any depth ("*.go", "*.{ts,tsx}"); one with a slash matches
// the whole relative path ("src/**", "/cmd/*.go"); "*" never crosses a slash, "**"
// does; a trailing slash matches directories only; a leading "!" excludes instead, and
// an excluded directory is not entered.
type includeGlob struct {
	raw     string // as ripgrep gets it
	pattern string // for doublestar
	base    bool
	dirOnly bool
	negated bool
}

// parseInclude checks an include_pattern; "" means no filter (nil).
func parseInclude(g string) (*includeGlob, error) {
	g = strings.TrimPrefix(strings.TrimSpace(g), "./")
	if g == "" {
		return nil, nil
	}
	ig := &includeGlob{raw: g}
	p := g
	if strings.HasPrefix(p, "!") {
		ig.negated = true
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		ig.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		p = strings.TrimPrefix(p, "/")
	} else {
		ig.base = true
	}
	if p == "" || !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("include_pattern %q is not a valid glob", g)
	}
	ig.pattern = p
	return ig, nil
}

func (g *includeGlob) matches(rel string, isDir bool) bool {
	if g.dirOnly && !isDir {
		return false
	}
	name := rel
	if g.base {
		name = path.Base(rel)
	}
	return doublestar.MatchUnvalidated(g.pattern, name)
}

// keepFile reports whether the file at rel (slash path below the searched directory)
// is searched, as far as the glob decides.
func (g *includeGlob) keepFile(rel string) bool {
	return g == nil || g.matches(rel, false) != g.negated
}

// pruneDir reports whether the directory at rel is not entered.
func (g *includeGlob) pruneDir(rel string) bool {
	return g != nil && g.negated && g.matches(rel, true)
}

// pathFilter decides, for a file found some other way than by walking (ripgrep's
// results, open documents), whether the walk would have searched it: no ignored or
// pruned directory on the way down from the searched directory, and the file itself
// neither ignored nor filtered out. It is safe for concurrent use.
type pathFilter struct {
	dir     string
	ig      *workspace.Ignorer
	include *includeGlob
	dirs    sync.Map // directory → skipped
}

func newPathFilter(ws *workspace.Workspace, dir string, opts workspace.WalkOptions, include *includeGlob) *pathFilter {
	f := &pathFilter{dir: dir, ig: ws.NewIgnorer(dir, opts), include: include}
	f.dirs.Store(dir, false)
	return f
}

// skip reports whether the file at abs, below the searched directory, is left out.
func (f *pathFilter) skip(abs string) bool {
	if !within(f.dir, abs) || abs == f.dir {
		return true
	}
	if f.dirSkipped(filepath.Dir(abs)) {
		return true
	}
	return f.ig.Ignored(abs, false) || !f.include.keepFile(relTo(f.dir, abs))
}

func (f *pathFilter) dirSkipped(d string) bool {
	if s, ok := f.dirs.Load(d); ok {
		return s.(bool)
	}
	s := f.dirSkipped(filepath.Dir(d)) || f.ig.Ignored(d, true) || f.include.pruneDir(relTo(f.dir, d))
	f.dirs.Store(d, s)
	return s
}
