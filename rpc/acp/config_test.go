package acp_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// modeOption returns the value and the values offered of the config option of
// category mode in opts, as a client that reads only configOptions finds the modes.
func modeOption(t *testing.T, opts []sdk.SessionConfigOption) (current string, values []string) {
	t.Helper()
	for _, o := range opts {
		if s := o.Select; s != nil && s.Category != nil && *s.Category == sdk.SessionConfigOptionCategoryMode {
			if s.Options.Ungrouped == nil {
				t.Fatalf("the mode option has no ungrouped values: %+v", s.Options)
			}
			for _, v := range *s.Options.Ungrouped {
				values = append(values, string(v.Value))
			}
			return string(s.CurrentValue), values
		}
	}
	t.Fatalf("no config option of category mode in %+v", opts)
	return "", nil
}

// modeOptionUpdates returns the mode option's value in each config_option_update of ups.
func modeOptionUpdates(t *testing.T, ups []sdk.SessionUpdate) []string {
	t.Helper()
	var out []string
	for _, u := range ups {
		if u.ConfigOptionUpdate != nil {
			cur, _ := modeOption(t, u.ConfigOptionUpdate.ConfigOptions)
			out = append(out, cur)
		}
	}
	return out
}

// TestModeConfigOption drives the modes as a client that reads only configOptions
// does: session/new offers them as the option of category mode; setting it with
// session/set_config_option switches the mode (a write then runs unasked in yolo) and
// answers the options with the new value; a switch by session/set_mode or by the
// model (enter_plan_mode) reaches it as config_option_update; bad values are errors
// that change nothing.
func TestModeConfigOption(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(root, "a.txt")
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("w1", "write_file", map[string]any{"file_path": file, "content": "yolo\n"})}},
		clients.Turn{Text: "written"},
		clients.Turn{Calls: []clients.ScriptCall{call("p1", "enter_plan_mode", map[string]any{"reason": "think first"})}},
		clients.Turn{Text: "planning"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	cur, values := modeOption(t, sess.ConfigOptions)
	if want := []string{"default", "auto_edit", "yolo", "plan"}; cur != "default" || !slices.Equal(values, want) {
		t.Errorf("mode option %q of %q, want default of %q", cur, values, want)
	}

	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return a.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: sess.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	for _, bad := range []struct{ id, value string }{{"mode", "reckless"}, {"mode", ""}, {"temperature", "hot"}} {
		if _, err := set(bad.id, bad.value); codeOf(err) != -32602 {
			t.Errorf("set_config_option %s=%q: %v, want invalid params", bad.id, bad.value, err)
		}
	}
	res, err := set("mode", "yolo")
	if err != nil {
		t.Fatalf("set_config_option mode=yolo: %v", err)
	}
	if cur, _ := modeOption(t, res.ConfigOptions); cur != "yolo" || len(res.ConfigOptions) != 3 {
		t.Errorf("set_config_option answered mode %q in %d options, want yolo among mode, model and thoughts", cur, len(res.ConfigOptions))
	}
	a.client.take()
	if r, err := a.prompt(ctx, sess.SessionId, "write it"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", r, err)
	}
	if perms := a.client.takePermissions(); len(perms) != 0 {
		t.Errorf("yolo set through configOptions still asked %d times", len(perms))
	}
	if got := readFile(t, file); got != "yolo\n" {
		t.Errorf("a.txt = %q, want the write made", got)
	}

	if _, err := a.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "auto_edit"}); err != nil {
		t.Fatal(err)
	}
	if got := modeOptionUpdates(t, a.client.take()); !slices.Equal(got, []string{"auto_edit"}) {
		t.Errorf("config_option_update after session/set_mode: mode %q, want auto_edit", got)
	}
	if r, err := a.prompt(ctx, sess.SessionId, "plan it"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", r, err)
	}
	if got := modeOptionUpdates(t, a.client.take()); !slices.Equal(got, []string{"plan"}) {
		t.Errorf("config_option_update after enter_plan_mode: mode %q, want plan", got)
	}
	// A session loaded again offers the mode it is in.
	load, err := a.conn.LoadSession(context.WithoutCancel(ctx), sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if cur, _ := modeOption(t, load.ConfigOptions); cur != "plan" {
		t.Errorf("session/load's mode option %q, want plan", cur)
	}
}
