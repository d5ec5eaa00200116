package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// readFile is the read_file tool.
type readFile struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewReadFile returns the read_file tool: the text of one file (as the editor holds it
// when it is open), a range of its lines, or an image, audio or PDF file as inline data.
func NewReadFile(ws *workspace.Workspace) tools.Tool {
	return &readFile{ws: ws, info: tools.Info{
		Name:        "read_file",
		DisplayName: "ReadFile",
		Description: "Reads a text file, at most 2000 lines a call (longer lines shortened; the result says how to read on), " +
			"or an image (PNG, JPG, GIF, WEBP, BMP), audio (MP3, WAV, AIFF, AAC, OGG, FLAC) or PDF file. " +
			"Other binary files, text neither UTF-8 nor UTF-16 and files over 20 MB are refused.",
		Kind:       tools.KindRead,
		Source:     tools.SourceBuiltin,
		Idempotent: true,
		Parameters: tools.Parameters[readFileArgs](false),
	}}
}

func (t *readFile) Info() tools.Info { return t.info }

type readFileArgs struct {
	FilePath  string   `json:"file_path"`
	StartLine *float64 `json:"start_line,omitempty" jsonschema:"First line to read, from 1." schema:"type=integer,minimum=1"`
	EndLine   *float64 `json:"end_line,omitempty" jsonschema:"Last line to read, inclusive." schema:"type=integer,minimum=1"`
}

func (t *readFile) Build(args json.RawMessage) (tools.Invocation, error) {
	var a readFileArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	start, err := intParam("start_line", a.StartLine)
	if err != nil {
		return nil, err
	}
	end, err := intParam("end_line", a.EndLine)
	if err != nil {
		return nil, err
	}
	if start > 0 && end > 0 && end < start {
		return nil, tools.Errorf(tools.ErrInvalidParams, "end_line (%d) must not be less than start_line (%d)", end, start)
	}
	abs, err := resolvePath(t.ws, "file_path", a.FilePath)
	if err != nil {
		return nil, err
	}
	return &readFileCall{ws: t.ws, path: a.FilePath, abs: abs, start: start, end: end}, nil
}

type readFileCall struct {
	ws         *workspace.Workspace
	path       string // as the model gave it
	abs        string
	start, end int // 0: not given
}

func (c *readFileCall) Describe() string {
	rel := c.ws.Rel(c.abs)
	switch {
	case c.start > 0 && c.end > 0:
		return fmt.Sprintf("Read %s (lines %d-%d)", rel, c.start, c.end)
	case c.start > 0:
		return fmt.Sprintf("Read %s (from line %d)", rel, c.start)
	case c.end > 0:
		return fmt.Sprintf("Read %s (lines 1-%d)", rel, c.end)
	}
	return "Read " + rel
}

func (c *readFileCall) Locations() []tools.Location {
	return []tools.Location{{Path: c.abs, Line: c.start}}
}

func (c *readFileCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *readFileCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Resolve again: a symlink on the way may have changed since Build.
	abs, err := resolvePath(c.ws, "file_path", c.path)
	if err != nil {
		return nil, err
	}
	rel := c.ws.Rel(abs)
	if _, open := c.ws.Document(abs); !open {
		fi, err := statRegular(c.ws, abs)
		if err != nil {
			return nil, err
		}
		if fi.Size() > maxFileBytes {
			return nil, fileError(c.ws, abs, workspace.ErrTooLarge)
		}
		if mediaExt(abs) != "" {
			data, err := c.ws.ReadBytes(abs, maxFileBytes)
			if err != nil {
				return nil, fileError(c.ws, abs, err)
			}
			if mime := sniffMedia(data); mime != "" {
				return mediaResult(rel, mime, data), nil
			}
		}
	}
	f, err := c.ws.ReadText(abs, maxFileBytes)
	if errors.Is(err, workspace.ErrBinary) {
		// Not text; it may still be media with an unexpected name.
		if data, rerr := c.ws.ReadBytes(abs, maxFileBytes); rerr == nil {
			if mime := sniffMedia(data); mime != "" {
				return mediaResult(rel, mime, data), nil
			}
		}
		return nil, notTextError(c.ws, abs, "read", err)
	}
	if err != nil {
		return nil, fileError(c.ws, abs, err)
	}
	var res *tools.Result
	if isNotebook(abs) && c.start == 0 && c.end == 0 {
		var nbErr error
		if res, nbErr = notebookResult(rel, f.Text); nbErr != nil {
			// Not a notebook after all: its text, and why.
			res, err = c.textResult(rel, f.Text)
			if err == nil {
				res.Output = fmt.Sprintf("Note: %s cannot be shown as notebook cells: %v; its text follows, and notebook_edit cannot change it until it is fixed.\n\n", rel, nbErr) + res.Output
			}
		}
	} else {
		res, err = c.textResult(rel, f.Text)
	}
	if err == nil {
		noteRead(ctx, f)
	}
	return res, err
}

// notebookResult renders the Jupyter notebook text as cells with their outputs, or
// says why it cannot.
func notebookResult(rel, text string) (*tools.Result, error) {
	nb, err := parseNotebook(text)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	nb.render(&b, rel)
	return &tools.Result{
		Summary: fmt.Sprintf("Read notebook %s (%d %s)", rel, len(nb.cells), plural(len(nb.cells), "cell", "cells")),
		Output:  b.String(),
	}, nil
}

func mediaResult(rel, mime string, data []byte) *tools.Result {
	kind := mediaKind(mime)
	return &tools.Result{
		Summary: fmt.Sprintf("Read %s file %s (%s)", kind, rel, formatSize(int64(len(data)))),
		Output:  fmt.Sprintf("Read %s file: %s (%s, %s). Its content is attached.", kind, rel, mime, formatSize(int64(len(data)))),
		Parts:   []tools.Part{{MIMEType: mime, Data: data}},
	}
}

// textResult selects the requested lines of text and, when that is not the whole file
// or long lines were cut, puts a notice on top that tells the model how to read on.
func (c *readFileCall) textResult(rel, text string) (*tools.Result, error) {
	total := countLines(text)
	start := max(c.start, 1)
	if total == 0 && start == 1 {
		return &tools.Result{Summary: fmt.Sprintf("Read %s (empty file)", rel), Output: ""}, nil
	}
	if start > total {
		return nil, tools.Errorf(tools.ErrInvalidParams, "start_line %d is beyond the end of %s, which has %d lines.", start, rel, total)
	}
	end := start + maxLines - 1
	if c.end > 0 && c.end < end {
		end = c.end
	}
	end = min(end, total)
	from, to := lineRange(text, start, end)
	body, cut := capLongLines(text[from:to])
	whole := start == 1 && end == total
	if whole && !cut {
		return &tools.Result{Summary: fmt.Sprintf("Read %s (%d lines)", rel, total), Output: body}, nil
	}
	var b strings.Builder
	b.WriteString("\nIMPORTANT: The file content has been truncated.\n")
	if whole {
		fmt.Fprintf(&b, "Status: Showing all %d lines, but some long lines were shortened.\n", total)
	} else {
		fmt.Fprintf(&b, "Status: Showing lines %d-%d of %d total lines.\n", start, end, total)
	}
	switch {
	case end < total:
		fmt.Fprintf(&b, "Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. "+
			"For example, to read the next section of the file, use start_line: %d.\n", end+1)
	case start > 1:
		fmt.Fprintf(&b, "Action: This is the end of the file. To read the lines before this section, use start_line: 1 and end_line: %d in a subsequent 'read_file' call.\n", start-1)
	}
	if cut {
		fmt.Fprintf(&b, "Note: Lines longer than %d characters were shortened; they end with '%s'.\n", maxLineChars, truncatedMarker)
	}
	b.WriteString("\n--- FILE CONTENT (truncated) ---\n")
	b.WriteString(body)
	return &tools.Result{
		Summary: fmt.Sprintf("Read lines %d-%d of %d from %s", start, end, total, rel),
		Output:  b.String(),
	}, nil
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*readFileCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
