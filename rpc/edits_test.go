package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// applyEdits returns the workspace/applyEdit requests the client received.
func applyEdits(t *testing.T, c *lsptest.Client) []lsptest.ApplyParams {
	t.Helper()
	var out []lsptest.ApplyParams
	for _, m := range c.Received("workspace/applyEdit") {
		var p lsptest.ApplyParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// documentEdit decodes the one TextDocumentEdit of an applyEdit.
type documentEdit struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Edits []lsptest.TextEdit `json:"edits"`
	Kind  string             `json:"kind"`
	URI   string             `json:"uri"`
}

func documentChanges(t *testing.T, p lsptest.ApplyParams) []documentEdit {
	t.Helper()
	var out []documentEdit
	for _, raw := range p.Edit.DocumentChanges {
		var d documentEdit
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func replaceArgs(path, old, new string) map[string]any {
	return map[string]any{"file_path": path, "old_string": old, "new_string": new}
}

// openInEditor starts an auto_edit session over a workspace holding the file name with
// text, and opens the file in the session's editor; it returns the client and the file's
// path and URI.
func openInEditor(t *testing.T, name, text string) (c *lsptest.Client, path, uri string) {
	t.Helper()
	root := workspaceDir(t, map[string]string{name: text})
	c = session(t, root, capsEditor, map[string]any{"approvalMode": "auto_edit"})
	path = filepath.Join(root, name)
	uri = lsptest.FileURI(path)
	if err := c.Editor().Open(uri, text); err != nil {
		t.Fatal(err)
	}
	return c, path, uri
}

// TestReplaceInOpenDocument: an approved replace of an open document reaches the editor
// as one applyEdit of minimal edits against the document's version, labelled with the
// call, and the tools read the result; the disk is left to the editor.
func TestReplaceInOpenDocument(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	original := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	c, path, uri := openInEditor(t, "main.go", original)
	ed := c.Editor()
	// The user types first: the edit must be made against version 2.
	if err := ed.Change(uri, lsptest.Change{Range: &lsptest.Range{Start: lsptest.Position{Line: 5}, End: lsptest.Position{Line: 5}}, Text: "// end\n"}); err != nil {
		t.Fatal(err)
	}
	res := runTool(ctx, t, c, "replace", replaceArgs("main.go", `println("hello")`, `println("hello, world")`))
	if res.Status != tools.StatusSuccess || res.Diff == nil || !strings.Contains(res.Diff.Diff, `+	println("hello, world")`) {
		t.Fatalf("replace: %+v", res)
	}
	edits := applyEdits(t, c)
	if len(edits) != 1 {
		t.Fatalf("%d applyEdit requests, want 1", len(edits))
	}
	p := edits[0]
	if p.Label != "Edit main.go: println(\"hello\") => println(\"hello, world\")" {
		t.Errorf("label = %q, want the call's description", p.Label)
	}
	dc := documentChanges(t, p)
	if len(dc) != 1 || dc[0].TextDocument.URI != uri || dc[0].TextDocument.Version == nil || *dc[0].TextDocument.Version != 2 {
		t.Fatalf("documentChanges = %s, want one TextDocumentEdit of %s at version 2", mustJSON(t, dc), uri)
	}
	want := lsptest.TextEdit{Range: lsptest.Range{Start: lsptest.Position{Line: 3, Character: 15}, End: lsptest.Position{Line: 3, Character: 15}}, NewText: ", world"}
	if e := dc[0].Edits; len(e) != 1 || e[0].Range != want.Range || e[0].NewText != want.NewText {
		t.Errorf("edits = %s, want the minimal %s", mustJSON(t, e), mustJSON(t, want))
	}
	if id := dc[0].Edits[0].AnnotationID; id == "" || p.Edit.ChangeAnnotations[id].Label != p.Label {
		t.Errorf("the edit's change annotation %q = %+v, want one labelled with the call", id, p.Edit.ChangeAnnotations)
	}
	wantText := strings.Replace(original, `"hello"`, `"hello, world"`, 1) + "// end\n"
	if doc, _ := ed.Doc(uri); doc.Text != wantText || doc.Version != 3 {
		t.Errorf("editor: version %d %q, want version 3 %q", doc.Version, doc.Text, wantText)
	}
	if got := readOverlay(ctx, t, c, path); got != wantText {
		t.Errorf("the tools read %q, want %q", got, wantText)
	}
	if disk := readFile(t, path); disk != original {
		t.Errorf("the disk was written: %q", disk)
	}
	// A second edit in a row is made against the version the first one produced.
	if res := runTool(ctx, t, c, "replace", replaceArgs("main.go", "// end", "// the end")); res.Status != tools.StatusSuccess {
		t.Fatalf("a second replace: %+v", res)
	}
	if dc := documentChanges(t, applyEdits(t, c)[1]); *dc[0].TextDocument.Version != 3 {
		t.Errorf("the second edit is for version %d, want 3", *dc[0].TextDocument.Version)
	}
}

// TestReplaceInCRLFDocument: positions and inserted line breaks fit a CRLF document,
// and the editor keeps its line endings.
func TestReplaceInCRLFDocument(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			ctx := testContext(t)
			original := "one\r\ntwo 😀 two\r\nthree\r\n"
			root := workspaceDir(t, map[string]string{"crlf.txt": original})
			caps := withCaps(capsEditor, "general", map[string]any{"positionEncodings": []string{enc}})
			c := session(t, root, caps, map[string]any{"approvalMode": "auto_edit"})
			path := filepath.Join(root, "crlf.txt")
			uri := lsptest.FileURI(path)
			if err := c.Editor().Open(uri, original); err != nil {
				t.Fatal(err)
			}
			res := runTool(ctx, t, c, "replace", replaceArgs("crlf.txt", "😀 two\nthree", "😀 2\nthree\nfour"))
			if res.Status != tools.StatusSuccess {
				t.Fatalf("replace: %+v", res)
			}
			want := "one\r\ntwo 😀 2\r\nthree\r\nfour\r\n"
			if doc, _ := c.Editor().Doc(uri); doc.Text != want {
				t.Errorf("editor text %q, want %q", doc.Text, want)
			}
			if got := readOverlay(ctx, t, c, path); got != strings.ReplaceAll(want, "\r\n", "\n") {
				t.Errorf("tools read %q", got)
			}
		})
	}
}

// TestEditRefused: when the editor does not apply an edit, the call fails and nothing
// is written anywhere.
func TestEditRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		reply    any
		err      *lsptest.ResponseError
		wantType tools.ErrorType
		wantMsg  string
	}{
		// The tool's explanation keeps the editor's reason.
		{name: "stale version", reply: lsptest.ApplyResult{Applied: false, FailureReason: "Edits on 'f.txt' require version 0, you have 1"},
			wantType: tools.ErrStaleContent, wantMsg: "Edits on 'f.txt' require version 0, you have 1"},
		{name: "refused", reply: lsptest.ApplyResult{Applied: false, FailureReason: "the user said no"}, wantType: tools.ErrFileWriteFailure, wantMsg: "the user said no"},
		{name: "no reason", reply: lsptest.ApplyResult{Applied: false}, wantType: tools.ErrFileWriteFailure, wantMsg: "no reason"},
		{name: "error", err: &lsptest.ResponseError{Code: -32603, Message: "boom"}, wantType: tools.ErrFileWriteFailure, wantMsg: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			original := "alpha\nbeta\n"
			c, path, _ := openInEditor(t, "f.txt", original)
			c.Handle("workspace/applyEdit", func(context.Context, json.RawMessage) (any, error) {
				if tt.err != nil {
					return nil, tt.err
				}
				return tt.reply, nil
			})
			res := runTool(ctx, t, c, "replace", replaceArgs("f.txt", "beta", "gamma"))
			if res.Status != tools.StatusError || res.Error == nil || res.Error.Type != tt.wantType || !strings.Contains(res.Output, tt.wantMsg) {
				t.Errorf("result %+v, want %s mentioning %q", res, tt.wantType, tt.wantMsg)
			}
			if got := readOverlay(ctx, t, c, path); got != original {
				t.Errorf("the tools read %q after a refused edit", got)
			}
			if disk := readFile(t, path); disk != original {
				t.Errorf("the disk was written: %q", disk)
			}
		})
	}
}

// TestEditFilesNotOpen: files the editor has not opened go through applyEdit too (the
// editor holds them as modified buffers), new files with CreateFile; the disk is left
// alone, and the tools read the edited text.
func TestEditFilesNotOpen(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"closed.txt": "one\ntwo\n"})
	c := session(t, root, capsEditor, map[string]any{"approvalMode": "auto_edit"})
	closed := filepath.Join(root, "closed.txt")
	if res := runTool(ctx, t, c, "replace", replaceArgs("closed.txt", "two", "2")); res.Status != tools.StatusSuccess {
		t.Fatalf("replace: %+v", res)
	}
	dc := documentChanges(t, applyEdits(t, c)[0])
	if len(dc) != 1 || dc[0].TextDocument.URI != lsptest.FileURI(closed) || dc[0].TextDocument.Version != nil {
		t.Errorf("edit of a file not open = %s, want a TextDocumentEdit with version null", mustJSON(t, dc))
	}
	if got := readOverlay(ctx, t, c, closed); got != "one\n2\n" {
		t.Errorf("the tools read %q, want the edited text", got)
	}
	if disk := readFile(t, closed); disk != "one\ntwo\n" {
		t.Errorf("the disk was written: %q", disk)
	}
	// A second edit of the same buffer builds on the first.
	if res := runTool(ctx, t, c, "replace", replaceArgs("closed.txt", "one", "1")); res.Status != tools.StatusSuccess {
		t.Fatalf("second replace: %+v", res)
	}
	if doc, _ := c.Editor().Doc(lsptest.FileURI(closed)); doc.Text != "1\n2\n" {
		t.Errorf("the editor's buffer = %q", doc.Text)
	}

	newFile := filepath.Join(root, "sub", "new.txt")
	if res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "sub/new.txt", "content": "fresh\n"}); res.Status != tools.StatusSuccess {
		t.Fatalf("write_file: %+v", res)
	}
	dc = documentChanges(t, applyEdits(t, c)[2])
	if len(dc) != 2 || dc[0].Kind != "create" || dc[0].URI != lsptest.FileURI(newFile) || dc[1].TextDocument.Version != nil ||
		len(dc[1].Edits) != 1 || dc[1].Edits[0].NewText != "fresh\n" {
		t.Errorf("new file = %s, want CreateFile and its text", mustJSON(t, dc))
	}
	if _, err := os.Stat(newFile); err == nil {
		t.Errorf("the new file was written to disk by agentls")
	}
	if got := readOverlay(ctx, t, c, newFile); got != "fresh\n" {
		t.Errorf("the tools read %q from the new file", got)
	}
}

// TestEditFallbacks: a client without applyEdit gets the file written to disk; one
// without the create operation gets new files written to disk, and existing ones
// through applyEdit.
func TestEditFallbacks(t *testing.T) {
	t.Parallel()
	noCreate := withCaps(capsEditor, "workspace", map[string]any{"applyEdit": true,
		"workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"rename"}}})
	noVersions := withCaps(capsEditor, "workspace", map[string]any{"applyEdit": true})
	tests := []struct {
		name      string
		caps      map[string]any
		wantEdits int // applyEdit requests for: edit open doc, edit closed file, new file
		openDisk  bool
	}{
		{"no applyEdit", capsNone, 0, true},
		{"no create", noCreate, 2, false},
		{"no documentChanges", noVersions, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"open.txt": "open\n", "closed.txt": "closed\n"})
			c := session(t, root, tt.caps, map[string]any{"approvalMode": "auto_edit"})
			openPath := filepath.Join(root, "open.txt")
			if err := c.Editor().Open(lsptest.FileURI(openPath), "open\n"); err != nil {
				t.Fatal(err)
			}
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"replace", replaceArgs("open.txt", "open", "OPEN")},
				{"replace", replaceArgs("closed.txt", "closed", "CLOSED")},
				{"write_file", map[string]any{"file_path": "new.txt", "content": "new\n"}},
			} {
				if res := runTool(ctx, t, c, call.tool, call.args); res.Status != tools.StatusSuccess {
					t.Fatalf("%s: %+v", call.tool, res)
				}
			}
			if n := len(c.Received("workspace/applyEdit")); n != tt.wantEdits {
				t.Errorf("%d applyEdit requests, want %d", n, tt.wantEdits)
			}
			if got := readOverlay(ctx, t, c, "closed.txt"); got != "CLOSED\n" {
				t.Errorf("closed.txt reads %q", got)
			}
			if got := readFile(t, filepath.Join(root, "new.txt")); got != "new\n" {
				t.Errorf("new.txt on disk = %q, want it written by agentls", got)
			}
			wantDisk := "open\n"
			if tt.openDisk {
				wantDisk = "OPEN\n"
			}
			if got := readFile(t, openPath); got != wantDisk {
				t.Errorf("open.txt on disk = %q, want %q", got, wantDisk)
			}
		})
	}
}

// TestTypingDuringConfirmation: the user types in the document while the confirmation
// is shown. Whatever the tool then makes of it (apply the edit to the text as it is,
// or refuse because the text changed since it was shown), the typing is never lost
// and nothing stale is written.
func TestTypingDuringConfirmation(t *testing.T) {
	t.Parallel()
	showOnly := map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}
	for name, caps := range map[string]map[string]any{"applyEdit": capsEditor, "disk": showOnly} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			original := "first line\nsecond line\n"
			root := workspaceDir(t, map[string]string{"f.txt": original})
			c := session(t, root, caps, nil)
			path := filepath.Join(root, "f.txt")
			uri := lsptest.FileURI(path)
			ed := c.Editor()
			if err := ed.Open(uri, original); err != nil {
				t.Fatal(err)
			}
			c.Handle("window/showMessageRequest", func(context.Context, json.RawMessage) (any, error) {
				err := ed.Change(uri, lsptest.Change{Range: &lsptest.Range{Start: lsptest.Position{Line: 2}, End: lsptest.Position{Line: 2}}, Text: "typed meanwhile\n"})
				return map[string]any{"title": "Allow once"}, err
			})
			res := runTool(ctx, t, c, "replace", replaceArgs("f.txt", "second", "2nd"))
			doc, _ := ed.Doc(uri)
			wantEditor, wantDisk := original+"typed meanwhile\n", original
			switch {
			case res.Status == tools.StatusSuccess && name == "applyEdit":
				wantEditor = "first line\n2nd line\ntyped meanwhile\n"
			case res.Status == tools.StatusSuccess:
				wantDisk = "first line\n2nd line\ntyped meanwhile\n"
			case res.Error == nil || res.Error.Type != tools.ErrStaleContent:
				t.Fatalf("replace: %+v, want success or stale_content", res)
			}
			if doc.Text != wantEditor {
				t.Errorf("editor text %q, want %q", doc.Text, wantEditor)
			}
			if disk := readFile(t, path); disk != wantDisk {
				t.Errorf("disk %q, want %q", disk, wantDisk)
			}
		})
	}
}

// TestURIsAsTheEditorSpellsThem: a document whose path needs escaping in a URI is
// found by its path and edited under the URI the editor gave it.
func TestURIsAsTheEditorSpellsThem(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	name := "dir with space/a+b é.txt"
	root := workspaceDir(t, map[string]string{name: "before\n"})
	c := session(t, root, capsEditor, map[string]any{"approvalMode": "auto_edit"})
	path := filepath.Join(root, name)
	uri := lsptest.FileURI(path)
	if err := c.Editor().Open(uri, "before\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Editor().Change(uri, lsptest.Change{Text: "in the editor\n"}); err != nil {
		t.Fatal(err)
	}
	if got := readOverlay(ctx, t, c, name); got != "in the editor\n" {
		t.Fatalf("the tools read %q", got)
	}
	if res := runTool(ctx, t, c, "replace", replaceArgs(name, "editor", "buffer")); res.Status != tools.StatusSuccess {
		t.Fatalf("replace: %+v", res)
	}
	dc := documentChanges(t, applyEdits(t, c)[0])
	if dc[0].TextDocument.URI != uri {
		t.Errorf("edit for %q, want the editor's URI %q", dc[0].TextDocument.URI, uri)
	}
	if doc, _ := c.Editor().Doc(uri); doc.Text != "in the buffer\n" {
		t.Errorf("editor text %q", doc.Text)
	}
}

// TestLateReportingEditor: an editor that reports the edits it applied only later (eglot
// sends didChange from an idle timer, never while its own request waits; VS Code's
// extension host, when loaded, seconds late) still gets consecutive edits of one
// document right. The call that made an edit does not wait for the report; the next
// one waits for it (bounded), so that it works on what the person sees: typing of
// theirs since the edit is neither overwritten nor garbled. An editor that does not
// report within the bound gets the edit made against the edited text, with a null
// version.
func TestLateReportingEditor(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	original := "alpha\nbeta\ngamma\n"
	c, path, uri := openInEditor(t, "notes.txt", original)
	ed := c.Editor()
	version := func(i int) string {
		if v := documentChanges(t, applyEdits(t, c)[i])[0].TextDocument.Version; v != nil {
			return fmt.Sprint(*v)
		}
		return "null"
	}
	// replaceReportingLate runs a replace while the editor holds back its reports, the
	// earlier edit's and any typing, until the call has had time to reach the server.
	replaceReportingLate := func(old, new string) tools.CallResult {
		t.Helper()
		done := make(chan tools.CallResult, 1)
		go func() { done <- runTool(ctx, t, c, "replace", replaceArgs("notes.txt", old, new)) }()
		select {
		case res := <-done:
			t.Fatalf("replace %s answered before the editor reported its earlier edit: %+v", old, res)
		case <-time.After(200 * time.Millisecond):
		}
		ed.ReportLate(false)
		if err := ed.Flush(); err != nil {
			t.Fatal(err)
		}
		return <-done
	}

	// An edit the editor has not reported; the next waits for the report and carries
	// the reported version.
	ed.ReportLate(true)
	if res := runTool(ctx, t, c, "replace", replaceArgs("notes.txt", "alpha", "ALPHA")); res.Status != tools.StatusSuccess {
		t.Fatalf("replace before the editor reported anything: %+v", res)
	}
	if res := replaceReportingLate("gamma", "GAMMA"); res.Status != tools.StatusSuccess {
		t.Fatalf("replace once the editor reported: %+v", res)
	}
	if v := version(1); v != "2" {
		t.Errorf("the edit after the late report carries version %s, want 2 (the reported one)", v)
	}

	// The person types a line above while the editor has not reported the edit: the
	// next edit is made against the text with the typing, not over it.
	ed.ReportLate(true)
	if res := runTool(ctx, t, c, "replace", replaceArgs("notes.txt", "beta", "BETA")); res.Status != tools.StatusSuccess {
		t.Fatalf("replace: %+v", res)
	}
	if err := ed.Change(uri, lsptest.Change{Range: &lsptest.Range{}, Text: "mine\n"}); err != nil {
		t.Fatal(err)
	}
	typed, _ := ed.Doc(uri)
	// The editor's two reports may reach the server just before and after the call
	// looks: made against the typing, the edit succeeds; made against the report of
	// the edit alone, it carries that version and the editor refuses it as stale.
	// Never is it applied over the typing.
	last := "G"
	switch res := replaceReportingLate("GAMMA", "G"); {
	case res.Status == tools.StatusSuccess:
		if v := version(3); v != fmt.Sprint(typed.Version) {
			t.Errorf("the edit after the typing carries version %s, want %d", v, typed.Version)
		}
	case res.Error != nil && res.Error.Type == tools.ErrStaleContent:
		last = "GAMMA"
	default:
		t.Fatalf("replace after the typing: %+v, want success or stale_content", res)
	}
	if doc, _ := ed.Doc(uri); doc.Text != "mine\nALPHA\nBETA\n"+last+"\n" {
		t.Errorf("editor text %q, want the typing and the edits", doc.Text)
	}

	// An editor that does not report within the bound: the edit goes against the
	// edited text, with a null version, and lands right.
	ed.ReportLate(true)
	for i, r := range [][2]string{{"ALPHA", "A"}, {"BETA", "B"}} {
		if res := runTool(ctx, t, c, "replace", replaceArgs("notes.txt", r[0], r[1])); res.Status != tools.StatusSuccess {
			t.Fatalf("replace %d while the editor reports nothing: %+v", i+1, res)
		}
	}
	if v := version(len(applyEdits(t, c)) - 1); v != "null" {
		t.Errorf("an edit past the wait carries version %s, want null", v)
	}
	want := "mine\nA\nB\n" + last + "\n"
	if doc, _ := ed.Doc(uri); doc.Text != want {
		t.Errorf("editor text %q, want %q", doc.Text, want)
	}
	ed.ReportLate(false)
	if err := ed.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readOverlay(ctx, t, c, path); got != want {
		t.Errorf("the tools read %q once the editor reported, want %q", got, want)
	}
}

// TestTypingBeforeTheEditIsAnswered: an editor that reports an applied edit and then
// the person's typing before it answers workspace/applyEdit (VS Code saves the edited
// file before it answers, which under load takes long enough to type into): the tools
// read the typing, not the edit alone, and the next edit is made against the text with
// the typing rather than applied over it.
func TestTypingBeforeTheEditIsAnswered(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	original := "alpha\nbeta\ngamma\n"
	c, path, uri := openInEditor(t, "notes.txt", original)
	ed := c.Editor()
	typeOnce := true
	c.Handle("workspace/applyEdit", func(ctx context.Context, params json.RawMessage) (any, error) {
		res, err := ed.ApplyEdit(ctx, params)
		if typeOnce {
			typeOnce = false
			if err := ed.Change(uri, lsptest.Change{Range: &lsptest.Range{}, Text: "mine\n"}); err != nil {
				return nil, err
			}
		}
		return res, err
	})
	if res := runTool(ctx, t, c, "replace", replaceArgs("notes.txt", "alpha", "ALPHA")); res.Status != tools.StatusSuccess {
		t.Fatalf("replace: %+v", res)
	}
	want := "mine\nALPHA\nbeta\ngamma\n"
	if doc, _ := ed.Doc(uri); doc.Text != want {
		t.Fatalf("editor text %q, want %q", doc.Text, want)
	}
	if got := readOverlay(ctx, t, c, path); got != want {
		t.Errorf("the tools read %q, want the editor's %q", got, want)
	}
	if res := runTool(ctx, t, c, "replace", replaceArgs("notes.txt", "gamma", "GAMMA")); res.Status != tools.StatusSuccess {
		t.Fatalf("the next replace: %+v", res)
	}
	if doc, _ := ed.Doc(uri); doc.Text != "mine\nALPHA\nbeta\nGAMMA\n" {
		t.Errorf("editor text %q after the next edit, want the typing and both edits", doc.Text)
	}
}
