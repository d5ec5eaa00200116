package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// The editor writer: where the client can apply workspace edits, an approved edit
// reaches the editor as workspace/applyEdit rather than the disk, so that it lands in
// the editor's buffer and undo history (one applyEdit, labelled with the call's
// description, per tool call: one undo reverts it).
//
//   - A document open in the editor gets a TextDocumentEdit of minimal text edits
//     against the version the server last saw (a plain `changes` edit where the client
//     does not take versioned edits).
//   - A file the editor has not opened goes through applyEdit too where the client
//     takes versioned edits (version null): the editor then holds it as a modified
//     buffer, and the overlay holds the new text so that later tools read it.
//   - A new file uses CreateFile where the client allows the create resource
//     operation.
//   - Everything else is written to disk, atomically.
//
// A client that knows nothing of agentls (Helix, bare eglot, kak-lsp) applies an edit
// to its buffer and leaves it unsaved, and no LSP request can ask it to save. So that
// the agent's next shell command (a `go test`) runs on the edited file, the server
// writes the approved text to disk itself, where the buffer held no other unsaved
// change, for the clients known to take that (writesBehind): the buffer and the file
// then hold the same text. Most editors do not: Emacs (eglot) asks whether to discard
// the buffer's edits when the next edit arrives for a file changed on disk, and fails
// that edit in batch; Vim and Kakoune warn of the change. Those get the note below. A buffer with changes of the user's own is not written behind the user's
// back; the shell's result names it instead (workspace.Unsaved). The editor's undo of
// such an edit leaves a buffer the editor takes for saved, as it was before the edit:
// the file gets that text back too (documents.go, undoBehind). Rich clients save after
// applying (or do not, by the user's choice): the server writes nothing for them.
//
// applied:false (a stale version, a refusal) fails the tool call with stale_content or
// file_write_failure and the editor's reason, and nothing is written. applied:true is
// taken only as "applied", never as consent: consent was given before the call ran.

// Versions. An edit of an open document names the version of the document it was made
// against, the editor's last didOpen or didChange, so that an editor whose buffer has
// moved on refuses it. After an edit is applied, though, the editor reports it with
// didChange only when it gets to it: Neovim debounces didChange, and eglot sends it from
// an idle timer, never while a request of its own (the agentls.runTool that made the
// edit) is waiting. Until that report the server does not know the version the editor
// gave the edited buffer, while it does know its text: the text it was told plus its
// own edit, which the overlay holds. So the call does not wait for the report. A
// further edit of the document does (Settle, bounded): the person may
// have typed into the buffer since, and an edit made against the overlay's text would
// be applied over that typing, unseen. Any didChange of the document ends the wait:
// from then on edits carry the reported version again, and a buffer that has
// meanwhile moved on refuses them. Only an editor that has not reported within the
// bound gets the edit made against the overlay's text, with a null version, which
// editors apply to the buffer as it is.

// editWriter is the workspace's Writer: through the editor where the client applies
// edits, else to disk.
type editWriter struct {
	s *Server
}

// Write implements workspace.Writer.
func (w *editWriter) Write(ctx context.Context, c workspace.Change) error {
	caps, enc, tb := w.s.state()
	st, cur, open := w.s.docs.snapshot(c.Path, enc, tb.Workspace)
	switch {
	case open && c.Old != nil && cur.Text != c.Old.Text:
		// The editor may have reported a change since workspace.Commit compared: this
		// is the check that counts.
		return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, workspace.ErrStale)
	case c.Delete && c.Old != nil && caps.ApplyEdit() && caps.DocumentChanges() && caps.ResourceOperation("delete"):
		return w.applyAll(ctx, []workspace.Change{c})
	case !caps.ApplyEdit() || c.Delete:
	case open:
		return w.writeOpen(ctx, c, st, cur)
	case c.Old == nil && caps.ResourceOperation("create"):
		return w.writeNew(ctx, c)
	case c.Old != nil && caps.DocumentChanges():
		return w.writeUnopened(ctx, c)
	}
	return workspace.DiskWriter{}.Write(ctx, c)
}

// writeOpen edits a document the editor holds.
func (w *editWriter) writeOpen(ctx context.Context, c workspace.Change, st docState, cur workspace.Document) error {
	s := w.s
	caps, enc, _ := s.state()
	if c.Old == nil {
		return fmt.Errorf("%s is open in the editor: %w", c.Path, workspace.ErrExists)
	}
	edits := editorEdits(cur.Text, c.New, enc, cur.Format.CRLF, st.bomUnits)
	if len(edits) == 0 {
		return nil
	}
	var version *int32
	if !st.held && !st.unreported {
		v := st.version
		version = &v
	}
	behind := w.cleanOnDisk(caps, c.Path, cur.Text, cur.Format)
	edit := protocol.WorkspaceEdit{}
	if caps.DocumentChanges() {
		edit = w.textDocumentEdit(caps, st.uri, version, edits, c.Label)
	} else {
		edit.Changes = map[uri.URI][]protocol.TextEdit{uri.URI(st.uri): edits}
	}
	if err := w.apply(ctx, c, edit, func() bool {
		now, ok := s.docs.lookup(c.Path, enc)
		return ok && !now.held && now.version != st.version
	}); err != nil {
		return err
	}
	if !st.held {
		s.docs.applied(c.Path, st.version)
	}
	w.saveBehind(ctx, behind, c.New)
	return nil
}

// writeUnopened edits an existing file the editor has not opened, through the editor.
func (w *editWriter) writeUnopened(ctx context.Context, c workspace.Change) error {
	s := w.s
	caps, enc, tb := s.state()
	// The editor will apply the edits to the file as it is on disk: it must still be
	// what the tool read.
	if err := diskHolds(c); err != nil {
		return err
	}
	edits := editorEdits(c.Old.Text, c.New, enc, c.Old.Format.CRLF, 0)
	if len(edits) == 0 {
		return nil
	}
	u := string(uri.File(c.Path))
	behind := w.cleanOnDisk(caps, c.Path, c.Old.Text, c.Old.Format)
	if err := w.apply(ctx, c, w.textDocumentEdit(caps, u, nil, edits, c.Label), nil); err != nil {
		return err
	}
	s.docs.holdOpen(c.Path, u, func() { tb.Workspace.Open(c.Path, 0, withFormat(c.New, c.Old.Format)) })
	w.saveBehind(ctx, behind, c.New)
	return nil
}

// diskHolds checks that the file on disk still holds the text c was made from.
func diskHolds(c workspace.Change) error {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s was deleted since it was read: %w", c.Path, workspace.ErrStale)
	}
	if err != nil {
		return fmt.Errorf("reading %s before editing it: %w", c.Path, err)
	}
	if text, _, derr := workspace.Decode(data); derr != nil || text != c.Old.Text {
		return fmt.Errorf("%s changed on disk since it was read: %w", c.Path, workspace.ErrStale)
	}
	return nil
}

// Settle implements workspace.Settler: it waits for the editor's report of agentls's
// earlier edits of paths (see Versions above).
func (w *editWriter) Settle(ctx context.Context, paths []string) {
	w.s.docs.awaitReports(ctx, paths, w.s.log)
}

// WriteAll implements workspace.BatchWriter: the changes reach the editor in one
// workspace/applyEdit, which it undoes in one step (agentls.undoTurn). A client that
// cannot take them as one (no documentChanges, or a deletion without the delete
// resource operation) gets them one at a time.
func (w *editWriter) WriteAll(ctx context.Context, cs []workspace.Change) error {
	caps, _, _ := w.s.state()
	batch := caps.ApplyEdit() && caps.DocumentChanges()
	for _, c := range cs {
		batch = batch && c.Old != nil && (!c.Delete || caps.ResourceOperation("delete"))
	}
	if !batch {
		for _, c := range cs {
			if err := w.Write(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}
	return w.applyAll(ctx, cs)
}

// applyAll sends changes of existing files (edits and deletions) in one
// workspace/applyEdit; the client takes documentChanges, and the delete operation if
// there is a deletion.
func (w *editWriter) applyAll(ctx context.Context, cs []workspace.Change) error {
	caps, enc, tb := w.s.state()
	var edit protocol.WorkspaceEdit
	var after []func()
	var behind []*workspace.File
	for _, c := range cs {
		st, cur, open := w.s.docs.snapshot(c.Path, enc, tb.Workspace)
		if open && cur.Text != c.Old.Text {
			return fmt.Errorf("%s changed in the editor since it was read: %w", c.Path, workspace.ErrStale)
		}
		if !c.Delete {
			behind = append(behind, w.cleanOnDisk(caps, c.Path, c.Old.Text, c.Old.Format))
		} else {
			behind = append(behind, nil)
		}
		if !open {
			if err := diskHolds(c); err != nil {
				return err
			}
		}
		var one protocol.WorkspaceEdit
		switch {
		case c.Delete:
			one.DocumentChanges = []protocol.DocumentChange{&protocol.DeleteFile{Kind: "delete", URI: uri.File(c.Path)}}
		case open:
			var version *int32
			if !st.held && !st.unreported {
				v := st.version
				version = &v
			}
			one = w.textDocumentEdit(caps, st.uri, version, editorEdits(cur.Text, c.New, enc, cur.Format.CRLF, st.bomUnits), c.Label)
			if !st.held {
				path, v := c.Path, st.version
				after = append(after, func() { w.s.docs.applied(path, v) })
			}
		default:
			u := string(uri.File(c.Path))
			one = w.textDocumentEdit(caps, u, nil, editorEdits(c.Old.Text, c.New, enc, c.Old.Format.CRLF, 0), c.Label)
			path, text := c.Path, withFormat(c.New, c.Old.Format)
			after = append(after, func() { w.s.docs.holdOpen(path, u, func() { tb.Workspace.Open(path, 0, text) }) })
		}
		edit.DocumentChanges = append(edit.DocumentChanges, one.DocumentChanges...)
		for id, a := range one.ChangeAnnotations {
			if edit.ChangeAnnotations == nil {
				edit.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{}
			}
			edit.ChangeAnnotations[id] = a
		}
	}
	if err := w.apply(ctx, cs[0], edit, nil); err != nil {
		return err
	}
	for _, f := range after {
		f()
	}
	for i, c := range cs {
		w.saveBehind(ctx, behind[i], c.New)
	}
	return nil
}

// writeNew creates a file through the editor: CreateFile, then its text.
func (w *editWriter) writeNew(ctx context.Context, c workspace.Change) error {
	s := w.s
	caps, _, tb := s.state()
	if _, err := os.Lstat(c.Path); err == nil {
		return fmt.Errorf("%s: %w", c.Path, workspace.ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checking %s before creating it: %w", c.Path, err)
	}
	u := string(uri.File(c.Path))
	create := &protocol.CreateFile{Kind: "create", URI: uri.URI(u), Options: &protocol.CreateFileOptions{Overwrite: ptr(false), IgnoreIfExists: ptr(false)}}
	edit := protocol.WorkspaceEdit{DocumentChanges: []protocol.DocumentChange{create}}
	if c.New != "" {
		text := w.textDocumentEdit(caps, u, nil, []protocol.TextEdit{{NewText: c.New}}, c.Label)
		edit.DocumentChanges = append(edit.DocumentChanges, text.DocumentChanges...)
		edit.ChangeAnnotations = text.ChangeAnnotations
	}
	if caps.ChangeAnnotations() {
		id := w.annotationID()
		create.AnnotationID = id
		if edit.ChangeAnnotations == nil {
			edit.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{}
		}
		edit.ChangeAnnotations[id] = protocol.ChangeAnnotation{Label: label(c)}
	}
	if err := w.apply(ctx, c, edit, nil); err != nil {
		return err
	}
	s.docs.holdOpen(c.Path, u, func() { tb.Workspace.Open(c.Path, 0, c.New) })
	if w.s.writesBehind() {
		// The editor made the file empty, or not at all (some create it on saving
		// only): the new buffer holds nothing but the agent's text.
		_, err := os.Lstat(c.Path)
		w.writeBehind(ctx, &workspace.File{Path: c.Path, Format: workspace.DefaultFormat(), Open: errors.Is(err, fs.ErrNotExist)}, c.New, false)
	}
	return nil
}

// writesBehind reports whether applied edits are written to disk behind the client.
func (s *Server) writesBehind() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeBehind
}

// writesBehind reports whether a plain client of this name (initialize's clientInfo)
// takes an applied edit being written to disk under its modified buffer: Helix keeps
// the buffer as it is and, on :w, says the file was modified by another program.
func writesBehind(clientName string) bool {
	return strings.EqualFold(clientName, "helix")
}

// cleanOnDisk returns the file at path as the disk holds it, for saveBehind, when the
// client takes writes behind it (writesBehind) and the disk holds text, the buffer's text before the edit:
// a buffer with no unsaved change. Otherwise nil.
func (w *editWriter) cleanOnDisk(_ ClientCapabilities, path, text string, format workspace.Format) *workspace.File {
	if !w.s.writesBehind() {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if disk, _, err := workspace.Decode(data); err != nil || disk != text {
		return nil
	}
	return &workspace.File{Path: path, Text: text, Format: format}
}

// saveBehind writes text, an edit the editor applied to its buffer, to the file disk
// describes as it was before (see cleanOnDisk and the comment at the top); nothing
// when disk is nil. The edit stands whatever happens here: a file changed on disk
// meanwhile is left alone, and the shell's note names it as unsaved.
func (w *editWriter) saveBehind(ctx context.Context, disk *workspace.File, text string) {
	w.writeBehind(ctx, disk, text, true)
}

// writeBehind is saveBehind; undoable records the edit for undoBehind, which a file
// the edit created does not get (its undo leaves the editor an empty, unsaved buffer).
func (w *editWriter) writeBehind(ctx context.Context, disk *workspace.File, text string, undoable bool) {
	if disk == nil {
		return
	}
	err := workspace.DiskWriter{}.Write(context.WithoutCancel(ctx), workspace.Change{Path: disk.Path, Old: disk, New: text})
	if err != nil {
		w.s.log.Info("an applied edit was not written to disk for the plain client", "path", disk.Path, "err", err)
		return
	}
	if undoable {
		w.s.docs.wroteBehind(disk.Path, behindEdit{before: disk.Text, after: text, format: disk.Format})
	}
}

// textDocumentEdit is a workspace edit of one document, its edits annotated with the
// call's label where the client supports change annotations.
func (w *editWriter) textDocumentEdit(caps ClientCapabilities, docURI string, version *int32, edits []protocol.TextEdit, lbl string) protocol.WorkspaceEdit {
	var edit protocol.WorkspaceEdit
	elems := make([]protocol.TextDocumentEditElement, len(edits))
	var id protocol.ChangeAnnotationIdentifier
	if caps.ChangeAnnotations() {
		id = w.annotationID()
		if lbl == "" {
			lbl = "agentls edit"
		}
		edit.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{id: {Label: lbl}}
	}
	for i := range edits {
		if id != "" {
			elems[i] = &protocol.AnnotatedTextEdit{TextEdit: edits[i], AnnotationID: id}
		} else {
			elems[i] = &edits[i]
		}
	}
	edit.DocumentChanges = []protocol.DocumentChange{&protocol.TextDocumentEdit{
		TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
			TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.URI(docURI)},
			Version:                version,
		},
		Edits: elems,
	}}
	return edit
}

func (w *editWriter) annotationID() protocol.ChangeAnnotationIdentifier {
	return protocol.ChangeAnnotationIdentifier("agentls-edit-" + strconv.FormatUint(w.s.seq.Add(1), 10))
}

func label(c workspace.Change) string {
	if c.Label == "" {
		return "agentls edit"
	}
	return c.Label
}

// apply sends the edit and turns the editor's answer into the writer's error. moved
// reports whether the document changed meanwhile, which makes a refusal stale.
func (w *editWriter) apply(ctx context.Context, c workspace.Change, edit protocol.WorkspaceEdit, moved func() bool) error {
	s := w.s
	lbl := label(c)
	var res protocol.ApplyWorkspaceEditResult
	err := s.call(ctx, "workspace/applyEdit", protocol.ApplyWorkspaceEditParams{Label: &lbl, Edit: edit}, &res)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &tools.Error{Type: tools.ErrFileWriteFailure, Err: err,
			Message: fmt.Sprintf("The editor did not apply the edit to %s (workspace/applyEdit failed: %v), so nothing was written.", c.Path, err)}
	}
	if res.Applied {
		return nil
	}
	reason := "the editor gave no reason"
	if res.FailureReason != nil && *res.FailureReason != "" {
		reason = *res.FailureReason
	}
	s.log.Info("the editor refused an edit", "path", c.Path, "reason", reason)
	if (moved != nil && moved()) || looksStale(reason) {
		// Only the cause: the tool that wrote says what it means (see tools/files).
		return &tools.Error{Type: tools.ErrStaleContent, Err: workspace.ErrStale,
			Message: fmt.Sprintf("the editor refused the edit to %s: %s", c.Path, reason)}
	}
	return &tools.Error{Type: tools.ErrFileWriteFailure,
		Message: fmt.Sprintf("The editor refused the edit to %s (%s), so nothing was written.", c.Path, reason)}
}

// looksStale reports whether an editor's failure reason speaks of a version mismatch.
func looksStale(reason string) bool {
	r := strings.ToLower(reason)
	return strings.Contains(r, "version") || strings.Contains(r, "stale") || strings.Contains(r, "modified") ||
		strings.Contains(r, "outdated") || strings.Contains(r, "newer")
}

// editorEdits returns the minimal edits turning old into new (both LF text, as the
// overlay holds them) as the editor must apply them to its own text: line breaks
// inserted as CRLF in a CRLF document, and characters on the first line moved past a
// byte-order mark the editor's text starts with. Positions carry over from the LF text
// unchanged otherwise: a CRLF counts as one line break, like the LF it became.
func editorEdits(old, new string, enc workspace.PositionEncoding, crlf bool, bomUnits uint32) []protocol.TextEdit {
	edits := workspace.TextEdits(old, new, enc)
	out := make([]protocol.TextEdit, len(edits))
	for i, e := range edits {
		text := e.NewText
		if crlf {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		r := e.Range
		if bomUnits > 0 {
			if r.Start.Line == 0 {
				r.Start.Character += bomUnits
			}
			if r.End.Line == 0 {
				r.End.Character += bomUnits
			}
		}
		out[i] = protocol.TextEdit{
			Range: protocol.Range{
				Start: protocol.Position{Line: r.Start.Line, Character: r.Start.Character},
				End:   protocol.Position{Line: r.End.Line, Character: r.End.Character},
			},
			NewText: text,
		}
	}
	return out
}

// withFormat returns LF text with the line endings of format f, as the editor will
// hold it.
func withFormat(text string, f workspace.Format) string {
	if f.CRLF {
		return strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

func ptr[T any](v T) *T { return &v }
