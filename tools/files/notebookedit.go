package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// notebookEdit is the notebook_edit tool.
type notebookEdit struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewNotebookEdit returns the notebook_edit tool: it replaces, inserts or deletes one
// cell of a Jupyter notebook (nbformat 4), named by id or by index, and leaves every
// other byte of the file as it was. Its parameters follow Claude Code's NotebookEdit,
// with Kode's cell_number as well.
func NewNotebookEdit(ws *workspace.Workspace) tools.Tool {
	return &notebookEdit{ws: ws, info: tools.Info{
		Name:        "notebook_edit",
		DisplayName: "NotebookEdit",
		Description: "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb, nbformat 4), named by cell_id or cell_number " +
			"(read_file shows them). replace sets the source (and, with cell_type, the type), clearing a code cell's outputs; " +
			"insert adds a cell after cell_id, or at cell_number, or first. The rest of the file stays as it was.",
		Kind:       tools.KindEdit,
		Source:     tools.SourceBuiltin,
		Parameters: tools.Parameters[notebookEditArgs](false),
	}}
}

func (t *notebookEdit) Info() tools.Info { return t.info }

type notebookEditArgs struct {
	NotebookPath string   `json:"notebook_path"`
	CellID       *string  `json:"cell_id,omitempty"`
	CellNumber   *float64 `json:"cell_number,omitempty" jsonschema:"0-based." schema:"type=integer,minimum=0"`
	NewSource    *string  `json:"new_source,omitempty" jsonschema:"Required for replace and insert."`
	CellType     string   `json:"cell_type,omitempty" jsonschema:"Required for insert." schema:"enum=code|markdown"`
	EditMode     string   `json:"edit_mode,omitempty" jsonschema:"Default: replace." schema:"enum=replace|insert|delete"`
}

func (t *notebookEdit) Build(args json.RawMessage) (tools.Invocation, error) {
	var a notebookEditArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	c := &notebookEditCall{ws: t.ws, path: a.NotebookPath, typ: a.CellType, mode: a.EditMode, number: -1}
	if c.mode == "" {
		c.mode = "replace"
	}
	switch c.mode {
	case "replace", "insert", "delete":
	default:
		return nil, tools.Errorf(tools.ErrInvalidParams, "edit_mode must be replace, insert or delete, not %q", a.EditMode)
	}
	switch c.typ {
	case "", "code", "markdown":
	default:
		return nil, tools.Errorf(tools.ErrInvalidParams, "cell_type must be code or markdown, not %q", a.CellType)
	}
	if a.CellID != nil {
		c.id, c.hasID = *a.CellID, true
		if strings.TrimSpace(c.id) == "" {
			return nil, tools.Errorf(tools.ErrInvalidParams, "cell_id must not be empty; leave it out to name the cell by cell_number")
		}
	}
	if a.CellNumber != nil {
		f := *a.CellNumber
		if f != float64(int(f)) || f < 0 {
			return nil, tools.Errorf(tools.ErrInvalidParams, "cell_number must be a whole number of 0 or more, not %v", f)
		}
		c.number = int(f)
	}
	if a.NewSource != nil {
		c.source, c.hasSource = normalizeNewlines(*a.NewSource), true
	}
	switch {
	case c.mode != "insert" && !c.hasID && c.number < 0:
		return nil, tools.Errorf(tools.ErrInvalidParams, "edit_mode %s needs the cell: give cell_id or cell_number", c.mode)
	case c.mode != "delete" && !c.hasSource:
		return nil, tools.Errorf(tools.ErrInvalidParams, "edit_mode %s needs new_source", c.mode)
	case c.mode == "insert" && c.typ == "":
		return nil, tools.Errorf(tools.ErrInvalidParams, "edit_mode insert needs cell_type: code or markdown")
	}
	abs, err := resolvePath(t.ws, "notebook_path", a.NotebookPath)
	if err != nil {
		return nil, err
	}
	if !isNotebook(abs) {
		return nil, tools.Errorf(tools.ErrInvalidParams, "%s is not a Jupyter notebook (.ipynb file); edit other files with replace or write_file", t.ws.Rel(abs))
	}
	c.abs = abs
	return c, nil
}

type notebookEditCall struct {
	ws        *workspace.Workspace
	path, abs string
	mode      string
	typ       string
	id        string
	hasID     bool
	number    int // -1: not given
	source    string
	hasSource bool

	basis basis
	mu    sync.Mutex
	done  string // what the last plan did, for the result
}

func (c *notebookEditCall) Describe() string {
	target := "at the beginning"
	switch {
	case c.hasID:
		target = "cell " + c.id
	case c.number >= 0:
		target = fmt.Sprintf("cell %d", c.number)
	}
	return fmt.Sprintf("Notebook %s %s: %s", c.mode, c.ws.Rel(c.abs), target)
}

func (c *notebookEditCall) Locations() []tools.Location { return []tools.Location{{Path: c.abs}} }

// read resolves the path again and reads the notebook as it is now.
func (c *notebookEditCall) read() (string, *workspace.File, error) {
	abs, err := resolvePath(c.ws, "notebook_path", c.path)
	if err != nil {
		return "", nil, err
	}
	cur, err := readCurrent(c.ws, abs, "edit")
	if err != nil {
		return "", nil, err
	}
	if cur == nil {
		return "", nil, tools.Errorf(tools.ErrFileNotFound, "Notebook not found: %s. notebook_edit changes an existing notebook; create one with write_file.", c.ws.Rel(abs))
	}
	return abs, cur, nil
}

// index returns the cell the call names in nb, checking that cell_id and cell_number,
// when both are given, name the same one.
func (c *notebookEditCall) index(nb *notebook, rel string) (int, error) {
	i := -1
	if c.hasID {
		if i = nb.find(c.id); i < 0 {
			return 0, tools.Errorf(tools.ErrInvalidParams, "%s has no cell with id %q. %s", rel, c.id, cellIDs(nb))
		}
	}
	if c.number >= 0 {
		limit := len(nb.cells)
		if c.mode == "insert" {
			limit++ // inserting at the end
		}
		if c.number >= limit {
			return 0, tools.Errorf(tools.ErrInvalidParams, "cell_number %d is out of range: %s has %d %s (numbered from 0).", c.number, rel, len(nb.cells), plural(len(nb.cells), "cell", "cells"))
		}
		if i >= 0 && i != c.number && c.mode != "insert" {
			return 0, tools.Errorf(tools.ErrInvalidParams, "cell_id %q is cell %d, not cell_number %d; give one of them.", c.id, i, c.number)
		}
		if i < 0 {
			i = c.number
		}
	}
	return i, nil
}

// cellIDs lists the notebook's cell ids for an error message.
func cellIDs(nb *notebook) string {
	var ids []string
	for i, cl := range nb.cells {
		if cl.ID != "" {
			ids = append(ids, fmt.Sprintf("%d: %s", i, cl.ID))
		}
	}
	switch {
	case len(nb.cells) == 0:
		return "It has no cells."
	case len(ids) == 0:
		return "Its cells have no ids (nbformat before 4.5): name the cell by cell_number."
	case len(ids) > 20:
		ids = append(ids[:20], "…")
	}
	return "Its cells are " + strings.Join(ids, ", ") + "."
}

// plan computes the notebook's new text from cur.
func (c *notebookEditCall) plan(abs string, cur *workspace.File) (change, error) {
	rel := c.ws.Rel(abs)
	nb, err := parseNotebook(cur.Text)
	if err != nil {
		var ne *notebookError
		if errors.As(err, &ne) {
			return change{}, &tools.Error{Type: tools.ErrReadContentFailure, Err: err,
				Message: fmt.Sprintf("Cannot edit %s as a notebook: %s. Nothing was written.", rel, ne.msg)}
		}
		return change{}, err
	}
	i, err := c.index(nb, rel)
	if err != nil {
		return change{}, err
	}
	var text, done string
	switch c.mode {
	case "replace":
		cell := nb.cells[i]
		typ := c.typ
		if typ == "" {
			typ = cell.Type
		}
		if typ != "code" && typ != "markdown" && typ != cell.Type {
			return change{}, tools.Errorf(tools.ErrInvalidParams, "cell_type must be code or markdown, not %q", typ)
		}
		if typ == cell.Type && c.source == cell.Source {
			return change{}, tools.Errorf(tools.ErrEditNoChange, "No changes to apply: cell %d of %s already has that source.", i, rel)
		}
		text, err = nb.replaceCell(i, nb.replaced(cell, typ, c.source))
		done = fmt.Sprintf("Replaced cell %d%s of %s with a %s cell", i, idNote(cell.ID), rel, typ)
	case "insert":
		at := 0
		switch {
		case c.hasID:
			at = i + 1
		case c.number >= 0:
			at = c.number
		}
		fields := nb.newCellFields(c.typ, c.source)
		text, err = nb.insertCell(at, fields)
		var id string
		for _, f := range fields {
			if f.key == "id" {
				_ = json.Unmarshal(f.value, &id)
			}
		}
		done = fmt.Sprintf("Inserted a %s cell%s at index %d of %s", c.typ, idNote(id), at, rel)
	case "delete":
		text = nb.deleteCell(i)
		done = fmt.Sprintf("Deleted cell %d%s (%s) of %s", i, idNote(nb.cells[i].ID), nb.cells[i].Type, rel)
	}
	if err != nil {
		return change{}, tools.Errorf(tools.ErrExecutionFailed, "editing %s: %w", rel, err)
	}
	// The result must still be a notebook: never write one that is not.
	if _, err := parseNotebook(text); err != nil {
		return change{}, tools.Errorf(tools.ErrExecutionFailed, "editing %s would leave it unreadable (%v); nothing was written", rel, err)
	}
	c.mu.Lock()
	c.done = done
	c.mu.Unlock()
	return change{abs: abs, rel: rel, old: cur, new: text}, nil
}

func idNote(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (id %s)", id)
}

// Confirmation proposes the edit as a diff of the notebook's JSON, and holds Execute to
// the text it was computed from.
func (c *notebookEditCall) Confirmation(ctx context.Context) (*confirm.Details, error) {
	abs, cur, err := readToPropose(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	ch, err := c.plan(abs, cur)
	if err != nil {
		return nil, err
	}
	c.basis.record(c.ws, abs, cur)
	return ch.details("Confirm Notebook Edit"), nil
}

// Execute applies the edit through the workspace's writer.
func (c *notebookEditCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, cur, err := c.basis.readToApply(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	ch, err := c.plan(abs, cur)
	if err != nil {
		return nil, err
	}
	diff, err := c.basis.commit(ctx, c.ws, ch, c.Describe())
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	return &tools.Result{Summary: done, Output: done + ".", Diff: diff}, nil
}

// Capabilities implements tools.Invocation: the call takes no modified version (a
// person's version of the whole JSON is no longer one cell's edit).
func (*notebookEditCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
