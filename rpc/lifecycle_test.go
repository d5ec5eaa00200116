package rpc_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

func TestInitializeResult(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := start(t, root)
	raw, err := c.Initialize(ctx, initParams(root, capsEditor, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": "utf-16",
			"textDocumentSync": map[string]any{"openClose": true, "change": 2.0, "save": map[string]any{"includeText": false}},
			"executeCommandProvider": map[string]any{"commands": []any{
				"agentls.runTool", "agentls.listTools", "agentls.cancel", "agentls.setApprovalMode", "agentls.confirm",
				"agentls.listSessions", "agentls.sessionHistory", "agentls.discoverTools", "agentls.mcpStatus", "agentls.mcpAuth", "agentls.metrics", "agentls.listPrompts", "agentls.trust",
				"agentls.undoTurn", "agentls.redoTurn", "agentls.turnDiff", "agentls.listRules", "agentls.removeRule", "agentls.status", "agentls.prompt", "agentls.runPrompt"}},
			"codeActionProvider": map[string]any{"codeActionKinds": []any{"quickfix", "refactor.rewrite", "source.agentls"}},
			"workspace":          map[string]any{"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true}},
			"experimental":       map[string]any{"agentls": map[string]any{"protocolVersion": 1.0}},
		},
	}
	info, _ := got["serverInfo"].(map[string]any)
	if info["name"] != "agentls" || info["version"] == "" || info["version"] == nil {
		t.Errorf("serverInfo = %v, want name agentls and a version", info)
	}
	delete(got, "serverInfo")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("initialize result:\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, want))
	}
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
	c := start(t, root)

	err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.listTools"}, nil)
	if codeOf(err) != lsptest.CodeServerNotInitialized {
		t.Errorf("a request before initialize: %v, want ServerNotInitialized", err)
	}
	// A notification before initialize is dropped, not fatal.
	if err := c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": lsptest.FileURI(root + "/a.txt"), "version": 1, "text": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, initParams(root, capsNone, nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "initialize", initParams(root, capsNone, nil), nil); codeOf(err) != lsptest.CodeInvalidRequest {
		t.Errorf("a second initialize: %v, want InvalidRequest", err)
	}
	if got := readOverlay(ctx, t, c, "a.txt"); got != "a\n" {
		t.Errorf("read_file = %q: the didOpen before initialize must have been dropped", got)
	}
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.listTools"}, nil)
		if codeOf(err) != lsptest.CodeInvalidRequest || !strings.Contains(err.Error(), "shut down") {
			t.Errorf("a request after shutdown: %v, want InvalidRequest saying the server shut down", err)
		}
	}
	if err := c.Notify("exit", nil); err != nil {
		t.Fatal(err)
	}
	code, err := c.Wait(ctx)
	if err != nil || code != 0 {
		t.Errorf("exit after shutdown: code %d, %v; want 0", code, err)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		shutdown bool
		exit     bool // else the editor closes the input
		want     int
	}{
		{"shutdown and exit", true, true, 0},
		{"exit without shutdown", false, true, 1},
		{"input closed after shutdown", true, false, 0},
		{"input closed without shutdown", false, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, capsNone, nil)
			if tt.shutdown {
				if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if tt.exit {
				if err := c.Notify("exit", nil); err != nil {
					t.Fatal(err)
				}
			} else if err := c.CloseInput(); err != nil {
				t.Fatal(err)
			}
			code, err := c.Wait(ctx)
			if err != nil || code != tt.want {
				t.Errorf("exit code %d (%v), want %d", code, err, tt.want)
			}
		})
	}
}

func TestExitStopsRunningTools(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsNone, map[string]any{"approvalMode": "yolo"})
	marker := uniqueSleep()
	c.Go("workspace/executeCommand", map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": "run_shell_command", "args": map[string]any{"command": marker}}}})
	waitProcess(ctx, t, marker, true)
	if err := c.Notify("exit", nil); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(ctx); err != nil || code != 1 {
		t.Errorf("exit while a tool runs: code %d (%v), want 1", code, err)
	}
	waitProcess(ctx, t, marker, false)
}

func TestPositionEncodingNegotiation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		offered []string
		want    string
	}{
		{nil, "utf-16"},
		{[]string{"utf-16"}, "utf-16"},
		{[]string{"utf-16", "utf-8"}, "utf-8"},
		{[]string{"utf-32", "utf-16"}, "utf-32"},
		{[]string{"utf-32", "utf-8"}, "utf-8"},
		{[]string{"latin-1"}, "utf-16"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.offered, ","), func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := start(t, root)
			caps := map[string]any{}
			if tt.offered != nil {
				caps["general"] = map[string]any{"positionEncodings": tt.offered}
			}
			raw, err := c.Initialize(ctx, initParams(root, caps, nil))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Capabilities struct {
					PositionEncoding string `json:"positionEncoding"`
				} `json:"capabilities"`
			}
			json.Unmarshal(raw, &res)
			if res.Capabilities.PositionEncoding != tt.want {
				t.Errorf("positionEncoding = %q, want %q", res.Capabilities.PositionEncoding, tt.want)
			}
		})
	}
}

func TestWorkspaceRoots(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	a := workspaceDir(t, map[string]string{"a.txt": "in a\n"})
	b := workspaceDir(t, map[string]string{"b.txt": "in b\n"})
	extra := workspaceDir(t, map[string]string{"c.txt": "in c\n"})
	for _, tt := range []struct {
		name   string
		params map[string]any
	}{
		{"workspaceFolders", map[string]any{"workspaceFolders": []any{
			map[string]any{"uri": lsptest.FileURI(a), "name": "a"}, map[string]any{"uri": lsptest.FileURI(b), "name": "b"},
			map[string]any{"uri": lsptest.FileURI(filepath.Join(a, "missing")), "name": "gone"}}}},
		{"rootUri", map[string]any{"rootUri": lsptest.FileURI(a)}},
		{"rootPath", map[string]any{"rootPath": a, "rootUri": nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, t.TempDir())
			params := map[string]any{"processId": nil, "capabilities": capsNone}
			for k, v := range tt.params {
				params[k] = v
			}
			if _, err := c.Initialize(ctx, params); err != nil {
				t.Fatal(err)
			}
			if got := readOverlay(ctx, t, c, "a.txt"); got != "in a\n" {
				t.Errorf("a.txt relative to the first root = %q", got)
			}
			res := runTool(ctx, t, c, "read_file", map[string]any{"file_path": filepath.Join(b, "b.txt")})
			if inB := tt.name == "workspaceFolders"; (res.Status == tools.StatusSuccess) != inB {
				t.Errorf("reading in the second folder: %s %s (a root: %v)", res.Status, res.Output, inB)
			}
			if res := runTool(ctx, t, c, "read_file", map[string]any{"file_path": filepath.Join(extra, "c.txt")}); res.Error == nil ||
				res.Error.Type != tools.ErrPathNotInWorkspace {
				t.Errorf("reading outside the roots: %+v, want path_not_in_workspace", res)
			}
			// A folder added later is a root from then on.
			if err := c.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
				"added": []any{map[string]any{"uri": lsptest.FileURI(extra), "name": "extra"}}, "removed": []any{}}}); err != nil {
				t.Fatal(err)
			}
			if got := readOverlay(ctx, t, c, filepath.Join(extra, "c.txt")); got != "in c\n" {
				t.Errorf("reading in an added folder = %q", got)
			}
		})
	}
}

func TestInitializeErrors(t *testing.T) {
	t.Parallel()
	root := workspaceDir(t, nil)
	tests := []struct {
		name   string
		params any
		want   string
	}{
		{"params are not an object", []int{1}, "initialize"},
		{"no usable folder", map[string]any{"capabilities": map[string]any{}, "rootUri": lsptest.FileURI(filepath.Join(root, "nope"))}, "no usable workspace folder"},
		{"bad initializationOptions", initParams(root, capsNone, map[string]any{"coreTools": "read_file"}), "coreTools"},
		{"bad approval mode", initParams(root, capsNone, map[string]any{"approvalMode": "reckless"}), "reckless"},
		{"options not an object", initParams(root, capsNone, "yolo"), "initializationOptions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			c := start(t, root)
			err := c.Call(ctx, "initialize", tt.params, nil)
			if codeOf(err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("initialize: %v, want InvalidParams mentioning %q", err, tt.want)
			}
			// The server is still waiting for a good initialize.
			if _, err := c.Initialize(ctx, initParams(root, capsNone, nil)); err != nil {
				t.Fatalf("initialize after a failed one: %v", err)
			}
		})
	}
}

func TestSettingsFromTheEditor(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsNone, map[string]any{"excludeTools": []string{"glob"}, "approvalMode": "yolo"})
	var infos []tools.Info
	if err := command(ctx, c, "agentls.listTools", map[string]any{}, &infos); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	if slices.Contains(names, "glob") || !slices.Contains(names, "write_file") {
		t.Errorf("tools = %v: want write_file but not glob, which initializationOptions exclude", names)
	}
	if res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "yolo.txt", "content": "x"}); res.Status != tools.StatusSuccess {
		t.Errorf("write_file in yolo mode from initializationOptions: %s %s", res.Status, res.Output)
	}
	// The editor's configuration changes: plan mode refuses writes.
	if err := c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": map[string]any{"approvalMode": "plan"}}}); err != nil {
		t.Fatal(err)
	}
	res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "plan.txt", "content": "x"})
	if res.Error == nil || res.Error.Type != tools.ErrPolicyViolation {
		t.Errorf("write_file in plan mode from didChangeConfiguration: %+v", res)
	}
	// A bad configuration is refused with a message and changes nothing.
	if err := c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"approvalMode": "reckless"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "reckless") }); err != nil {
		t.Error(err)
	}
	// And the mode can be switched with the command.
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "auto_edit"}, nil); err != nil {
		t.Fatal(err)
	}
	if res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "auto.txt", "content": "x"}); res.Status != tools.StatusSuccess {
		t.Errorf("write_file after agentls.setApprovalMode auto_edit: %s %s", res.Status, res.Output)
	}
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "careless"}, nil); codeOf(err) != lsptest.CodeInvalidParams ||
		!strings.Contains(err.Error(), "careless") {
		t.Errorf("setApprovalMode careless: %v, want InvalidParams naming it", err)
	}
}
