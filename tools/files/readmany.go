package files

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

const (
	// maxManyTextBytes caps the text one read_many_files call returns.
	maxManyTextBytes = 1 << 20
	// maxManyPartBytes caps the inline data (images, audio, PDF) of one call.
	maxManyPartBytes = 20 << 20
	// maxSkipsListed caps the list of skipped files in the output.
	maxSkipsListed = 50
)

// defaultExcludeGlobs are skipped when useDefaultExcludes is true, besides the
// directories workspace.DefaultExcludes names: build output, editor settings, archives
// and other binaries, and .env files, which hold secrets. They are matched against the
// path relative to where the include pattern starts, so an include that reaches into
// such a directory on purpose ("dist/**/*.js") is honoured.
var defaultExcludeGlobs = []string{
	"**/dist/**", "**/build/**", "**/coverage/**", "**/.vscode/**", "**/.idea/**",
	"**/*.pyc", "**/*.pyo", "**/*.class", "**/*.jar", "**/*.war",
	"**/*.exe", "**/*.dll", "**/*.so", "**/*.dylib", "**/*.o", "**/*.a", "**/*.obj", "**/*.lib", "**/*.wasm", "**/*.bin",
	"**/*.zip", "**/*.tar", "**/*.gz", "**/*.tgz", "**/*.bz2", "**/*.xz", "**/*.zst", "**/*.rar", "**/*.7z", "**/*.iso", "**/*.dmg",
	"**/*.doc", "**/*.docx", "**/*.xls", "**/*.xlsx", "**/*.ppt", "**/*.pptx", "**/*.odt", "**/*.ods", "**/*.odp",
	"**/*.sqlite", "**/*.db", "**/.DS_Store", "**/.env",
}

// readManyFiles is the read_many_files tool.
type readManyFiles struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewReadManyFiles returns the read_many_files tool: the text of every file that paths
// or glob patterns name, concatenated with a header per file, within per-file and total
// limits; images, audio and PDF files named explicitly come as inline data.
func NewReadManyFiles(ws *workspace.Workspace) tools.Tool {
	return &readManyFiles{ws: ws, info: tools.Info{
		Name:        "read_many_files",
		DisplayName: "ReadManyFiles",
		Description: "Reads the text files that paths or glob patterns (relative to the workspace root, e.g. `src/**/*.ts`) name, in sorted order, " +
			"each after a `--- path ---` line; each is cut at 2000 lines and the whole at 1 MB, " +
			"and what was skipped is listed at the end. Images, audio and PDF files are read only when named explicitly. " +
			"For one file, use read_file.",
		Kind:       tools.KindRead,
		Source:     tools.SourceBuiltin,
		Idempotent: true,
		Parameters: tools.Parameters[readManyArgs](false),
	}}
}

func (t *readManyFiles) Info() tools.Info { return t.info }

type readManyArgs struct {
	Include            []string   `json:"include" jsonschema:"Paths or glob patterns, e.g. [\"README.md\", \"docs/\"]." schema:"minItems=1,itemMinLength=1"`
	Exclude            []string   `json:"exclude,omitempty" jsonschema:"Glob patterns to leave out." schema:"itemMinLength=1"`
	Recursive          *bool      `json:"recursive,omitempty" schema:"default=true"`
	UseDefaultExcludes *bool      `json:"useDefaultExcludes,omitempty" jsonschema:"Leave out node_modules, .git, binary files and the like." schema:"default=true"`
	RespectGitIgnore   *bool      `json:"respect_git_ignore,omitempty" schema:"default=true"`
	FileFiltering      *filtering `json:"file_filtering_options,omitempty"`
}

// source is one include entry, resolved.
type source struct {
	raw string
	// abs is the resolved path a literal entry names, or the resolved directory a glob
	// starts from.
	abs string
	// pattern is the glob relative to abs; "" for a literal path.
	pattern string
}

func (t *readManyFiles) Build(args json.RawMessage) (tools.Invocation, error) {
	var a readManyArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if len(a.Include) == 0 {
		return nil, tools.Errorf(tools.ErrInvalidParams, "include must name at least one path or glob pattern")
	}
	c := &readManyCall{
		ws:              t.ws,
		recursive:       a.Recursive == nil || *a.Recursive,
		defaultExcludes: a.UseDefaultExcludes == nil || *a.UseDefaultExcludes,
	}
	c.opts = walkOptions(a.RespectGitIgnore, a.FileFiltering, c.defaultExcludes)
	for _, inc := range a.Include {
		src, err := t.source(inc)
		if err != nil {
			return nil, err
		}
		c.sources = append(c.sources, src)
	}
	for _, x := range a.Exclude {
		x = strings.TrimPrefix(filepath.ToSlash(x), "./")
		if !doublestar.ValidatePattern(x) {
			return nil, tools.Errorf(tools.ErrInvalidParams, "exclude pattern %q is not a valid glob pattern", x)
		}
		if x = strings.TrimSuffix(x, "/"); x != "" {
			c.exclude = append(c.exclude, x, x+"/**")
		}
	}
	return c, nil
}

// source resolves one include entry; a glob is confined by the directory it starts from.
func (t *readManyFiles) source(inc string) (source, error) {
	if strings.TrimSpace(inc) == "" {
		return source{}, tools.Errorf(tools.ErrInvalidParams, "include entries must not be empty")
	}
	if !strings.ContainsAny(inc, "*?[{") {
		abs, err := resolvePath(t.ws, "include", inc)
		if err != nil {
			return source{}, err
		}
		return source{raw: inc, abs: abs}, nil
	}
	full := inc
	if !filepath.IsAbs(full) {
		full = filepath.Join(t.ws.Roots()[0], full)
	}
	base, pattern := doublestar.SplitPattern(filepath.ToSlash(full))
	if !doublestar.ValidatePattern(pattern) {
		return source{}, tools.Errorf(tools.ErrInvalidParams, "include pattern %q is not a valid glob pattern", inc)
	}
	abs, err := resolvePath(t.ws, "include", filepath.FromSlash(base))
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) && te.Type == tools.ErrPathNotInWorkspace {
			return source{}, tools.Errorf(tools.ErrPathNotInWorkspace, "include pattern %q reaches outside the workspace (roots: %s)", inc, strings.Join(t.ws.Roots(), ", "))
		}
		return source{}, err
	}
	return source{raw: inc, abs: abs, pattern: pattern}, nil
}

type readManyCall struct {
	ws              *workspace.Workspace
	sources         []source
	exclude         []string // relative to the workspace root, with dir/** forms added
	recursive       bool
	defaultExcludes bool
	opts            workspace.WalkOptions
}

func (c *readManyCall) Describe() string {
	incs := make([]string, 0, len(c.sources))
	for _, s := range c.sources {
		incs = append(incs, s.raw)
	}
	if len(incs) > 3 {
		incs = append(incs[:3], fmt.Sprintf("and %d more", len(incs)-3))
	}
	return "Read files: " + strings.Join(incs, ", ")
}

func (c *readManyCall) Locations() []tools.Location {
	locs := make([]tools.Location, 0, len(c.sources))
	for _, s := range c.sources {
		locs = append(locs, tools.Location{Path: s.abs})
	}
	return locs
}

func (c *readManyCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

// skip is a file left out, and why.
type skip struct{ rel, reason string }

// collector gathers the files the walks find; the walks call it concurrently.
type collector struct {
	mu    sync.Mutex
	files map[string]bool // abs → named literally
	skips []skip
	// defaulted counts matching files left out by the default excludes.
	defaulted int
}

func (col *collector) add(abs string, literal bool) {
	col.mu.Lock()
	col.files[abs] = col.files[abs] || literal
	col.mu.Unlock()
}

func (col *collector) skip(rel, reason string) {
	col.mu.Lock()
	col.skips = append(col.skips, skip{rel, reason})
	col.mu.Unlock()
}

func (c *readManyCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	col := &collector{files: map[string]bool{}}
	for _, src := range c.sources {
		if err := c.collect(ctx, src, col); err != nil {
			return nil, err
		}
	}
	paths := make([]string, 0, len(col.files))
	for p := range col.files {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int {
		return cmp.Or(strings.Compare(c.ws.Rel(a), c.ws.Rel(b)), strings.Compare(a, b))
	})

	var out strings.Builder
	var parts []tools.Part
	var read []string
	partBytes := 0
	for _, abs := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel := c.ws.Rel(abs)
		block, part, f, reason := c.readOne(abs, rel, col.files[abs])
		switch {
		case reason != "":
			col.skip(rel, reason)
		case part != nil && partBytes+len(part.Data) > maxManyPartBytes:
			col.skip(rel, fmt.Sprintf("the inline data limit of %s for one call was reached; read it with read_file", formatSize(maxManyPartBytes)))
		case out.Len()+len(block) > maxManyTextBytes:
			col.skip(rel, fmt.Sprintf("the output limit of %s for one call was reached; read it with read_file, or narrow include", formatSize(maxManyTextBytes)))
		default:
			out.WriteString(block)
			if part != nil {
				parts = append(parts, *part)
				partBytes += len(part.Data)
			}
			read = append(read, rel)
			noteRead(ctx, f)
		}
	}

	var res strings.Builder
	if len(read) == 0 {
		res.WriteString("No files matching the criteria were found or all were skipped.")
	} else {
		res.WriteString(out.String())
		res.WriteString("--- End of content ---")
	}
	notes := c.skipNotes(col)
	res.WriteString(notes)

	summary := fmt.Sprintf("Read %d %s", len(read), plural(len(read), "file", "files"))
	if n := len(col.skips); n > 0 {
		summary += fmt.Sprintf(" (%d skipped)", n)
	}
	display := summary
	if len(read) > 0 {
		display += ":\n- " + strings.Join(read, "\n- ")
	}
	display += notes
	return &tools.Result{Summary: summary, Output: res.String(), Parts: parts, Display: display}, nil
}

// skipNotes lists, after the content, what was left out and why.
func (c *readManyCall) skipNotes(col *collector) string {
	var b strings.Builder
	if n := len(col.skips); n > 0 {
		slices.SortFunc(col.skips, func(a, b skip) int { return strings.Compare(a.rel, b.rel) })
		fmt.Fprintf(&b, "\n\nSkipped %d %s:", n, plural(n, "file", "files"))
		for i, s := range col.skips {
			if i == maxSkipsListed {
				fmt.Fprintf(&b, "\n- … and %d more", n-maxSkipsListed)
				break
			}
			fmt.Fprintf(&b, "\n- %s: %s", s.rel, s.reason)
		}
	}
	if col.defaulted > 0 {
		fmt.Fprintf(&b, "\n\n%d matching %s left out by the default excludes (build output, archives and other binaries, .env); set useDefaultExcludes to false to include them.",
			col.defaulted, plural(col.defaulted, "file was", "files were"))
	}
	return b.String()
}

// collect adds the files src names to col.
func (c *readManyCall) collect(ctx context.Context, src source, col *collector) error {
	rel := c.ws.Rel(src.abs)
	if src.pattern == "" {
		if _, open := c.ws.Document(src.abs); open {
			c.addLiteral(src.abs, rel, col)
			return nil
		}
		fi, err := c.ws.Stat(src.abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			col.skip(rel, "not found")
			return nil
		case err != nil:
			col.skip(rel, err.Error())
			return nil
		case !fi.IsDir():
			c.addLiteral(src.abs, rel, col)
			return nil
		}
		pattern := "**"
		if !c.recursive {
			pattern = "*"
		}
		return c.walk(ctx, src.abs, pattern, col)
	}
	fi, err := c.ws.Stat(src.abs)
	if err != nil || !fi.IsDir() {
		return nil // nothing matches below a directory that is not there
	}
	return c.walk(ctx, src.abs, src.pattern, col)
}

// addLiteral adds a file named by its path: the person or model asked for it by name,
// so only the exclude patterns of the call apply.
func (c *readManyCall) addLiteral(abs, rel string, col *collector) {
	if c.excluded(rel) {
		return
	}
	col.add(abs, true)
}

func (c *readManyCall) walk(ctx context.Context, base, pattern string, col *collector) error {
	shallow := !strings.Contains(pattern, "/") && !strings.Contains(pattern, "**")
	err := c.ws.Walk(ctx, base, c.opts, func(p string, d fs.DirEntry) error {
		relBase, err := filepath.Rel(base, p)
		if err != nil {
			return nil
		}
		relBase = filepath.ToSlash(relBase)
		rel := c.ws.Rel(p)
		if d.IsDir() {
			if c.excluded(rel) || (c.defaultExcludes && matchAny(defaultExcludeGlobs, relBase)) {
				return filepath.SkipDir
			}
			if shallow {
				return filepath.SkipDir // a pattern without a slash matches only at the top
			}
			return nil
		}
		if m, _ := doublestar.Match(pattern, relBase); !m || c.excluded(rel) {
			return nil
		}
		if c.defaultExcludes && matchAny(defaultExcludeGlobs, relBase) {
			col.mu.Lock()
			col.defaulted++
			col.mu.Unlock()
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if !c.ws.Contains(p) {
				col.skip(rel, "symlink to a path outside the workspace")
				return nil
			}
			if fi, err := c.ws.Stat(p); err != nil || !fi.Mode().IsRegular() {
				return nil // a link to a directory, or broken: not a file to read
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		col.add(p, false)
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fileError(c.ws, base, err)
	}
	return nil
}

// excluded reports whether rel (relative to its workspace root) matches an exclude
// pattern, as a path or, for patterns without a slash, by its base name.
func (c *readManyCall) excluded(rel string) bool {
	if matchAny(c.exclude, rel) {
		return true
	}
	name := path.Base(rel)
	for _, x := range c.exclude {
		if !strings.Contains(x, "/") {
			if m, _ := doublestar.Match(x, name); m {
				return true
			}
		}
	}
	return false
}

func matchAny(patterns []string, rel string) bool {
	for _, x := range patterns {
		if m, _ := doublestar.Match(x, rel); m {
			return true
		}
	}
	return false
}

// explicit reports whether an include entry names the file or its extension, which is
// what it takes for an image, audio or PDF file to be sent.
func (c *readManyCall) explicit(abs string) bool {
	name := filepath.Base(abs)
	ext := strings.ToLower(filepath.Ext(abs))
	for _, s := range c.sources {
		raw := filepath.ToSlash(s.raw)
		if path.Base(raw) == name || (ext != "" && strings.Contains(strings.ToLower(raw), ext)) {
			return true
		}
	}
	return false
}

// readOne returns the block of one file for the output and, for media, its inline data;
// or the reason it is skipped.
func (c *readManyCall) readOne(abs, rel string, literal bool) (block string, part *tools.Part, f *workspace.File, reason string) {
	header := "--- " + rel + " ---\n"
	_, open := c.ws.Document(abs)
	if !open {
		fi, err := c.ws.Stat(abs)
		switch {
		case err != nil:
			return "", nil, nil, fileError(c.ws, abs, err).Message
		case !fi.Mode().IsRegular():
			// A named pipe or a device would block the read, or never end.
			return "", nil, nil, fmt.Sprintf("not a regular file (%s)", workspace.FileKind(fi.Mode()))
		case fi.Size() > maxFileBytes:
			return "", nil, nil, fmt.Sprintf("%s, over the limit of %s", formatSize(fi.Size()), formatSize(maxFileBytes))
		}
	}
	if mime := mediaExt(abs); mime != "" && !open {
		if !literal && !c.explicit(abs) {
			return "", nil, nil, fmt.Sprintf("%s file not requested explicitly; name it or its extension (e.g. *%s) in include to read it", mediaKind(mime), strings.ToLower(filepath.Ext(abs)))
		}
		data, err := c.ws.ReadBytes(abs, maxFileBytes)
		if err != nil {
			return "", nil, nil, fileError(c.ws, abs, err).Message
		}
		if m := sniffMedia(data); m != "" {
			return fmt.Sprintf("%s[%s file, %s, %s: attached as inline data]\n", header, mediaKind(m), m, formatSize(int64(len(data)))), &tools.Part{MIMEType: m, Data: data}, nil, ""
		}
	}
	f, err := c.ws.ReadText(abs, maxFileBytes)
	if errors.Is(err, workspace.ErrBinary) {
		data, rerr := c.ws.ReadBytes(abs, maxFileBytes)
		if rerr != nil {
			return "", nil, nil, fileError(c.ws, abs, rerr).Message
		}
		if m := sniffMedia(data); m != "" && (literal || c.explicit(abs)) {
			return fmt.Sprintf("%s[%s file, %s, %s: attached as inline data]\n", header, mediaKind(m), m, formatSize(int64(len(data)))), &tools.Part{MIMEType: m, Data: data}, nil, ""
		}
		reason, _ := notTextReason(data)
		return "", nil, nil, strings.TrimPrefix(reason, "it is ")
	}
	if err != nil {
		return "", nil, nil, fileError(c.ws, abs, err).Message
	}
	text := f.Text
	total := countLines(text)
	var note string
	if total > maxLines {
		_, to := lineRange(text, 1, maxLines)
		text = text[:to]
		note = fmt.Sprintf("[File truncated: showing lines 1-%d of %d total lines. Use read_file with start_line: %d to read more.]\n", maxLines, total, maxLines+1)
	}
	text, cut := capLongLines(text)
	if cut {
		note += fmt.Sprintf("[Lines longer than %d characters were shortened; they end with '%s'.]\n", maxLineChars, truncatedMarker)
	}
	return header + text + "\n" + note, nil, f, ""
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*readManyCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
