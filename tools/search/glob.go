package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// globParamsSchema is the parameter schema of globParams, generated once, when first asked for.
var globParamsSchema = tools.ParametersOnce[globParams](true)

const globName = "glob"

// recentWindow is how recently a file must have changed to be listed first, by time.
const recentWindow = 24 * time.Hour

// globTool is glob: files whose path below a directory matches a doublestar pattern.
type globTool struct {
	ws *workspace.Workspace
}

func (t *globTool) Info() tools.Info {
	return tools.Info{
		Name:        globName,
		DisplayName: "FindFiles",
		Description: "Finds files by a glob pattern over their paths, e.g. `src/**/*.ts`, and returns their absolute paths, newest first.",
		Kind:        tools.KindSearch,
		Source:      tools.SourceBuiltin,
		Parameters:  globParamsSchema(), // open, like Gemini CLI's
		Idempotent:  true,
	}
}

type globParams struct {
	Pattern          string `json:"pattern"`
	DirPath          string `json:"dir_path,omitempty" jsonschema:"The directory to search; default: the root."`
	CaseSensitive    bool   `json:"case_sensitive,omitempty" schema:"default=false"`
	RespectGitIgnore *bool  `json:"respect_git_ignore,omitempty" schema:"default=true"`
	// RespectGeminiIgnore is Gemini CLI's; .agentlsignore goes with it.
	RespectGeminiIgnore *bool `json:"respect_gemini_ignore,omitempty" jsonschema:"Also .agentlsignore." schema:"default=true"`
}

func (t *globTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p globParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Pattern) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "pattern must not be empty")
	}
	dir, err := resolveDir(t.ws, p.DirPath)
	if err != nil {
		return nil, err
	}
	pat, err := globPattern(dir, p.Pattern)
	if err != nil {
		return nil, err
	}
	c := &globCall{t: t, p: p, dir: dir, pattern: pat}
	c.walk = workspace.WalkOptions{GitIgnore: p.RespectGitIgnore == nil || *p.RespectGitIgnore,
		AgentIgnore: p.RespectGeminiIgnore == nil || *p.RespectGeminiIgnore, DefaultExcludes: true}
	c.compile()
	return c, nil
}

// globPattern checks the pattern and returns it relative to dir, with slashes.
func globPattern(dir, pattern string) (string, error) {
	p := filepath.ToSlash(strings.TrimSpace(pattern))
	if path.IsAbs(p) {
		// An absolute pattern is accepted when it lies in dir.
		prefix := strings.TrimSuffix(filepath.ToSlash(dir), "/") + "/"
		if !strings.HasPrefix(p, prefix) {
			return "", tools.Errorf(tools.ErrPathNotInWorkspace, "pattern %q is absolute and not inside the searched directory %s: give it relative to dir_path", pattern, dir)
		}
		p = p[len(prefix):]
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", tools.Errorf(tools.ErrInvalidParams, "pattern %q must not contain '..': set dir_path to search elsewhere in the workspace", pattern)
		}
	}
	if p == "" || p == "." {
		return "", tools.Errorf(tools.ErrInvalidParams, "pattern %q matches no files: use a pattern such as '**/*'", pattern)
	}
	// A pattern naming an existing file literally (say "app/[id]/page.tsx") means that
	// file, as in Gemini CLI.
	if strings.ContainsAny(p, `*?[]{}\`) {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			p = escapeGlob(p)
		}
	}
	if !doublestar.ValidatePattern(p) {
		return "", tools.Errorf(tools.ErrInvalidParams, "pattern %q is not a valid glob", pattern)
	}
	return p, nil
}

func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// globCall is one validated glob call.
type globCall struct {
	t       *globTool
	p       globParams
	dir     string
	pattern string // relative to dir, slashes
	walk    workspace.WalkOptions
	// uncounted leaves out the count of what ignore rules left out; only the
	// benchmark that measures what counting costs sets it.
	uncounted bool

	match string   // the pattern as matched: lower case unless case-sensitive
	base  []string // the fixed leading directories of the pattern (escapes removed)
	// segs are the pattern's segments when directories can be pruned by them: a
	// directory at depth d < deep must match segs[:d]; with no "**" segment (deep is
	// then len(segs)), nothing at depth ≥ len(segs)-1 holds matches below it.
	segs   []string
	deep   int
	noDeep bool // no "**" segment
}

func (c *globCall) compile() {
	c.match = c.pattern
	if !c.p.CaseSensitive {
		c.match = strings.ToLower(c.pattern)
	}
	base, _ := doublestar.SplitPattern(c.pattern)
	if base != "." && base != "/" {
		c.base = strings.Split(base, "/")
	}
	if slashInBraces(c.match) {
		return
	}
	c.segs = strings.Split(c.match, "/")
	c.deep = len(c.segs)
	c.noDeep = true
	for i, s := range c.segs {
		if s == "**" {
			c.deep, c.noDeep = i, false
			break
		}
	}
}

// slashInBraces reports whether an alternative of p spans segments ("{a/b,c}"), which
// defeats splitting p at slashes.
func slashInBraces(p string) bool {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth > 0 {
				return true
			}
		}
	}
	return false
}

func (c *globCall) Describe() string { return fmt.Sprintf("'%s' within %s", c.p.Pattern, c.dir) }

func (c *globCall) Locations() []tools.Location { return []tools.Location{{Path: c.dir}} }

func (c *globCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

type globHit struct {
	path  string
	mtime int64 // Unix nanoseconds
}

func (c *globCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := checkDir(c.dir, c.p.DirPath); err != nil {
		return nil, err
	}
	var (
		mu   sync.Mutex
		hits []globHit
		// What the walk left out: files matching the pattern, and directories whose
		// contents it never read that could hold matches. Counting what the walk skips
		// anyway costs a pattern match per ignored file and nothing per file listed.
		ignoredFiles, ignoredDirs atomic.Int64
	)
	walk := c.walk
	count := func(p string, isDir bool) {
		rel := relTo(c.dir, p)
		if !c.p.CaseSensitive {
			rel = strings.ToLower(rel)
		}
		switch {
		case isDir && !c.prune(rel):
			ignoredDirs.Add(1)
		case !isDir && doublestar.MatchUnvalidated(c.match, rel):
			ignoredFiles.Add(1)
		}
	}
	if !c.uncounted {
		walk.Skipped = count
	}
	for _, base := range c.bases() {
		err := c.t.ws.Walk(ctx, base, walk, func(p string, d fs.DirEntry) error {
			rel := relTo(c.dir, p)
			if !c.p.CaseSensitive {
				rel = strings.ToLower(rel)
			}
			if d.IsDir() {
				if c.prune(rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if !doublestar.MatchUnvalidated(c.match, rel) {
				return nil
			}
			// A link to a file is listed, as Gemini CLI lists it; a link to a directory is
			// not followed.
			mtime, ok := fileMTime(p, d)
			if !ok {
				return nil
			}
			mu.Lock()
			hits = append(hits, globHit{p, mtime})
			mu.Unlock()
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, tools.Errorf(tools.ErrExecutionFailed, "walking %s: %w", base, err)
		}
	}
	ignored := ignoredNote(ignoredFiles.Load(), ignoredDirs.Load())
	if len(hits) == 0 {
		return &tools.Result{
			Summary: "No files found",
			Output:  fmt.Sprintf("No files found matching pattern \"%s\" within %s%s", c.p.Pattern, c.dir, ignored),
		}, nil
	}
	sortHits(hits, time.Now())
	var b strings.Builder
	size := 200
	for _, h := range hits {
		size += len(h.path) + 1
	}
	b.Grow(size)
	fmt.Fprintf(&b, "Found %d file(s) matching \"%s\" within %s%s, sorted by modification time (newest first):", len(hits), c.p.Pattern, c.dir, ignored)
	for _, h := range hits {
		b.WriteByte('\n')
		b.WriteString(h.path)
	}
	return &tools.Result{Summary: fmt.Sprintf("Found %d matching file(s)", len(hits)), Output: b.String()}, nil
}

// ignoredNote says what ignore rules left out, as Gemini CLI's glob does ("(N
// additional files were ignored)"), and, since agentls does not enter an ignored
// directory, how many such directories could hold more; "" when nothing was left out.
func ignoredNote(files, dirs int64) string {
	var parts []string
	if files > 0 {
		parts = append(parts, fmt.Sprintf("%d matching %s", files, plural(int(files), "file", "files")))
	}
	if dirs > 0 {
		parts = append(parts, fmt.Sprintf("%d %s that could hold more", dirs, plural(int(dirs), "directory", "directories")))
	}
	if len(parts) == 0 {
		return ""
	}
	// One verb for the whole subject: "1 file and 2 directories were left out".
	verb := plural(int(files+dirs), "was", "were")
	return " (" + strings.Join(parts, " and ") + " " + verb + " left out by .gitignore, .geminiignore or .agentlsignore rules, or as dependency or version-control directories such as node_modules and .git)"
}

// sortHits orders files changed within recentWindow before now first, newest first,
// then the rest by path, as Gemini CLI does.
func sortHits(hits []globHit, now time.Time) {
	cutoff := now.Add(-recentWindow).UnixNano()
	slices.SortFunc(hits, func(a, b globHit) int {
		ra, rb := a.mtime > cutoff, b.mtime > cutoff
		switch {
		case ra && rb:
			if a.mtime != b.mtime {
				return cmp.Compare(b.mtime, a.mtime)
			}
		case ra:
			return -1
		case rb:
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
}

// prune reports whether the directory at rel (relative to dir, matched form) cannot
// hold a match.
func (c *globCall) prune(rel string) bool {
	if c.segs == nil {
		return false
	}
	depth := strings.Count(rel, "/") + 1
	if c.noDeep && depth >= len(c.segs) {
		return true
	}
	if depth <= c.deep {
		prefix := strings.Join(c.segs[:depth], "/")
		return !doublestar.MatchUnvalidated(prefix, rel)
	}
	return false
}

// bases returns the directories to walk: the pattern's fixed leading directories below
// dir (all case variants present, unless case-sensitive), or dir itself. A fixed part
// through an ignored directory or a symlink finds nothing, as a walk from dir would.
func (c *globCall) bases() []string {
	cur := []string{c.dir}
	if len(c.base) == 0 {
		return cur
	}
	ig := c.t.ws.NewIgnorer(c.dir, c.walk)
	for _, name := range c.base {
		var next []string
		for _, d := range cur {
			var cands []string
			if c.p.CaseSensitive {
				cands = []string{name}
			} else {
				entries, err := os.ReadDir(d)
				if err != nil {
					continue
				}
				for _, e := range entries {
					if strings.EqualFold(e.Name(), name) {
						cands = append(cands, e.Name())
					}
				}
			}
			for _, n := range cands {
				p := filepath.Join(d, n)
				fi, err := os.Lstat(p)
				if err != nil || !fi.IsDir() || ig.Ignored(p, true) {
					continue
				}
				next = append(next, p)
			}
		}
		cur = next
	}
	return cur
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*globCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
