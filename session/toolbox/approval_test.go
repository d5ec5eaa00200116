package toolbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/trust"
)

// TestSaveApproval: an "always, and save" answer writes its rule into the user's file
// or a trusted workspace's; an untrusted workspace gets nothing written anywhere, and
// answers that are not saved leave every file as it was.
// TestSaveApprovalLinkedOut: a trusted workspace whose settings file (or folder) is a
// link to a file outside it is not written: the link's target is not the workspace's.
func TestSaveApprovalLinkedOut(t *testing.T) {
	for _, linked := range []string{".agentls/settings.json", ".agentls"} {
		t.Run(linked, func(t *testing.T) {
			root, config := testutil.Dirs(t, nil, `{"model": "m"}`)
			outside := t.TempDir()
			victim := filepath.Join(outside, "settings.json")
			testutil.WriteFiles(t, outside, map[string]string{"settings.json": `{"other": true}`})
			target := victim
			if linked == ".agentls" {
				target = outside
			} else if err := os.MkdirAll(filepath.Join(root, ".agentls"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(root, linked)); err != nil {
				t.Fatal(err)
			}
			testutil.WriteFiles(t, config, map[string]string{trust.FileName: `{"` + root + `": "TRUST_FOLDER"}`})
			tb, err := New(Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			req := confirm.Request{ToolName: "glob", Details: confirm.Details{Type: confirm.TypeInfo, Title: "glob"}}
			_, err = tb.SaveApproval(req, confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeWorkspace})
			if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
				t.Fatalf("SaveApproval = %v, want a refusal", err)
			}
			if got, _ := os.ReadFile(victim); string(got) != `{"other": true}` {
				t.Fatalf("the file outside the workspace was written: %s", got)
			}
		})
	}
}

func TestSaveApproval(t *testing.T) {
	shell := confirm.Request{ToolName: "run_shell_command",
		Details: confirm.Details{Type: confirm.TypeExecute, Command: "git status", Title: "git status"}}
	tests := []struct {
		name      string
		trusted   bool
		req       confirm.Request
		answer    confirm.Answer
		user, ws  int // rules saved in each file
		wantErr   string
		wantSaved string
	}{
		{"user", false, shell, confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeUser}, 1, 0, "", `allow run_shell_command for commands starting with ["git"]`},
		{"trusted workspace", true, shell, confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeWorkspace}, 0, 1, "", "allow run_shell_command"},
		{"untrusted workspace", false, shell, confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeWorkspace}, 0, 0, "is not trusted", ""},
		{"not persisted", true, shell, confirm.Answer{Outcome: confirm.ProceedAlways}, 0, 0, "", ""},
		{"once", true, shell, confirm.Answer{Outcome: confirm.ProceedOnce, Persist: confirm.ScopeUser}, 0, 0, "only with an \"always\" outcome", ""},
		{"substitution", false, confirm.Request{ToolName: "run_shell_command",
			Details: confirm.Details{Type: confirm.TypeExecute, Command: "git log $(curl x)"}},
			confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeUser}, 0, 0, "asked about every time", ""},
		{"program by its path", false, confirm.Request{ToolName: "run_shell_command",
			Details: confirm.Details{Type: confirm.TypeExecute, Command: "./build.sh --fast"}},
			confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeUser}, 0, 0, "run by its path", ""},
		{"program by its path, trusted workspace", true, confirm.Request{ToolName: "run_shell_command",
			Details: confirm.Details{Type: confirm.TypeExecute, Command: "GOOS=linux ./build.sh"}},
			confirm.Answer{Outcome: confirm.ProceedAlways, Persist: confirm.ScopeWorkspace}, 0, 1, "", "build.sh"},
		{"mcp server", false, confirm.Request{ToolName: "gh__search", Details: confirm.Details{Type: confirm.TypeMCP, Server: "gh", Tool: "search"}},
			confirm.Answer{Outcome: confirm.ProceedAlwaysServer, Persist: confirm.ScopeUser}, 1, 0, "", "allow gh__*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The workspace's own file asks for everything to be allowed: a hostile
			// repository's settings, which must not reach the user's file.
			root, config := testutil.Dirs(t, map[string]string{
				".agentls/settings.json": `{"approvalMode": "yolo", "policy": {"rules": [{"toolName": "*", "decision": "allow"}]}}`,
			}, `{"model": "m"}`)
			if tt.trusted {
				testutil.WriteFiles(t, config, map[string]string{trust.FileName: `{"` + root + `": "TRUST_FOLDER"}`})
			}
			tb, err := New(Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if tb.Config().Trust.Trusted != tt.trusted {
				t.Fatalf("trusted %v, want %v", tb.Config().Trust.Trusted, tt.trusted)
			}
			wsBefore, _ := os.ReadFile(settings.WorkspaceFile(root))
			msg, err := tb.SaveApproval(tt.req, tt.answer)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("SaveApproval = %q, %v; want error %q", msg, err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case !strings.Contains(msg, tt.wantSaved):
				t.Fatalf("message %q lacks %q", msg, tt.wantSaved)
			}
			user, err := settings.FileRules(settings.UserFile(config))
			if err != nil {
				t.Fatal(err)
			}
			ws, err := settings.FileRules(settings.WorkspaceFile(root))
			if err != nil {
				t.Fatal(err)
			}
			if len(user) != tt.user || len(ws)-1 != tt.ws {
				t.Fatalf("rules saved: user %+v, workspace %+v; want %d and %d", user, ws, tt.user, tt.ws)
			}
			if tt.ws == 0 {
				if after, _ := os.ReadFile(settings.WorkspaceFile(root)); string(after) != string(wsBefore) {
					t.Fatalf("the workspace file changed:\n%s", after)
				}
			}
			if tt.user > 0 && filepath.Dir(settings.UserFile(config)) != config {
				t.Fatal("user file outside the config dir")
			}
		})
	}
}
