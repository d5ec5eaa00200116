package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// swapTools are the edit tools, each changing d/NAME of the workspace.
var swapTools = []struct {
	name string
	new  func(*workspace.Workspace) tools.Tool
	file string
	args string
}{
	{"write_file", NewWriteFile, "f.txt", `{"file_path": "d/f.txt", "content": "mine\n"}`},
	{"replace", NewReplace, "f.txt", replaceArgsJSON("d/f.txt", "target", "hit", nil)},
	{"notebook_edit", NewNotebookEdit, "nb.ipynb", `{"notebook_path": "d/nb.ipynb", "cell_id": "load", "new_source": "x = 1\n"}`},
}

// swapWorkspace makes a workspace whose directory d holds the file an edit tool
// changes, and two other places with the same file: .git/hooks inside the workspace
// (sensitive: what a checkout runs) and a directory outside it.
func swapWorkspace(t *testing.T, file string) (ws *workspace.Workspace, root, outside string) {
	t.Helper()
	text := "head\ntarget\ntail\n"
	if file == "nb.ipynb" {
		text = notebookFile(t, "nb1.ipynb")
	}
	ws, root = testutil.Workspace(t, map[string]string{"d/" + file: text, ".git/hooks/" + file: text})
	outside = outsideDir(t)
	writeDisk(t, filepath.Join(outside, file), text)
	return ws, root, outside
}

// swapDir replaces the directory d by a link to target, as a checkout running while
// the person answers could.
func swapDir(t *testing.T, root, target string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d.orig")); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, filepath.Join(root, "d"))
}

// TestEditPathSwapped checks that an edit tool writes only the file its path reached
// when the change was proposed: a directory along it turned into a link between the
// Confirmation and Execute, to a sensitive directory of the workspace or to outside it,
// makes the call fail and write nothing.
func TestEditPathSwapped(t *testing.T) {
	for _, tt := range swapTools {
		for _, to := range []string{"", "hooks", "outside"} {
			t.Run(tt.name+"/"+to, func(t *testing.T) {
				ws, root, outside := swapWorkspace(t, tt.file)
				inv, err := testutil.Build(t, tt.new(ws), tt.args)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := inv.Confirmation(t.Context()); err != nil {
					t.Fatal(err)
				}
				switch to {
				case "hooks":
					swapDir(t, root, filepath.Join(root, ".git", "hooks"))
				case "outside":
					swapDir(t, root, outside)
				}
				snap := snapshot(t, root, outside)
				_, err = inv.Execute(t.Context(), nil)
				if to == "" {
					if err != nil {
						t.Fatalf("unswapped: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatalf("the edit through the swapped link succeeded")
				}
				if to == "hooks" && testutil.ErrorType(err) != tools.ErrStaleContent {
					t.Errorf("error %v, want stale_content", err)
				}
				snap.unchanged(t)
			})
		}
	}
}

// TestEditPathSwappedAtCommit checks the last look before the write: a link swapped
// after Execute read the file, just before the commit, makes the commit refuse; and,
// as the control, the same change committed without that look is written through the
// link into .git/hooks.
func TestEditPathSwappedAtCommit(t *testing.T) {
	ws, root, _ := swapWorkspace(t, "f.txt")
	inv, err := testutil.Build(t, NewWriteFile(ws), swapTools[0].args)
	if err != nil {
		t.Fatal(err)
	}
	c := inv.(*writeFileCall)
	abs, cur, err := c.basis.readToApply(t.Context(), ws, c.read)
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := c.change(abs, cur)
	if err != nil {
		t.Fatal(err)
	}
	swapDir(t, root, filepath.Join(root, ".git", "hooks"))
	hook := filepath.Join(root, ".git", "hooks", "f.txt")
	before := readDisk(t, hook)
	if _, err := c.basis.commit(t.Context(), ws, ch, c.Describe()); testutil.ErrorType(err) != tools.ErrStaleContent {
		t.Fatalf("commit after the swap: %v, want stale_content", err)
	}
	if got := readDisk(t, hook); got != before {
		t.Fatalf("the refused commit wrote %s: %q", hook, got)
	}
	if _, err := ch.commit(t.Context(), ws, c.Describe()); err != nil {
		t.Fatal(err)
	}
	if got := readDisk(t, hook); got != "mine\n" {
		t.Errorf("control: the unchecked commit left %s holding %q, want it written through the link", hook, got)
	}
}
