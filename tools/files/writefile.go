package files

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

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
		Description: "Writes a whole file: creates it with its parent directories, or overwrites it, keeping its encoding and line endings. " +
			"The result says if the user changed the content.",
		Kind:       tools.KindEdit,
		Source:     tools.SourceBuiltin,
		Parameters: tools.Parameters[writeFileArgs](false),
	}}
}

func (t *writeFile) Info() tools.Info { return t.info }

type writeFileArgs struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content" jsonschema:"The complete content."`
}

func (t *writeFile) Build(args json.RawMessage) (tools.Invocation, error) {
	var a writeFileArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
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

	basis basis
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

// read resolves the path again and reads the file as it is now (nil: it does not
// exist).
func (c *writeFileCall) read() (string, *workspace.File, error) {
	abs, err := resolvePath(c.ws, "file_path", c.path)
	if err != nil {
		return "", nil, err
	}
	cur, err := readCurrent(c.ws, abs, "overwrite")
	if err != nil {
		return "", nil, err
	}
	return abs, cur, nil
}

// change pairs cur, the file at abs, with the content to write, and reports whether a
// person modified that content. Content from the model that holds an omission
// placeholder the file lacks is refused; a person's version is written as it is.
func (c *writeFileCall) change(abs string, cur *workspace.File) (change, bool, error) {
	c.mu.Lock()
	content, modified := c.content, c.modified
	c.mu.Unlock()
	if !modified {
		original := ""
		if cur != nil {
			original = cur.Text
		}
		if err := checkPlaceholder("content", content, original, "the file's complete content"); err != nil {
			return change{}, false, err
		}
	}
	if cur != nil {
		if cur.Format.BOM {
			content = strings.TrimPrefix(content, "\uFEFF")
		}
		content = cur.Format.WithFinalNewline(content)
	}
	return change{abs: abs, rel: c.ws.Rel(abs), old: cur, new: content}, modified, nil
}

// Confirmation proposes the write over the file as it is now, and holds Execute to
// that text.
func (c *writeFileCall) Confirmation(ctx context.Context) (*confirm.Details, error) {
	abs, cur, err := readToPropose(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	ch, _, err := c.change(abs, cur)
	if err != nil {
		return nil, err
	}
	c.basis.record(c.ws, abs, cur)
	return ch.details("Confirm Write"), nil
}

// Execute writes the file. After a Confirmation it writes only if the file still holds
// the text the proposal was computed from (else stale_content): overwriting text the
// person never saw replaced is not what they approved.
func (c *writeFileCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, cur, err := c.basis.readToApply(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	ch, modified, err := c.change(abs, cur)
	if err != nil {
		return nil, err
	}
	diff, err := c.basis.commit(ctx, c.ws, ch, c.Describe())
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

// Capabilities implements tools.Invocation.
func (c *writeFileCall) Capabilities() tools.Capabilities {
	return tools.Capabilities{Modify: c.Modify}
}
