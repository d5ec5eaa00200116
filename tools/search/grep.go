package search

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// grepParamsSchema is the parameter schema of grepParams, generated once, when first asked for.
var grepParamsSchema = tools.ParametersOnce[grepParams](true)

const (
	grepName      = "grep_search"
	grepAliasName = "search_file_content"

	// defaultTotalMax is Gemini CLI's default cap on reported matches.
	defaultTotalMax = 100
	// maxLineChars is how much of a long line (minified code, data) is shown.
	maxLineChars = 500
	// chunkSize is the read buffer of the pure-Go search; most files fit in one. It is
	// ripgrep's initial buffer size, so that where the two stop reading a file at the
	// per-file limit (and what they have seen of it for a NUL byte) agrees.
	chunkSize = 64 << 10
)

// grepTool is grep_search, also called by its earlier name search_file_content.
type grepTool struct {
	ws *workspace.Workspace
	rg string // ripgrep binary; "" for the pure-Go search
	// chunk overrides chunkSize (tests use tiny buffers to exercise refills).
	chunk int
	// strict makes a failure of rg an error instead of a fall back to the Go search,
	// so that tests comparing the engines know which one ran.
	strict bool
}

func (t *grepTool) Info() tools.Info {
	return tools.Info{
		Name:        grepName,
		Aliases:     []string{grepAliasName},
		DisplayName: "SearchText",
		Description: "Searches file contents for a regular expression, line by line; faster than grep in the shell. " +
			"1 to 3 matches found without context, before or after come with the lines around them (50 around one, 15 around each of two or three).",
		Kind:       tools.KindSearch,
		Source:     tools.SourceBuiltin,
		Parameters: grepParamsSchema(), // open, like Gemini CLI's
		Idempotent: true,
	}
}

// grepParams are grep_search's parameters. The integers are float64s, which accept
// 10.0 as well as 10, and are checked to be whole in Build.
type grepParams struct {
	Pattern           string   "json:\"pattern\" jsonschema:\"A Go (RE2) regular expression; for everyday patterns the same as ripgrep's. `\\\\b` marks word boundaries.\""
	DirPath           string   `json:"dir_path,omitempty" jsonschema:"A directory (searched recursively) or a file; default: the root."`
	IncludePattern    string   `json:"include_pattern,omitempty" jsonschema:"A glob the files must match, e.g. '*.{ts,tsx}' or 'src/**'."`
	ExcludePattern    string   `json:"exclude_pattern,omitempty" jsonschema:"A regular expression; matching lines are left out."`
	NamesOnly         bool     `json:"names_only,omitempty" jsonschema:"Only the paths of the files that match."`
	CaseSensitive     bool     `json:"case_sensitive,omitempty" schema:"default=false"`
	FixedStrings      bool     `json:"fixed_strings,omitempty" jsonschema:"Take pattern as literal text." schema:"default=false"`
	Context           *float64 `json:"context,omitempty" jsonschema:"Lines around each match (grep -C)." schema:"type=integer,minimum=0"`
	After             *float64 `json:"after,omitempty" jsonschema:"Lines after each match (grep -A)." schema:"type=integer,minimum=0"`
	Before            *float64 `json:"before,omitempty" jsonschema:"Lines before each match (grep -B)." schema:"type=integer,minimum=0"`
	NoIgnore          bool     `json:"no_ignore,omitempty" jsonschema:"Search ignored files too (.gitignore, build/, …)." schema:"default=false"`
	MaxMatchesPerFile *float64 `json:"max_matches_per_file,omitempty" schema:"type=integer,minimum=1"`
	TotalMaxMatches   *float64 `json:"total_max_matches,omitempty" jsonschema:"Default 100." schema:"type=integer,minimum=1"`
}

// grepArgs is what grep_search decodes: its parameters, and include, the name older
// Gemini CLI releases gave include_pattern, which prompts written for them still pass.
// The schema is open, so it passes validation without being declared.
type grepArgs struct {
	grepParams
	Include string `json:"include"`
}

func (t *grepTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a grepArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	p := a.grepParams
	if p.IncludePattern == "" {
		p.IncludePattern = a.Include
	}
	c := &grepCall{t: t, p: p}
	var err error
	if c.pat, err = compilePattern(p.Pattern, p.FixedStrings, p.CaseSensitive); err != nil {
		return nil, tools.Errorf(tools.ErrInvalidParams, "%v", err)
	}
	if p.ExcludePattern != "" {
		expr := p.ExcludePattern
		if !p.CaseSensitive {
			expr = "(?i)" + expr
		}
		if c.exclude, err = regexp.Compile(expr); err != nil {
			return nil, tools.Errorf(tools.ErrInvalidParams, "invalid exclude_pattern %q: %v", p.ExcludePattern, err)
		}
	}
	if c.include, err = parseInclude(p.IncludePattern); err != nil {
		return nil, tools.Errorf(tools.ErrInvalidParams, "%v", err)
	}
	ctxLines, err := intArg("context", p.Context, 0, 0)
	if err != nil {
		return nil, err
	}
	if c.before, err = intArg("before", p.Before, ctxLines, 0); err != nil {
		return nil, err
	}
	if c.after, err = intArg("after", p.After, ctxLines, 0); err != nil {
		return nil, err
	}
	if c.perFile, err = intArg("max_matches_per_file", p.MaxMatchesPerFile, 0, 1); err != nil {
		return nil, err
	}
	if c.total, err = intArg("total_max_matches", p.TotalMaxMatches, defaultTotalMax, 1); err != nil {
		return nil, err
	}
	if p.NamesOnly {
		c.before, c.after = 0, 0
		if c.exclude == nil {
			// The first match of a file is all a list of names needs.
			c.perFile = 1
		}
	}
	if c.dir, err = resolvePath(t.ws, p.DirPath); err != nil {
		return nil, err
	}
	isFile, err := checkTarget(c.dir, p.DirPath)
	if err != nil {
		return nil, err
	}
	if isFile {
		c.file, c.dir = c.dir, filepath.Dir(c.dir)
	}
	c.walk = workspace.WalkOptions{GitIgnore: !p.NoIgnore, AgentIgnore: true, DefaultExcludes: true}
	return c, nil
}

// grepCall is one validated grep_search call.
type grepCall struct {
	t       *grepTool
	p       grepParams
	dir     string
	pat     *pattern
	exclude *regexp.Regexp
	include *includeGlob
	// before and after are the context lines; perFile the per-file limit (0: none);
	// total the limit on reported matches (on listed files with names_only).
	before, after, perFile, total int
	walk                          workspace.WalkOptions
	// file is the one file searched when dir_path names a file ("" for a directory);
	// dir is then its directory.
	file string
}

// target is the file or directory searched.
func (c *grepCall) target() string {
	if c.file != "" {
		return c.file
	}
	return c.dir
}

func (c *grepCall) Describe() string {
	s := fmt.Sprintf("'%s' in %s", c.p.Pattern, c.target())
	if c.include != nil {
		s += fmt.Sprintf(" (filter: %s)", c.include.raw)
	}
	return s
}

func (c *grepCall) Locations() []tools.Location { return []tools.Location{{Path: c.target()}} }

func (c *grepCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *grepCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	isFile, err := checkTarget(c.target(), c.p.DirPath)
	if err != nil {
		return nil, err
	}
	if isFile != (c.file != "") {
		return nil, tools.Errorf(tools.ErrInvalidParams, "dir_path %q changed from a file to a directory or back since the call was made; call again", c.p.DirPath)
	}
	var k *collector
	switch {
	case c.file != "":
		k, err = c.searchFile(ctx)
	case c.t.rg != "":
		k, err = c.searchRipgrep(ctx)
		if err != nil && ctx.Err() == nil && !c.t.strict {
			slog.Warn("ripgrep failed; searching without it", "dir", c.dir, "err", err)
			k, err = c.searchGo(ctx)
		}
	default:
		k, err = c.searchGo(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, tools.Errorf(tools.ErrExecutionFailed, "searching %s: %w", c.target(), err)
	}
	if n := c.autoContextLines(k); n > 0 {
		return c.formatWithContext(ctx, k, n), nil
	}
	return c.format(k), nil
}

// searchFile searches the one file dir_path names, in its unsaved form if it is open in
// the editor. A file named explicitly is searched even if Git ignores it; the agent's
// own ignore file still keeps it out.
func (c *grepCall) searchFile(ctx context.Context) (*collector, error) {
	k := &collector{c: c}
	if newPathFilter(c.t.ws, c.dir, workspace.WalkOptions{AgentIgnore: true}, nil).skip(c.file) {
		return k, nil
	}
	lines, err := c.fileLines(ctx, c.lineSearch(), c.file)
	if err != nil {
		return nil, err
	}
	k.add(relTo(c.dir, c.file), lines)
	return k, nil
}

// fileLines searches the file at abs with s, from the editor's text if it is open.
// Binary and unreadable files give no lines, as in a directory search.
func (c *grepCall) fileLines(ctx context.Context, s *lineSearch, abs string) ([]hitLine, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, open := c.t.ws.Document(abs); open {
		lines, _, err := s.search(strings.NewReader(d.Text), nil, nil)
		if err != nil {
			return nil, nil
		}
		return lines, nil
	}
	lines, _ := searchPath(s, abs, nil, func() bool { return ctx.Err() != nil })
	return lines, ctx.Err()
}

func (c *grepCall) lineSearch() *lineSearch {
	chunk := c.t.chunk
	if chunk <= 0 {
		chunk = chunkSize
	}
	return &lineSearch{pat: c.pat, before: c.before, after: c.after, perFile: c.perFile, chunk: chunk}
}

// fileResult is what one file contributes to the output.
type fileResult struct {
	rel   string
	lines []hitLine
}

// collector takes each file's lines as ripgrep reports them (from either engine) and
// applies what both engines share: the per-file limit, exclude_pattern and the total
// limit. Files are added from one goroutine.
type collector struct {
	c     *grepCall
	files []fileResult
	count int // matches, or files with names_only
}

func (k *collector) full() bool { return k.count >= k.c.total }

// add takes one file's lines (in line order) and reports whether the total limit is
// now reached.
func (k *collector) add(rel string, lines []hitLine) bool {
	c := k.c
	if c.perFile > 0 {
		lines = limitMatches(lines, c.perFile, c.after)
	}
	if c.exclude != nil {
		lines = c.excludeLines(lines)
	}
	n := 0
	for _, l := range lines {
		if l.isMatch() {
			n++
		}
	}
	if n == 0 {
		return k.full()
	}
	if c.p.NamesOnly {
		k.files = append(k.files, fileResult{rel: rel})
		k.count++
		return k.full()
	}
	if left := c.total - k.count; n > left {
		lines = limitMatches(lines, left, c.after)
		n = left
	}
	k.files = append(k.files, fileResult{rel: rel, lines: lines})
	k.count += n
	return k.full()
}

// limitMatches keeps lines up to the max-th match and then only that match's
// after-context, reporting any match in it as context, as ripgrep's --max-count does.
func limitMatches(lines []hitLine, max, after int) []hitLine {
	seen := 0
	for i, l := range lines {
		if !l.isMatch() {
			continue
		}
		if seen++; seen < max {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j].num <= l.num+after {
			lines[j].col = -1
			j++
		}
		return lines[:j]
	}
	return lines
}

// excludeLines drops the lines exclude_pattern matches, and context lines no longer
// next to a remaining match.
func (c *grepCall) excludeLines(lines []hitLine) []hitLine {
	kept := lines[:0]
	for _, l := range lines {
		if !c.exclude.MatchString(l.text) {
			kept = append(kept, l)
		}
	}
	out := kept[:0]
	for i, l := range kept {
		if l.isMatch() || c.nearMatch(kept, i) {
			out = append(out, l)
		}
	}
	return out
}

// nearMatch reports whether the context line lines[i] is within the context of a match.
func (c *grepCall) nearMatch(lines []hitLine, i int) bool {
	n := lines[i].num
	for j := i - 1; j >= 0 && lines[j].num >= n-c.after; j-- {
		if lines[j].isMatch() {
			return true
		}
	}
	for j := i + 1; j < len(lines) && lines[j].num <= n+c.before; j++ {
		if lines[j].isMatch() {
			return true
		}
	}
	return false
}

// Gemini CLI shows the lines around the matches when a search finds few of them and no
// context was asked for, so that one call often does the work of a search and a read.
const (
	// autoContextOne is the context around a single match; autoContextFew around each
	// of up to autoContextMaxMatches.
	autoContextOne        = 50
	autoContextFew        = 15
	autoContextMaxMatches = 3
	// autoContextBudget bounds the output with the added context, in characters; the
	// context shrinks until the output fits.
	autoContextBudget = tools.MaxOutputChars - 2_000
)

// autoContextLines is the number of lines of context to add around each match of k:
// 0 unless the call asked for no context, lists matching lines and found 1 to 3.
func (c *grepCall) autoContextLines(k *collector) int {
	if c.p.NamesOnly || c.p.Context != nil || c.p.Before != nil || c.p.After != nil {
		return 0
	}
	switch {
	case k.count == 1:
		return autoContextOne
	case k.count > 1 && k.count <= autoContextMaxMatches:
		return autoContextFew
	}
	return 0
}

// formatWithContext is format with n lines of context around each match of k, fewer if
// that output would exceed autoContextBudget. The matching lines are those k found; a
// line of the context that also matches is shown as context.
func (c *grepCall) formatWithContext(ctx context.Context, k *collector, n int) *tools.Result {
	withContext := make([][]hitLine, len(k.files))
	for i, f := range k.files {
		s := c.lineSearch()
		s.before, s.after, s.perFile = n, n, 0
		lines, err := c.fileLines(ctx, s, filepath.Join(c.dir, filepath.FromSlash(f.rel)))
		if err != nil || len(lines) == 0 {
			return c.format(k) // the file changed or went away: show what was found
		}
		withContext[i] = lines
	}
	for ; n > 0; n /= 2 {
		kn := &collector{c: k.c, count: k.count, files: make([]fileResult, len(k.files))}
		added := false
		for i, f := range k.files {
			kn.files[i] = fileResult{rel: f.rel, lines: around(withContext[i], f.lines, n)}
			added = added || len(kn.files[i].lines) > len(f.lines)
		}
		if !added {
			break // the files have no other lines
		}
		if res := c.format(kn); utf8.RuneCountInString(res.Output) <= autoContextBudget {
			res.Output = strings.Replace(res.Output, ":\n---\n",
				fmt.Sprintf(" (no context was asked for, so up to %d %s around each match are shown, as L<n>- lines):\n---\n", n, plural(n, "line", "lines")), 1)
			return res
		}
	}
	return c.format(k)
}

// around returns the lines of all (a file's lines near its matches) within n lines of
// the matches in found, marking as matches only those.
func around(all, found []hitLine, n int) []hitLine {
	col := make(map[int]int, len(found))
	for _, l := range found {
		if l.isMatch() {
			col[l.num] = l.col
		}
	}
	var out []hitLine
	for _, l := range all {
		near := false
		for m := range col {
			if l.num >= m-n && l.num <= m+n {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		l.col = -1
		if c, ok := col[l.num]; ok {
			l.col = c
		}
		out = append(out, l)
	}
	return out
}

// format renders the result the way Gemini CLI's grep_search does.
func (c *grepCall) format(k *collector) *tools.Result {
	slices.SortFunc(k.files, func(a, b fileResult) int { return strings.Compare(a.rel, b.rel) })
	where := fmt.Sprintf("for pattern \"%s\" in path \"%s\"", c.p.Pattern, c.target())
	if c.include != nil {
		where += fmt.Sprintf(" (filter: \"%s\")", c.include.raw)
	}
	if len(k.files) == 0 {
		return &tools.Result{Summary: "No matches found", Output: "No matches found " + where + "."}
	}
	limited := k.full()
	var b strings.Builder
	if c.p.NamesOnly {
		fmt.Fprintf(&b, "Found %d %s with matches %s", len(k.files), plural(len(k.files), "file", "files"), where)
		if limited {
			fmt.Fprintf(&b, " (results limited to %d files)", c.total)
		}
		b.WriteString(":\n")
		for _, f := range k.files {
			b.WriteString(f.rel + "\n")
		}
	} else {
		fmt.Fprintf(&b, "Found %d %s %s", k.count, plural(k.count, "match", "matches"), where)
		if limited {
			fmt.Fprintf(&b, " (results limited to %d matches for performance)", c.total)
		}
		b.WriteString(":\n---\n")
		for _, f := range k.files {
			b.WriteString("File: " + f.rel + "\n")
			for _, l := range f.lines {
				sep := ": "
				if !l.isMatch() {
					sep = "- "
				}
				b.WriteString("L" + strconv.Itoa(l.num) + sep + displayLine(l.text, l.col) + "\n")
			}
			b.WriteString("---\n")
		}
	}
	if limited {
		fmt.Fprintf(&b, "More matches may exist: results stop at total_max_matches (%d). Narrow the search with a more specific pattern, dir_path or include_pattern, or raise total_max_matches.\n", c.total)
	}
	summary := fmt.Sprintf("Found %d %s", k.count, plural(k.count, "match", "matches"))
	if c.p.NamesOnly {
		summary = fmt.Sprintf("Found %d %s", len(k.files), plural(len(k.files), "file", "files"))
	}
	if limited {
		summary += " (limited)"
	}
	return &tools.Result{Summary: summary, Output: strings.TrimRight(b.String(), "\n")}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// displayLine prepares a line for the output: valid UTF-8, no trailing white space,
// and at most maxLineChars characters, cut around the match at byte offset col (-1
// for a context line) so that the match stays visible.
func displayLine(text string, col int) string {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	if utf8.RuneCountInString(text) <= maxLineChars {
		return strings.ToValidUTF8(text, "\uFFFD")
	}
	start := 0
	if col > 0 && col < len(text) {
		// Show some of what precedes the match, cutting at a character boundary.
		start = max(0, col-100)
		for start > 0 && !utf8.RuneStart(text[start]) {
			start--
		}
		if utf8.RuneCountInString(text[:col]) < maxLineChars-100 {
			start = 0
		}
	}
	end, n := start, 0
	for end < len(text) && n < maxLineChars {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
		n++
	}
	out := strings.ToValidUTF8(text[start:end], "\uFFFD")
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "… [line truncated]"
	}
	return out
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*grepCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
