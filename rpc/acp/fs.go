package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// File delegation. When the client declares fs.readTextFile, the tools that read or
// edit files see the editor's text of them (unsaved changes included): before a call
// of such a tool asks for consent or runs, the files it names are read with
// fs/read_text_file into the workspace's documents, where the tools read them, and
// forgotten when it ends. When the client declares fs.writeTextFile, approved edits are
// written with fs/write_text_file (into the editor's buffer, under its undo), after
// the same staleness check as on disk: a file whose text is no longer what the tool
// read is not written (workspace.ErrStale), nor a new file over an existing one.

// adaptTool adapts the tools to what the client serves: the tools that read or edit
// files read the editor's text when it serves fs.readTextFile, and run_shell_command
// runs in its terminals when it serves terminal (terminal.go).
// The tools are the workspace host's, for all its sessions: a call finds its session
// by its context (conn.stateOf).
func (wh *workspaceHost) adaptTool(caps sdk.ClientCapabilities, t tools.Tool) tools.Tool {
	info := t.Info()
	switch {
	case info.Name == shellTool && caps.Terminal:
		return &terminalTool{Tool: t, wh: wh}
	case caps.Fs.ReadTextFile && (info.Kind == tools.KindRead || info.Kind == tools.KindEdit):
		return &bufferTool{Tool: t, wh: wh}
	}
	return t
}

// bufferTool is a tool whose calls read the editor's text of the files they name.
type bufferTool struct {
	tools.Tool
	wh *workspaceHost
}

// Build implements tools.Tool.
func (b *bufferTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := b.Tool.Build(args)
	if err != nil {
		return nil, err
	}
	return &bufferCall{Invocation: inv, wh: b.wh}, nil
}

// bufferCall is a call whose files are held in the workspace's documents, as the
// editor has them, from its consent question to its end.
type bufferCall struct {
	tools.Invocation
	wh     *workspaceHost
	loaded bool
	held   []string
}

// Confirmation implements tools.Invocation: an edit's proposal is made from the
// editor's text.
func (c *bufferCall) Confirmation(ctx context.Context) (*confirm.Details, error) {
	c.load(ctx)
	return c.Invocation.Confirmation(ctx)
}

// Execute implements tools.Invocation.
func (c *bufferCall) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	c.load(ctx)
	defer c.release()
	return c.Invocation.Execute(ctx, out)
}

// load reads the call's files from the editor into the workspace's documents, once. A
// file the editor cannot read (one that does not exist yet) is left to the disk.
func (c *bufferCall) load(ctx context.Context) {
	if c.loaded {
		return
	}
	c.loaded = true
	st := c.wh.c.stateOf(ctx)
	if st == nil {
		return // a call of no session of the client's: the disk's text
	}
	ws := st.host.Toolbox().Workspace
	for _, loc := range c.Locations() {
		if loc.Path == "" || !ws.Contains(loc.Path) {
			continue
		}
		res, err := st.c.sdk.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(st.id), Path: loc.Path})
		if err != nil {
			st.c.log.Debug("fs/read_text_file", "path", loc.Path, "error", err)
			continue
		}
		c.wh.hold(loc.Path, res.Content)
		c.held = append(c.held, loc.Path)
	}
}

// release forgets the call's files, unless another call holds them.
func (c *bufferCall) release() {
	for _, p := range c.held {
		c.wh.unhold(p)
	}
	c.held = nil
}

// hold puts the editor's text of path in the workspace's documents, for one more call
// (of any of its sessions).
func (wh *workspaceHost) hold(path, text string) {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	wh.held[path]++
	wh.host.Toolbox().Workspace.Open(path, 0, text)
}

// unhold lets one call's hold of path go; the last one forgets the document.
func (wh *workspaceHost) unhold(path string) {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	if wh.held[path]--; wh.held[path] <= 0 {
		delete(wh.held, path)
		wh.host.Toolbox().Workspace.Close(path)
	}
}

// clientWriter commits the sessions' edits with fs/write_text_file, each to the
// session of its call.
type clientWriter struct {
	c *conn
	// read reports that the client serves fs/read_text_file, against which staleness
	// is judged; else against the disk.
	read bool
}

// Write implements workspace.Writer.
func (w clientWriter) Write(ctx context.Context, c workspace.Change) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st := w.c.stateOf(ctx)
	if st == nil {
		return fmt.Errorf("%s: the edit belongs to no ACP session of this connection, whose editor would write it", c.Path)
	}
	cur, exists, err := w.current(ctx, st, c.Path)
	if err != nil {
		return err
	}
	switch {
	case c.Old == nil && exists:
		return fmt.Errorf("%s: %w", c.Path, workspace.ErrExists)
	case c.Old != nil && !exists:
		return fmt.Errorf("%s was deleted since it was read: %w", c.Path, workspace.ErrStale)
	case c.Old != nil && cur != c.Old.Text:
		return fmt.Errorf("%s changed since it was read: %w", c.Path, workspace.ErrStale)
	}
	text := c.New
	if c.Old != nil && c.Old.Format.CRLF {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	_, err = w.c.sdk.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(st.id), Path: c.Path, Content: text})
	if err != nil {
		return fmt.Errorf("fs/write_text_file %s: %w", c.Path, err)
	}
	return nil
}

// current returns the text of path as the tools read it (LF line endings), from the
// editor when it serves reads, else from the disk, and whether the file exists.
func (w clientWriter) current(ctx context.Context, st *sessionState, path string) (string, bool, error) {
	var data []byte
	if w.read {
		res, err := w.c.sdk.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(st.id), Path: path})
		if err != nil {
			// The protocol has no "not found": a file the editor cannot read is taken as
			// absent when it is absent from the disk too.
			if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("fs/read_text_file %s: %w", path, err)
		}
		data = []byte(res.Content)
	} else {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		data = b
	}
	text, _, err := workspace.Decode(data)
	if err != nil {
		return "", true, fmt.Errorf("reading %s: %w", path, err)
	}
	return text, true, nil
}
