package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// maxListEntries caps one listing, so that a directory of generated files does not fill
// the model's context.
const maxListEntries = 2000

// listDirectory is the list_directory tool.
type listDirectory struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewListDirectory returns the list_directory tool: the entries directly inside one
// directory, subdirectories first, with file sizes, leaving out what ignore files,
// the default excludes and the call's own patterns exclude.
//
// A path that names a file rather than a directory is refused as invalid_tool_params
// (the model chose the wrong tool); a path that does not exist is file_not_found.
func NewListDirectory(ws *workspace.Workspace) tools.Tool {
	return &listDirectory{ws: ws, info: tools.Info{
		Name:        "list_directory",
		DisplayName: "ReadFolder",
		Description: "Lists the files and subdirectories directly in a directory, directories first, marked [DIR]; files show their size. " +
			"Ignored entries (.gitignore, .geminiignore, .agentlsignore; .git, node_modules, …) are left out and counted.",
		Kind:       tools.KindRead,
		Source:     tools.SourceBuiltin,
		Idempotent: true,
		Parameters: tools.Parameters[listDirectoryArgs](false),
	}}
}

func (t *listDirectory) Info() tools.Info { return t.info }

type listDirectoryArgs struct {
	DirPath          string     `json:"dir_path"`
	Ignore           []string   `json:"ignore,omitempty" jsonschema:"Glob patterns of entries to leave out."`
	RespectGitIgnore *bool      `json:"respect_git_ignore,omitempty" schema:"default=true"`
	FileFiltering    *filtering `json:"file_filtering_options,omitempty"`
}

func (t *listDirectory) Build(args json.RawMessage) (tools.Invocation, error) {
	var a listDirectoryArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	// "build/" means the directory build: patterns are matched against names
	// without a trailing slash.
	ignore := make([]string, 0, len(a.Ignore))
	for _, p := range a.Ignore {
		if !doublestar.ValidatePattern(p) {
			return nil, tools.Errorf(tools.ErrInvalidParams, "ignore pattern %q is not a valid glob pattern", p)
		}
		if p = strings.TrimSuffix(p, "/"); p != "" {
			ignore = append(ignore, p)
		}
	}
	abs, err := resolvePath(t.ws, "dir_path", a.DirPath)
	if err != nil {
		return nil, err
	}
	opts := walkOptions(a.RespectGitIgnore, a.FileFiltering, true)
	opts.Exclude = ignore
	return &listDirectoryCall{ws: t.ws, path: a.DirPath, abs: abs, opts: opts}, nil
}

type listDirectoryCall struct {
	ws   *workspace.Workspace
	path string
	abs  string
	opts workspace.WalkOptions
}

func (c *listDirectoryCall) Describe() string { return "List " + c.ws.Rel(c.abs) }

func (c *listDirectoryCall) Locations() []tools.Location { return []tools.Location{{Path: c.abs}} }

func (c *listDirectoryCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

// listEntry is one line of a listing.
type listEntry struct {
	name  string
	dir   bool
	label string
}

func (c *listDirectoryCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := resolvePath(c.ws, "dir_path", c.path)
	if err != nil {
		return nil, err
	}
	rel := c.ws.Rel(abs)
	fi, err := c.ws.Stat(abs)
	if err != nil {
		return nil, fileError(c.ws, abs, err)
	}
	if !fi.IsDir() {
		return nil, tools.Errorf(tools.ErrInvalidParams, "Path is not a directory: %s. It is a file; use read_file to read it.", rel)
	}
	dirents, err := os.ReadDir(abs)
	if err != nil && len(dirents) == 0 {
		return nil, fileError(c.ws, abs, err)
	}
	ig := c.ws.NewIgnorer(abs, c.opts)
	var entries []listEntry
	ignored := 0
	for _, d := range dirents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := c.entry(abs, d)
		if ig.Ignored(filepath.Join(abs, d.Name()), e.dir) {
			ignored++
			continue
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b listEntry) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})

	var b strings.Builder
	if len(entries) == 0 {
		fmt.Fprintf(&b, "Directory %s is empty.", abs)
	} else {
		fmt.Fprintf(&b, "Directory listing for %s:\n", abs)
		for i, e := range entries {
			if i == maxListEntries {
				fmt.Fprintf(&b, "... and %d more entries not shown. List a subdirectory, or pass ignore patterns, to see less at once.\n", len(entries)-maxListEntries)
				break
			}
			b.WriteString(e.label)
			b.WriteByte('\n')
		}
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if ignored > 0 {
		out += fmt.Sprintf("\n\n(%d ignored)", ignored)
	}
	summary := fmt.Sprintf("Listed %d %s in %s", len(entries), plural(len(entries), "entry", "entries"), rel)
	if ignored > 0 {
		summary += fmt.Sprintf(" (%d ignored)", ignored)
	}
	return &tools.Result{Summary: summary, Output: out}, nil
}

// entry describes d, an entry of dir. A symlink is shown as what it points to when that
// lies inside the workspace, and is not looked through when it leads outside.
func (c *listDirectoryCall) entry(dir string, d fs.DirEntry) listEntry {
	name := d.Name()
	p := filepath.Join(dir, name)
	e := listEntry{name: name}
	if d.Type()&fs.ModeSymlink != 0 {
		if !c.ws.Contains(p) {
			e.label = name + " (symlink to a path outside the workspace)"
			return e
		}
		fi, err := os.Stat(p)
		if err != nil {
			e.label = name + " (broken symlink)"
			return e
		}
		return describe(name, fi)
	}
	fi, err := d.Info()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			e.label = name + " (deleted while listing)"
		} else {
			e.label = name
		}
		e.dir = d.IsDir()
		if e.dir {
			e.label = "[DIR] " + name
		}
		return e
	}
	return describe(name, fi)
}

func describe(name string, fi fs.FileInfo) listEntry {
	switch {
	case fi.IsDir():
		return listEntry{name: name, dir: true, label: "[DIR] " + name}
	case fi.Mode().IsRegular():
		return listEntry{name: name, label: fmt.Sprintf("%s (%s)", name, formatSize(fi.Size()))}
	default:
		return listEntry{name: name, label: fmt.Sprintf("%s (%s)", name, workspace.FileKind(fi.Mode()))}
	}
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*listDirectoryCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
