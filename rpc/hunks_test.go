package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// sessionIn is session with the user configuration in config ($XDG_CONFIG_HOME, so
// the user's settings file is config/agentls/settings.json).
func sessionIn(t *testing.T, root, config string, caps map[string]any) *lsptest.Client {
	t.Helper()
	c := startEnv(t, root, []string{"XDG_CONFIG_HOME=" + config, "HOME=" + config})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Initialize(ctx, initParams(root, caps, nil)); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// TestConfirmHunks: agentls/confirm for an edit carries its hunks; an answer's
// acceptedHunks apply only those hunks to the editor's text and the model is told
// which were taken; invalid choices are refusals that change nothing.
func TestConfirmHunks(t *testing.T) {
	t.Parallel()
	var old, proposed strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i == 2 || i == 15 || i == 29 {
			fmt.Fprintf(&proposed, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&proposed, "line %d\n", i)
		}
	}
	tests := []struct {
		name       string
		result     map[string]any
		wantStatus tools.Status
		want       string
		wantMsg    string
	}{
		{"hunks 1 and 3", map[string]any{"outcome": "proceed_once", "acceptedHunks": []int{0, 2}}, tools.StatusSuccess,
			strings.NewReplacer("line 2\n", "LINE 2\n", "line 29\n", "LINE 29\n").Replace(old.String()),
			"The user accepted hunks 1 and 3 of 3; hunk 2 was not applied: @@ -12,7 +12,7 @@"},
		{"all hunks", map[string]any{"outcome": "proceed_once", "acceptedHunks": []int{0, 1, 2}}, tools.StatusSuccess, proposed.String(), "Successfully"},
		{"absent means all", map[string]any{"outcome": "proceed_once"}, tools.StatusSuccess, proposed.String(), "Successfully"},
		{"none", map[string]any{"outcome": "proceed_once", "acceptedHunks": []int{}}, tools.StatusCancelled, old.String(), "rejected all 3 hunks"},
		{"out of range", map[string]any{"outcome": "proceed_once", "acceptedHunks": []int{3}}, tools.StatusCancelled, old.String(), "hunk 3 does not exist"},
		{"duplicate", map[string]any{"outcome": "proceed_once", "acceptedHunks": []int{1, 1}}, tools.StatusCancelled, old.String(), "given twice"},
		{"with always", map[string]any{"outcome": "proceed_always", "acceptedHunks": []int{1}}, tools.StatusCancelled, old.String(), "only with proceed_once"},
		{"not a list", map[string]any{"outcome": "proceed_once", "acceptedHunks": "1"}, tools.StatusCancelled, old.String(), "acceptedHunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"f.txt": old.String()})
			c := session(t, root, capsRich, nil)
			uri := lsptest.FileURI(filepath.Join(root, "f.txt"))
			if err := c.Editor().Open(uri, old.String()); err != nil {
				t.Fatal(err)
			}
			c.Handle("agentls/confirm", answer(tt.result))
			res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "f.txt", "content": proposed.String()})
			if res.Status != tt.wantStatus || !strings.Contains(res.Output, tt.wantMsg) {
				t.Errorf("result %s %q, want %s mentioning %q", res.Status, res.Output, tt.wantStatus, tt.wantMsg)
			}
			if doc, _ := c.Editor().Doc(uri); doc.Text != tt.want {
				t.Errorf("editor text\n%s\nwant\n%s", doc.Text, tt.want)
			}
			var d struct {
				Diff  string
				Hunks []map[string]int
			}
			if err := json.Unmarshal(c.Received("agentls/confirm")[0].Params, &d); err != nil {
				t.Fatal(err)
			}
			want := []map[string]int{
				{"index": 0, "oldStart": 1, "oldLines": 5, "newStart": 1, "newLines": 5},
				{"index": 1, "oldStart": 12, "oldLines": 7, "newStart": 12, "newLines": 7},
				{"index": 2, "oldStart": 26, "oldLines": 5, "newStart": 26, "newLines": 5},
			}
			if fmt.Sprint(d.Hunks) != fmt.Sprint(want) || strings.Count(d.Diff, "\n@@ ") != 3 {
				t.Errorf("hunks %v, want %v", d.Hunks, want)
			}
		})
	}
}

// TestPersistApproval: "always, and save" writes the rule into the user's settings and
// says so; agentls.listRules lists it and agentls.removeRule removes it. For an
// untrusted workspace, persist "workspace" writes nothing anywhere, says so, and the
// answer still holds for the session. A hostile workspace's settings never reach the
// user's file: only the user's answer does.
func TestPersistApproval(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	// The workspace asks for everything to be allowed and for yolo mode; it is not
	// trusted, so neither applies, and nothing of it may land in the user's file.
	hostile := `{"approvalMode": "yolo", "policy": {"rules": [{"toolName": "*", "decision": "allow"}]}}`
	root := workspaceDir(t, map[string]string{".agentls/settings.json": hostile})
	config := t.TempDir()
	userFile := filepath.Join(config, "agentls", "settings.json")
	c := sessionIn(t, root, config, capsRich)

	var answerWith atomic.Value
	answerWith.Store(map[string]any{"outcome": "proceed_once"})
	c.Handle("agentls/confirm", func(_ context.Context, p json.RawMessage) (any, error) {
		var d struct{ Title string }
		json.Unmarshal(p, &d)
		if d.Title == "Trust this folder?" {
			return map[string]any{"outcome": "cancel"}, nil // the question whether to trust the folder: no
		}
		return answerWith.Load(), nil
	})
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo one"}); res.Status != tools.StatusSuccess {
		t.Fatalf("echo: %+v", res)
	}
	if _, err := os.Stat(userFile); !os.IsNotExist(err) {
		t.Fatalf("the user's settings file was written without an answer asking for it: %v", err)
	}

	// Persist in the untrusted workspace: nothing written, a warning, allowed for the session.
	answerWith.Store(map[string]any{"outcome": "proceed_always", "persist": "workspace"})
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo two"}); res.Status != tools.StatusSuccess {
		t.Fatalf("echo: %+v", res)
	}
	m, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "not trusted") })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Params), `"type":2`) {
		t.Errorf("showMessage %s, want a warning", m.Params)
	}
	if got := readFile(t, filepath.Join(root, ".agentls", "settings.json")); got != hostile {
		t.Errorf("the untrusted workspace's settings were written: %s", got)
	}
	if _, err := os.Stat(userFile); !os.IsNotExist(err) {
		t.Fatalf("the user's settings file was written for a workspace answer: %v", err)
	}
	asked := len(c.Received("agentls/confirm"))
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo three"}); res.Status != tools.StatusSuccess {
		t.Fatalf("echo: %+v", res)
	}
	if n := len(c.Received("agentls/confirm")); n != asked {
		t.Errorf("echo was asked about again after proceed_always")
	}

	// Persist in the user's settings.
	answerWith.Store(map[string]any{"outcome": "proceed_always", "persist": "user"})
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "git --version"}); res.Status != tools.StatusSuccess {
		t.Fatalf("git: %+v", res)
	}
	if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), "Saved in "+strings.ReplaceAll(userFile, `\`, `\\`))
	}); err != nil {
		t.Fatal(err)
	}
	rules, err := settings.FileRules(userFile)
	if err != nil || len(rules) != 1 || rules[0].ToolName != "run_shell_command" || fmt.Sprint(rules[0].CommandPrefix) != "[git]" {
		t.Fatalf("user rules %+v, %v", rules, err)
	}

	// Invalid persist: a refusal, nothing saved.
	answerWith.Store(map[string]any{"outcome": "proceed_once", "persist": "user"})
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "ls"}); res.Status != tools.StatusCancelled || !strings.Contains(res.Output, "invalid") {
		t.Fatalf("ls with an invalid answer: %+v", res)
	}

	var list struct {
		Rules []struct {
			Source, File, Description string
			Index                     int
		}
	}
	if err := command(ctx, c, "agentls.listRules", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Rules) != 2 || list.Rules[0].Source != "user" || list.Rules[0].File != userFile ||
		!strings.Contains(list.Rules[0].Description, "git") || list.Rules[1].Source != "workspace" || list.Rules[1].Index != 0 {
		t.Fatalf("listRules = %+v", list)
	}
	for _, bad := range []map[string]any{{"source": "user", "index": 1}, {"source": "system", "index": 0}, {"source": "user"}} {
		if err := command(ctx, c, "agentls.removeRule", bad, nil); err == nil || codeOf(err) != -32602 {
			t.Errorf("removeRule %v = %v, want invalid params", bad, err)
		}
	}
	if err := command(ctx, c, "agentls.removeRule", map[string]any{"source": "user", "index": 0}, nil); err != nil {
		t.Fatal(err)
	}
	if rules, err := settings.FileRules(userFile); err != nil || len(rules) != 0 {
		t.Fatalf("user rules after removal %+v, %v", rules, err)
	}
}

// TestAllowAlwaysAndSave: a plain client's "Always allow …, and save" saves the rule in
// the user's settings.
func TestAllowAlwaysAndSave(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	config := t.TempDir()
	c := sessionIn(t, root, config, capsEditor)
	c.Handle("window/showMessageRequest", answer(map[string]any{"title": "Always allow echo, and save it in your settings"}))
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo hi"}); res.Status != tools.StatusSuccess {
		t.Fatalf("echo: %+v", res)
	}
	rules, err := settings.FileRules(filepath.Join(config, "agentls", "settings.json"))
	if err != nil || len(rules) != 1 || fmt.Sprint(rules[0].CommandPrefix) != "[echo]" {
		t.Fatalf("user rules %+v, %v", rules, err)
	}
}
