package files

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// writeFile is the write_file tool.
type writeFile struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewWriteFile returns the write_file tool: it creates a file, with its parent
// directories, or replaces the whole text of one, keeping its encoding, byte-order mark
// and line endings.
func NewWriteFile(ws *workspace.Workspace) tools.Tool {
	return &writeFile{ws: ws, info: tools.Info{
		Name:        "write_file",
		DisplayName: "WriteFile",
		Description: "Writes content to a specified file in the local filesystem. Creates the file and any missing parent directories if needed, or overwrites the whole file if it exists (keeping its encoding and line endings).\n\n" +
			"The user has the ability to modify `content`. If modified, this will be stated in the response.",
		Kind:   tools.KindEdit,
		Source: tools.SourceBuiltin,
		Parameters: object(
			[]string{"file_path", "content"},
			[]string{"file_path", "content"},
			map[string]*jsonschema.Schema{
				"file_path": stringProp("The path to the file to write to, either absolute or relative to the workspace root."),
				"content":   stringProp("The content to write to the file. Do not use omission placeholders like '(rest of methods ...)', '...', or 'unchanged code'; provide complete literal content."),
			}),
	}}
}

func (t *writeFile) Info() tools.Info { return t.info }

type writeFileArgs struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

func (t *writeFile) Build(args json.RawMessage) (tools.Invocation, error) {
	var a writeFileArgs
	if err := decodeArgs(args, &a); err != nil {
		return nil, err
	}
	if a.Content == nil {
		return nil, tools.Errorf(tools.ErrInvalidParams, "missing required parameter %q", "content")
	}
	abs, err := resolvePath(t.ws, "file_path", a.FilePath)
	if err != nil {
		return nil, err
	}
	// Refuse at once what can never succeed, before anyone is asked to approve it.
	if fi, err := t.ws.Stat(abs); err == nil && fi.IsDir() {
		return nil, fileError(t.ws, abs, fmt.Errorf("%s: %w", abs, workspace.ErrIsDirectory))
	}
	return &writeFileCall{ws: t.ws, path: a.FilePath, abs: abs, content: normalizeNewlines(*a.Content)}, nil
}

type writeFileCall struct {
	ws   *workspace.Workspace
	path string
	abs  string

	mu       sync.Mutex
	content  string
	modified bool
}

func (c *writeFileCall) Describe() string { return "Write " + c.ws.Rel(c.abs) }

func (c *writeFileCall) Locations() []tools.Location { return []tools.Location{{Path: c.abs}} }

// Modify replaces the content to write with a person's edited version.
func (c *writeFileCall) Modify(newContent string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.content = normalizeNewlines(newContent)
	c.modified = true
	return nil
}

// change reads the file as it is now and pairs it with the content to write.
func (c *writeFileCall) change() (change, bool, error) {
	abs, err := resolvePath(c.ws, "file_path", c.path)
	if err != nil {
		return change{}, false, err
	}
	cur, err := readCurrent(c.ws, abs, "overwrite")
	if err != nil {
		return change{}, false, err
	}
	c.mu.Lock()
	content, modified := c.content, c.modified
	c.mu.Unlock()
	if cur != nil {
		if cur.Format.BOM {
			content = strings.TrimPrefix(content, "\uFEFF")
		}
		content = finalNewline(cur.Format, content)
	}
	return change{abs: abs, rel: c.ws.Rel(abs), old: cur, new: content}, modified, nil
}

func (c *writeFileCall) Confirmation(context.Context) (*confirm.Details, error) {
	ch, _, err := c.change()
	if err != nil {
		return nil, err
	}
	return ch.details("Confirm Write"), nil
}

func (c *writeFileCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The file is read again: it may have changed while a person looked at the diff.
	ch, modified, err := c.change()
	if err != nil {
		return nil, err
	}
	diff, err := ch.commit(ctx, c.ws, c.Describe())
	if err != nil {
		return nil, err
	}
	lines := countLines(ch.new)
	res := &tools.Result{Diff: diff}
	if ch.old == nil {
		res.Summary = fmt.Sprintf("Created %s (%d %s)", ch.rel, lines, plural(lines, "line", "lines"))
		res.Output = fmt.Sprintf("Successfully created and wrote to new file: %s.", ch.abs)
	} else {
		res.Summary = fmt.Sprintf("Overwrote %s (%d %s)", ch.rel, lines, plural(lines, "line", "lines"))
		res.Output = fmt.Sprintf("Successfully overwrote file: %s.", ch.abs)
	}
	if modified {
		res.Output += " The user modified the `content` before it was written; read the file to see what it holds now."
	}
	return res, nil
}
