package search

import (
	"fmt"
	"path"
	"strings"

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
}

func newPathFilter(ws *workspace.Workspace, dir string, opts workspace.WalkOptions, include *includeGlob) *pathFilter {
	return &pathFilter{dir: dir, ig: ws.NewIgnorer(dir, opts), include: include}
}

// skip reports whether the file at abs, below the searched directory, is left out.
func (f *pathFilter) skip(abs string) bool {
	if !within(f.dir, abs) || abs == f.dir {
		return true
	}
	// Ignored judges the directories on the way down too, as a walk meets them.
	if f.ig.Ignored(abs, false) {
		return true
	}
	rel := relTo(f.dir, abs)
	if !f.include.keepFile(rel) {
		return true
	}
	if f.include != nil && f.include.negated {
		for i := strings.IndexByte(rel, '/'); i >= 0; i = next(rel, i) {
			if f.include.pruneDir(rel[:i]) {
				return true
			}
		}
	}
	return false
}

// next returns the index of the slash after the one at i in rel, or -1.
func next(rel string, i int) int {
	if j := strings.IndexByte(rel[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}
