package toolbox

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/trust"
)

// TestOverrides: overrides count as the user's settings: they override the user's
// file, and the workspace's files can still only tighten them.
func TestOverrides(t *testing.T) {
	root, config := testutil.Dirs(t, map[string]string{
		".gemini/settings.json": `{"approvalMode": "yolo", "excludeTools": ["write_file"],
			"policy": {"rules": [{"toolName": "replace", "decision": "allow"}]}}`,
	}, `{"approvalMode": "auto_edit", "excludeTools": ["glob"]}`)
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config,
		Overrides: parse(t, `{"approvalMode": "plan", "coreTools": ["read_file", "write_file", "glob", "replace"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if got := tb.Config().Policy.Mode(); got != confirm.ModePlan {
		t.Errorf("mode %s, want plan from the overrides (the workspace may not set it)", got)
	}
	// coreTools from the overrides; the user's and the workspace's exclusions stay.
	if got := testutil.ToolNames(tb.Config().Registry); !slices.Equal(got, []string{"read_file", "replace"}) {
		t.Errorf("tools %v, want read_file and replace", got)
	}
	if len(tb.Config().Settings.Policy.Rules) != 0 {
		t.Errorf("the workspace's allow rule was taken: %+v", tb.Config().Settings.Policy.Rules)
	}
	// Mode still overrides everything.
	tb2, err := New(Options{Roots: []string{root}, ConfigDir: config, Mode: "default",
		Overrides: parse(t, `{"approvalMode": "plan"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Close()
	if got := tb2.Config().Policy.Mode(); got != confirm.ModeDefault {
		t.Errorf("mode %s, want default from Options.Mode", got)
	}
	if _, err := New(Options{Roots: []string{root}, ConfigDir: config,
		Overrides: parse(t, `{"tools": {"shell": {"inactivityTimeout": "soon"}}}`)}); err == nil {
		t.Errorf("an invalid override was accepted")
	}
}

// wrapped is a tool adapted by a front end.
type wrapped struct{ tools.Tool }

// TestToolHook: Options.Tool adapts or leaves out each built-in tool, also in
// the registries Reconfigure makes.
func TestToolHook(t *testing.T) {
	root, config := testutil.Dirs(t, nil, "")
	hook := func(t tools.Tool) tools.Tool {
		switch t.Info().Name {
		case "glob":
			return nil
		case "read_file":
			return wrapped{t}
		}
		return t
	}
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config, Tool: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	check := func(when string) {
		if _, ok := tb.Config().Registry.Get("glob"); ok {
			t.Errorf("%s: glob was left out, yet registered", when)
		}
		if rf, ok := tb.Config().Registry.Get("read_file"); !ok {
			t.Errorf("%s: read_file missing", when)
		} else if _, ok := rf.(wrapped); !ok {
			t.Errorf("%s: read_file is %T, want the adapted tool", when, rf)
		}
		if _, ok := tb.Config().Registry.Get("replace"); !ok {
			t.Errorf("%s: replace missing", when)
		}
	}
	check("built")
	if _, err := tb.Reconfigure(parse(t, `{"excludeTools": ["write_file"]}`)); err != nil {
		t.Fatal(err)
	}
	check("reconfigured")
	if _, ok := tb.Config().Registry.Get("write_file"); ok {
		t.Errorf("write_file still enabled after it was excluded")
	}
}

// TestReconfigure: what a new configuration changes, and what it leaves.
func TestReconfigure(t *testing.T) {
	root, config := testutil.Dirs(t, nil, `{"approvalMode": "auto_edit"}`)
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	// A mode set since stays, though nothing else changed.
	tb.SetMode(confirm.ModeYolo)
	policy, registry := tb.Config().Policy, tb.Config().Registry
	r, err := tb.Reconfigure(settings.Settings{})
	if err != nil || r.Policy || r.Registry || r.Mode || len(r.Restart) > 0 {
		t.Fatalf("reconfigure without changes: %+v %v", r, err)
	}
	if tb.Config().Policy != policy || tb.Config().Registry != registry || tb.Config().Policy.Mode() != confirm.ModeYolo {
		t.Errorf("a configuration without changes replaced something")
	}

	// The settings' mode changes: it is followed, on a policy of the same rules.
	r, err = tb.Reconfigure(parse(t, `{"approvalMode": "plan"}`))
	if err != nil || !r.Mode || r.Policy || tb.Config().Policy.Mode() != confirm.ModePlan {
		t.Errorf("mode change: %+v %v, mode %s", r, err, tb.Config().Policy.Mode())
	}
	policy = tb.Config().Policy

	// New rules: a new policy, in the mode in force.
	r, err = tb.Reconfigure(parse(t, `{"approvalMode": "plan", "policy": {"rules": [{"toolName": "run_shell_command", "decision": "deny"}]}}`))
	if err != nil || !r.Policy || r.Mode || tb.Config().Policy == policy || tb.Config().Policy.Mode() != confirm.ModePlan {
		t.Errorf("rules change: %+v %v", r, err)
	}

	// The tool selection: a new registry. Settings read only at start: named.
	r, err = tb.Reconfigure(parse(t, `{"approvalMode": "plan", "policy": {"rules": [{"toolName": "run_shell_command", "decision": "deny"}]},
		"excludeTools": ["glob"], "tools": {"useRipgrep": false, "shell": {"inactivityTimeout": "1m"}}}`))
	if err != nil || !r.Registry || r.Policy || tb.Config().Registry == registry {
		t.Errorf("tool selection change: %+v %v", r, err)
	}
	if _, ok := tb.Config().Registry.Get("glob"); ok {
		t.Errorf("glob still enabled")
	}
	if !slices.Equal(r.Restart, []string{"tools.shell.inactivityTimeout", "tools.useRipgrep"}) {
		t.Errorf("restart %v", r.Restart)
	}

	// Invalid: an error, and nothing changes.
	before, beforePolicy, beforeRegistry := tb.Config().Settings, tb.Config().Policy, tb.Config().Registry
	for _, bad := range []string{
		`{"approvalMode": "sometimes"}`,
		`{"tools": {"shell": {"inactivityTimeout": "-1s"}}}`,
		`{"policy": {"rules": [{"toolName": "x", "decision": "allow", "commandRegex": "("}]}}`,
	} {
		if _, err := tb.Reconfigure(parse(t, bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
	if tb.Config().Policy != beforePolicy || tb.Config().Registry != beforeRegistry || tb.Config().Settings.ApprovalMode != before.ApprovalMode ||
		tb.Config().Policy.Mode() != confirm.ModePlan {
		t.Errorf("a rejected configuration changed something")
	}

	// The settings files are read again.
	testutil.WriteFiles(t, root, map[string]string{".agentls/settings.json": `{"excludeTools": ["replace"]}`})
	if _, err := tb.Reconfigure(settings.Settings{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tb.Config().Registry.Get("replace"); ok {
		t.Errorf("the workspace file written since was not read")
	}
	testutil.WriteFiles(t, config, map[string]string{"settings.json": `{not json`})
	if _, err := tb.Reconfigure(settings.Settings{}); err == nil {
		t.Errorf("an unreadable settings file was accepted")
	}
}

// TestTrust: the trust file in the configuration directory decides whether the first
// root's settings may loosen consent; trusting the folder takes effect on Reconfigure;
// a damaged trust file is an error, not an untrusted or trusted workspace.
func TestTrust(t *testing.T) {
	t.Setenv(trust.EnvVar, "")
	root, config := testutil.Dirs(t, map[string]string{
		".agentls/settings.json": `{"approvalMode": "yolo"}`,
	}, "")
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Config().Trust.Trusted || tb.Config().Policy.Mode() != confirm.ModeDefault {
		t.Fatalf("untrusted workspace: trust %+v, mode %s; want untrusted, default", tb.Config().Trust, tb.Config().Policy.Mode())
	}

	store, err := trust.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Set(root, trust.Folder); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(); err != nil {
		t.Fatal(err)
	}
	r, err := tb.Reconfigure(settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Mode || !tb.Config().Trust.Trusted || tb.Config().Policy.Mode() != confirm.ModeYolo {
		t.Errorf("after trusting: %+v, trust %+v, mode %s; want the workspace's yolo", r, tb.Config().Trust, tb.Config().Policy.Mode())
	}
	tb2, err := New(Options{Roots: []string{root}, ConfigDir: config})
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Close()
	if tb2.Config().Policy.Mode() != confirm.ModeYolo {
		t.Errorf("trusted workspace: mode %s, want yolo", tb2.Config().Policy.Mode())
	}

	testutil.WriteFiles(t, config, map[string]string{trust.FileName: `{not json`})
	if _, err := New(Options{Roots: []string{root}, ConfigDir: config}); err == nil || !strings.Contains(err.Error(), trust.FileName) {
		t.Errorf("damaged trust file: error %v, want one naming it", err)
	}
	if _, err := tb.Reconfigure(settings.Settings{}); err == nil {
		t.Errorf("damaged trust file accepted on Reconfigure")
	}
	if !tb.Config().Trust.Trusted || tb.Config().Policy.Mode() != confirm.ModeYolo {
		t.Errorf("a failed Reconfigure changed the toolbox: trust %+v, mode %s", tb.Config().Trust, tb.Config().Policy.Mode())
	}
}

// parse decodes s as a settings file would be.
func parse(t *testing.T, s string) settings.Settings {
	t.Helper()
	var out settings.Settings
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
