package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// editingTool is one of the tools that change a file after proposing the change.
type editingTool struct {
	name string
	new  func(*workspace.Workspace) tools.Tool
	// args change f.txt, which holds text containing "target".
	args string
	// apply is what the call makes of text.
	apply func(text string) string
	// create are arguments that create f.txt.
	create string
}

var editingTools = []editingTool{
	{
		name:   "replace",
		new:    NewReplace,
		args:   replaceArgsJSON("f.txt", "target", "hit", nil),
		apply:  func(text string) string { return strings.Replace(text, "target", "hit", 1) },
		create: replaceArgsJSON("f.txt", "", "created\n", nil),
	},
	{
		name:   "write_file",
		new:    NewWriteFile,
		args:   `{"file_path": "f.txt", "content": "mine\n"}`,
		apply:  func(string) string { return "mine\n" },
		create: `{"file_path": "f.txt", "content": "created\n"}`,
	},
}

// TestProposalHeld checks that a call whose Confirmation was computed applies its
// change only to the text that proposal was computed from: if the file changed in the
// editor or on disk while the person looked at the diff, the call fails with
// stale_content and writes nothing, even where the change would still apply.
func TestProposalHeld(t *testing.T) {
	const (
		text    = "head\ntarget\ntail\n"
		changed = "head\ntarget\ntail\ntyped meanwhile\n" // still holds "target"
	)
	cases := []struct {
		name string
		// open puts f.txt in the editor's overlay, with text; the disk holds "disk\ntarget\n".
		open bool
		// confirm calls Confirmation before Execute, as the scheduler always does.
		confirm bool
		// modify, when set, is a person's version of the proposal.
		modify string
		// change runs between the Confirmation and Execute.
		change func(t *testing.T, ws *workspace.Workspace, abs string)
		// stale is the message expected, if the call must fail with stale_content.
		stale string
		// current is f.txt's text (overlay or disk) when Execute runs.
		current string
	}{
		{name: "unchanged", confirm: true, current: text},
		{name: "unchanged open", open: true, confirm: true, current: text},
		{
			name: "typed in the buffer", open: true, confirm: true, current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { ws.Update(abs, 2, changed) },
			stale:  "f.txt changed since the proposed change was shown",
		},
		{
			// The editor reports the same text again under a new version: nothing the
			// person saw has changed.
			name: "same text, new version", open: true, confirm: true, current: text,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { ws.Update(abs, 9, text) },
		},
		{
			name: "changed on disk", confirm: true, current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { writeDisk(t, abs, changed) },
			stale:  "f.txt changed since the proposed change was shown",
		},
		{
			name: "changed on disk, CRLF only", confirm: true, current: text,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) {
				writeDisk(t, abs, strings.ReplaceAll(text, "\n", "\r\n"))
			},
		},
		{
			name: "deleted", confirm: true,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) {
				if err := os.Remove(abs); err != nil {
					t.Fatal(err)
				}
			},
			stale: "f.txt was deleted since the proposed change was shown",
		},
		{
			name: "modified, unchanged file", confirm: true, modify: "a person's version\n", current: text,
		},
		{
			name: "modified, typed in the buffer", open: true, confirm: true, modify: "a person's version\n", current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { ws.Update(abs, 2, changed) },
			stale:  "f.txt changed since the proposed change was shown",
		},
		{
			name: "modified, changed on disk", confirm: true, modify: "a person's version\n", current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { writeDisk(t, abs, changed) },
			stale:  "f.txt changed since the proposed change was shown",
		},
		{
			// Without a proposal the call works on the file as it finds it.
			name: "direct, changed on disk", current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { writeDisk(t, abs, changed) },
		},
		{
			name: "direct, typed in the buffer", open: true, current: changed,
			change: func(t *testing.T, ws *workspace.Workspace, abs string) { ws.Update(abs, 2, changed) },
		},
	}
	for _, tt := range editingTools {
		for _, c := range cases {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				disk := text
				if c.open {
					disk = "disk\ntarget\n"
				}
				ws, root := testutil.Workspace(t, map[string]string{"f.txt": disk})
				abs := filepath.Join(root, "f.txt")
				if c.open {
					ws.Open(abs, 1, text)
				}
				inv, err := testutil.Build(t, tt.new(ws), tt.args)
				if err != nil {
					t.Fatal(err)
				}
				if c.confirm {
					d, err := inv.Confirmation(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if d.OriginalContent == nil || *d.OriginalContent != text || d.NewContent != tt.apply(text) {
						t.Fatalf("proposal %v -> %q, want %q -> %q", d.OriginalContent, d.NewContent, text, tt.apply(text))
					}
				}
				if c.modify != "" {
					if err := inv.Capabilities().Modify(c.modify); err != nil {
						t.Fatal(err)
					}
				}
				if c.change != nil {
					c.change(t, ws, abs)
				}
				snap := snapshot(t, root)
				doc, _ := ws.Document(abs)
				res, err := inv.Execute(t.Context(), nil)

				if c.stale != "" {
					if got := testutil.ErrorType(err); got != tools.ErrStaleContent {
						t.Fatalf("error %v, want stale_content", err)
					}
					for _, part := range []string{c.stale, "nothing was written", "Read the file again", "retry"} {
						if !strings.Contains(err.Error(), part) {
							t.Errorf("message %q lacks %q", err, part)
						}
					}
					snap.unchanged(t)
					if after, _ := ws.Document(abs); after != doc {
						t.Errorf("overlay changed from %+v to %+v", doc, after)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := tt.apply(c.current)
				if c.modify != "" {
					want = c.modify
				}
				got := readDisk(t, abs)
				if c.open {
					d, _ := ws.Document(abs)
					got = d.Text
				}
				if strings.ReplaceAll(got, "\r\n", "\n") != want {
					t.Errorf("file holds %q, want %q", got, want)
				}
				if res.Diff == nil || res.Diff.OriginalContent == nil || *res.Diff.OriginalContent != c.current {
					t.Errorf("result diff %+v, want one against %q", res.Diff, c.current)
				}
			})
		}
	}
}

// TestProposalHeldCreate checks that a proposal to create a file is not carried out
// over a file created meanwhile, on disk or as an unsaved editor document.
func TestProposalHeldCreate(t *testing.T) {
	for _, tt := range editingTools {
		for _, where := range []string{"disk", "editor"} {
			t.Run(tt.name+"/"+where, func(t *testing.T) {
				ws, root := testutil.Workspace(t, nil)
				abs := filepath.Join(root, "f.txt")
				inv, err := testutil.Build(t, tt.new(ws), tt.create)
				if err != nil {
					t.Fatal(err)
				}
				d, err := inv.Confirmation(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if d.OriginalContent != nil || d.NewContent != "created\n" {
					t.Fatalf("proposal %v -> %q", d.OriginalContent, d.NewContent)
				}
				if where == "disk" {
					writeDisk(t, abs, "someone else's\n")
				} else {
					ws.Open(abs, 1, "someone else's\n")
				}
				_, err = inv.Execute(t.Context(), nil)
				if got := testutil.ErrorType(err); got != tools.ErrStaleContent {
					t.Fatalf("error %v, want stale_content", err)
				}
				if !strings.Contains(err.Error(), "f.txt was created since the proposed change was shown") {
					t.Errorf("message %q", err)
				}
				if where == "disk" {
					if got := readDisk(t, abs); got != "someone else's\n" {
						t.Errorf("disk %q", got)
					}
				} else {
					if _, err := os.Stat(abs); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("the file was written: %v", err)
					}
					if doc, _ := ws.Document(abs); doc.Text != "someone else's\n" {
						t.Errorf("overlay %q", doc.Text)
					}
				}
			})
		}
	}
}

// TestProposalRecomputed checks that a second Confirmation (a proposal shown again)
// holds Execute to the text it was computed from, not to the first one's.
func TestProposalRecomputed(t *testing.T) {
	for _, tt := range editingTools {
		t.Run(tt.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": "target\n"})
			abs := filepath.Join(root, "f.txt")
			inv, err := testutil.Build(t, tt.new(ws), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := inv.Confirmation(ctx); err != nil {
				t.Fatal(err)
			}
			writeDisk(t, abs, "new\ntarget\n")
			d, err := inv.Confirmation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if *d.OriginalContent != "new\ntarget\n" {
				t.Fatalf("second proposal against %q", *d.OriginalContent)
			}
			if _, err := inv.Execute(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if got := readDisk(t, abs); got != tt.apply("new\ntarget\n") {
				t.Errorf("disk %q", got)
			}
		})
	}
}

// refusingWriter is a workspace writer that refuses every change with err, as the
// editor writer does when the editor refuses an edit.
type refusingWriter struct{ err error }

func (w refusingWriter) Write(context.Context, workspace.Change) error { return w.err }

// TestStaleWriteKeepsCause checks that a write refused as stale keeps the cause the
// writer gave (the editor's reason) inside the tool's own explanation.
func TestStaleWriteKeepsCause(t *testing.T) {
	cases := []struct {
		name  string
		err   func(abs string) error
		cause string // expected in the message; "" for none
	}{
		{
			name: "the editor's reason",
			err: func(abs string) error {
				return &tools.Error{Type: tools.ErrStaleContent, Err: workspace.ErrStale,
					Message: "the editor refused the edit to " + abs + ": Edits on 'f.txt' require version 0, you have 1"}
			},
			cause: "(the editor refused the edit to f.txt: Edits on 'f.txt' require version 0, you have 1)",
		},
		{
			name: "a wrapped workspace error",
			err: func(abs string) error {
				return fmt.Errorf("%s changed on disk since it was read: %w", abs, workspace.ErrStale)
			},
			cause: "(f.txt changed on disk since it was read)",
		},
		{
			name: "nothing more than stale",
			err:  func(string) error { return workspace.ErrStale },
		},
	}
	for _, tt := range editingTools {
		for _, c := range cases {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				ws, root := testutil.Workspace(t, map[string]string{"f.txt": "head\ntarget\n"})
				abs := filepath.Join(root, "f.txt")
				ws.SetWriter(refusingWriter{err: c.err(abs)})
				_, err := call(t, tt.new(ws), tt.args)
				if got := testutil.ErrorType(err); got != tools.ErrStaleContent {
					t.Fatalf("error %v, want stale_content", err)
				}
				msg := err.Error()
				for _, part := range []string{"f.txt changed (on disk or in the editor)", "nothing was written", c.cause, "Read the file again"} {
					if !strings.Contains(msg, part) {
						t.Errorf("message %q lacks %q", msg, part)
					}
				}
				if strings.Contains(msg, root) {
					t.Errorf("message %q names the absolute path rather than the workspace-relative one", msg)
				}
				if c.cause == "" && strings.Contains(msg, "written (") {
					t.Errorf("message %q adds a cause that says nothing new", msg)
				}
			})
		}
	}
}
