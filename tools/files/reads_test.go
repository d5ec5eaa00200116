package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// TestReadBeforeEdit checks the rule a session's edits are held to: an edit of an
// existing file the session has not read, or that changed on disk or in the editor
// since it read it, is refused with "read it first", names what changed and writes
// nothing; reads by read_file, read_many_files and the session's own edits count.
func TestReadBeforeEdit(t *testing.T) {
	const text = "head\ntarget\ntail\n"
	editArgs := map[string]string{
		"replace":    replaceArgsJSON("f.txt", "target", "hit", nil),
		"write_file": `{"file_path": "f.txt", "content": "mine\n"}`,
	}
	cases := []struct {
		name string
		// open puts f.txt in the editor's overlay with text before anything else.
		open bool
		// before runs, in the session, before the edit; ws is the workspace, abs f.txt.
		before func(t *testing.T, ctx context.Context, ws *workspace.Workspace, abs string)
		// wantErr are the parts of the refusal; none means the edit succeeds.
		wantErr []string
	}{
		{name: "never read", wantErr: []string{"Read it first", "f.txt has not been read in this session"}},
		{name: "read_file", before: readWith(`{"file_path": "f.txt"}`, NewReadFile)},
		{name: "read_file of some lines", before: readWith(`{"file_path": "f.txt", "start_line": 2, "end_line": 2}`, NewReadFile)},
		{name: "read_many_files", before: readWith(`{"include": ["*.txt"]}`, NewReadManyFiles)},
		{name: "another file read", before: readWith(`{"file_path": "g.txt"}`, NewReadFile),
			wantErr: []string{"f.txt has not been read"}},
		{
			name:    "changed on disk since",
			before:  then(readWith(`{"file_path": "f.txt"}`, NewReadFile), changeDisk("head\ntarget\ntail\nmore\n")),
			wantErr: []string{"Read it first", "f.txt changed on disk since this session read it"},
		},
		{
			name: "changed in the editor since",
			open: true,
			before: then(readWith(`{"file_path": "f.txt"}`, NewReadFile), func(t *testing.T, _ context.Context, ws *workspace.Workspace, abs string) {
				ws.Update(abs, 2, "head\ntarget\ntail\ntyped\n")
			}),
			wantErr: []string{"Read it first", "f.txt changed in the editor since this session read it", "version 1 → 2"},
		},
		{
			name:   "touched on disk, same text",
			before: then(readWith(`{"file_path": "f.txt"}`, NewReadFile), changeDisk(text)),
		},
		{
			name: "the session's own edit counts as a read",
			before: then(readWith(`{"file_path": "f.txt"}`, NewReadFile), func(t *testing.T, ctx context.Context, ws *workspace.Workspace, _ string) {
				if _, err := testutil.Call(ctx, t, NewReplace(ws), replaceArgsJSON("f.txt", "head", "top", nil), nil); err != nil {
					t.Fatal(err)
				}
			}),
		},
	}
	for _, tc := range cases {
		for _, tool := range []string{"replace", "write_file"} {
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				ws, root := testutil.Workspace(t, map[string]string{"f.txt": text, "g.txt": "g\n"})
				abs := filepath.Join(root, "f.txt")
				if tc.open {
					ws.Open(abs, 1, text)
				}
				ctx := WithReads(context.Background(), NewReads())
				if tc.before != nil {
					tc.before(t, ctx, ws, abs)
				}
				var tl tools.Tool = NewReplace(ws)
				if tool == "write_file" {
					tl = NewWriteFile(ws)
				}
				inv, err := testutil.Build(t, tl, editArgs[tool])
				if err != nil {
					t.Fatal(err)
				}
				before := readDisk(t, abs)
				_, cerr := inv.Confirmation(ctx)
				_, err = inv.Execute(ctx, nil)
				if len(tc.wantErr) == 0 {
					if cerr != nil || err != nil {
						t.Fatalf("edit refused: confirmation %v, execute %v", cerr, err)
					}
					return
				}
				for _, e := range []error{cerr, err} {
					if e == nil {
						t.Fatal("edit allowed, want it refused")
					}
					if got := testutil.ErrorType(e); got != tools.ErrStaleContent {
						t.Errorf("error type %q, want %q", got, tools.ErrStaleContent)
					}
					for _, p := range tc.wantErr {
						if !strings.Contains(e.Error(), p) {
							t.Errorf("error %q does not say %q", e, p)
						}
					}
				}
				if got := readDisk(t, abs); got != before {
					t.Errorf("refused edit wrote the file: %q", got)
				}
			})
		}
	}
}

// TestReadBeforeEditNotHeld checks who is not held to the rule: calls without a
// record in their context (a person's direct calls), and the creation of a new file.
func TestReadBeforeEditNotHeld(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "target\n"})
	if _, err := call(t, NewReplace(ws), replaceArgsJSON("f.txt", "target", "hit", nil)); err != nil {
		t.Errorf("direct replace refused: %v", err)
	}
	ctx := WithReads(context.Background(), NewReads())
	if _, err := testutil.Call(ctx, t, NewWriteFile(ws), `{"file_path": "new.txt", "content": "n\n"}`, nil); err != nil {
		t.Errorf("creating a file refused: %v", err)
	}
	if got := readDisk(t, filepath.Join(root, "new.txt")); got != "n\n" {
		t.Errorf("new.txt = %q", got)
	}
	// Having created it, the session knows its text and may edit it.
	if _, err := testutil.Call(ctx, t, NewReplace(ws), replaceArgsJSON("new.txt", "n", "m", nil), nil); err != nil {
		t.Errorf("editing the file the session created refused: %v", err)
	}
}

func readWith(args string, newTool func(*workspace.Workspace) tools.Tool) func(*testing.T, context.Context, *workspace.Workspace, string) {
	return func(t *testing.T, ctx context.Context, ws *workspace.Workspace, _ string) {
		t.Helper()
		if _, err := testutil.Call(ctx, t, newTool(ws), args, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func changeDisk(text string) func(*testing.T, context.Context, *workspace.Workspace, string) {
	return func(t *testing.T, _ context.Context, _ *workspace.Workspace, abs string) {
		t.Helper()
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func then(fs ...func(*testing.T, context.Context, *workspace.Workspace, string)) func(*testing.T, context.Context, *workspace.Workspace, string) {
	return func(t *testing.T, ctx context.Context, ws *workspace.Workspace, abs string) {
		for _, f := range fs {
			f(t, ctx, ws, abs)
		}
	}
}
