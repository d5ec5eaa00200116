package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/workspace"
)

// Unsaved edits and the shell. Edits reach the editor's buffers, not the disk, and a
// shell command sees the disk. The rich clients save the buffers an approved edit
// touched; for the others, a run_shell_command result names the files the agent edited
// that are still unsaved, so that the model knows what the command did not see.

const shellToolName = shell.RunToolName

// maxUnsavedListed bounds the files the note names.
const maxUnsavedListed = 20

// editedFiles are the files the agent edited through the editor.
type editedFiles struct {
	mu    sync.Mutex
	paths map[string]bool
}

func (e *editedFiles) add(path string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paths == nil {
		e.paths = map[string]bool{}
	}
	e.paths[path] = true
}

func (e *editedFiles) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.paths))
}

// unsavedFiles returns the files the agent edited whose text in the editor differs from
// the disk, relative to the workspace roots.
func (s *Server) unsavedFiles() []string {
	_, _, tb := s.state()
	if tb == nil {
		return nil
	}
	var out []string
	for _, p := range s.edits.list() {
		doc, open := tb.Workspace.Document(p)
		if !open {
			continue // closed: saved or discarded, and the disk is what there is
		}
		data, err := os.ReadFile(p)
		if err == nil {
			if text, _, derr := workspace.Decode(data); derr == nil && text == doc.Text {
				continue
			}
		}
		out = append(out, tb.Workspace.Rel(p))
	}
	return out
}

// unsavedNote is the note for a shell result, or "" when every edit is saved.
func (s *Server) unsavedNote() string {
	files := s.unsavedFiles()
	if len(files) == 0 {
		return ""
	}
	more := ""
	if len(files) > maxUnsavedListed {
		more = fmt.Sprintf(" and %d more", len(files)-maxUnsavedListed)
		files = files[:maxUnsavedListed]
	}
	return fmt.Sprintf("Note: your edits to %s%s are not saved in the editor yet, so this command saw those files "+
		"as they are on disk, without the edits. Ask the user to save them if the command needs them.",
		strings.Join(files, ", "), more)
}

// unsavedNoteTool is run_shell_command with the unsaved-files note in its results.
type unsavedNoteTool struct {
	tools.Tool
	s *Server
}

// Build implements tools.Tool.
func (t *unsavedNoteTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil || inv == nil {
		return inv, err
	}
	return &unsavedNoteInvocation{Invocation: inv, s: t.s}, nil
}

// unsavedNoteInvocation embeds the shell call, whose Capabilities (the command line
// that the registry's restrictions check) it passes on.
type unsavedNoteInvocation struct {
	tools.Invocation
	s *Server
}

// Execute implements tools.Invocation. The note says what the command saw, so it is
// taken before the command runs.
func (i *unsavedNoteInvocation) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	note := i.s.unsavedNote()
	res, err := i.Invocation.Execute(ctx, out)
	if note == "" || ctx.Err() != nil {
		return res, err
	}
	if err != nil {
		te := tools.AsError(err, tools.ErrShellExecute)
		return nil, &tools.Error{Type: te.Type, Message: te.Message + "\n\n" + note, Err: te.Err}
	}
	if res != nil {
		r := *res
		r.Output = strings.TrimRight(r.Output, "\n") + "\n\n" + note
		return &r, nil
	}
	return res, nil
}
