package settings

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
)

// TestPolicyRules: each Gemini CLI policy rule maps onto agentls's rules or is refused
// whole, with the reason.
func TestPolicyRules(t *testing.T) {
	shell := "run_shell_command"
	tests := []struct {
		name    string
		rule    string
		want    []confirm.Rule
		wantErr string
	}{
		{"deny prefix", `decision = "deny"
commandPrefix = "rm -rf"
priority = 100
denyMessage = "Deletion is permanent"`, []confirm.Rule{{ToolName: shell, Decision: confirm.Deny, Priority: 100, CommandPrefix: []string{"rm -rf"}, DenyMessage: "Deletion is permanent"}}, ""},
		{"ask prefixes", `toolName = "run_shell_command"
decision = "ask_user"
commandPrefix = ["git push", "git reset"]`, []confirm.Rule{{ToolName: shell, Decision: confirm.Ask, CommandPrefix: []string{"git push", "git reset"}}}, ""},
		{"regex", `decision = "deny"
commandRegex = "curl .*\\|"`, []confirm.Rule{{ToolName: shell, Decision: confirm.Deny, CommandRegex: `curl .*\|`}}, ""},
		{"tool list", `toolName = ["write_file", "replace"]
decision = "ask_user"
argsPattern = "secret"`, []confirm.Rule{{ToolName: "write_file", Decision: confirm.Ask, ArgsPattern: "secret"}, {ToolName: "replace", Decision: confirm.Ask, ArgsPattern: "secret"}}, ""},
		{"mcp server", `mcpName = "my*server"
decision = "deny"`, []confirm.Rule{{ToolName: `my\*server__*`, Decision: confirm.Deny}}, ""},
		{"mcp tool", `mcpName = "srv"
toolName = "dangerous_tool"
decision = "ask_user"`, []confirm.Rule{{ToolName: "srv__dangerous_tool", Decision: confirm.Ask}}, ""},
		{"every tool", `decision = "ask_user"`, []confirm.Rule{{Decision: confirm.Ask}}, ""},
		{"allowRedirection on deny changes nothing", `decision = "deny"
commandPrefix = "dd"
allowRedirection = true`, []confirm.Rule{{ToolName: shell, Decision: confirm.Deny, CommandPrefix: []string{"dd"}}}, ""},

		{"allow", `toolName = "read_file"
decision = "allow"`, nil, "an extension may not allow"},
		{"unknown decision", `decision = "maybe"`, nil, `decision "maybe"`},
		{"modes", `decision = "deny"
toolName = "write_file"
modes = ["yolo"]`, nil, "modes is not supported"},
		{"interactive", `decision = "deny"
interactive = false`, nil, "interactive is not supported"},
		{"subagent", `decision = "deny"
subagent = "x"`, nil, "subagent is not supported"},
		{"annotations", `decision = "deny"
toolAnnotations = { readOnlyHint = false }`, nil, "toolAnnotations is not supported"},
		{"unknown field", `decision = "deny"
toolname = "x"`, nil, `unknown field "toolname"`},
		{"priority range", `decision = "deny"
priority = 1000`, nil, "priority 1000"},
		{"prefix and regex", `decision = "deny"
commandPrefix = "a"
commandRegex = "b"`, nil, "cannot be used together"},
		{"prefix on another tool", `decision = "deny"
toolName = "write_file"
commandPrefix = "a"`, nil, `apply only to toolName "run_shell_command"`},
		{"prefix with args", `decision = "deny"
commandPrefix = "a"
argsPattern = "b"`, nil, "cannot be used with argsPattern"},
		{"Gemini CLI's MCP names", `decision = "deny"
toolName = "mcp_srv_*"`, nil, "name the server with mcpName"},
		{"JavaScript regex", `decision = "deny"
argsPattern = "(?=x)"`, nil, "argsPattern: error parsing regexp"},
		{"bad glob", `decision = "deny"
toolName = "a["`, nil, "not a valid glob"},
		{"empty prefix", `decision = "deny"
commandPrefix = " "`, nil, "empty prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "p.toml")
			testutil.WriteFiles(t, dir, map[string]string{"p.toml": "[[rule]]\n" + tt.rule + "\n"})
			rules, warnings := readPolicyFile(policyTier{confirm.SourceExtension, "extension ext"}, file)
			if tt.wantErr != "" {
				if len(rules) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "rule 1 refused: ") || !strings.Contains(warnings[0], tt.wantErr) {
					t.Errorf("rules %+v, warnings %q; want none and a warning with %q", rules, warnings, tt.wantErr)
				}
				return
			}
			if len(warnings) != 0 {
				t.Fatalf("warnings %q", warnings)
			}
			for i := range tt.want {
				tt.want[i].Source, tt.want[i].Origin = confirm.SourceExtension, "extension ext (p.toml)"
			}
			got, _ := json.Marshal(rules)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) || len(rules) != len(tt.want) || rules[0].Source != confirm.SourceExtension || rules[0].Origin != tt.want[0].Origin {
				t.Errorf("rules\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestPolicyFiles: a file that is not TOML applies no rule; safety checkers and other
// tables are reported; the good rules of a file apply beside a refused one.
func TestPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"bad.toml": "[[rule]\n",
		"mixed.toml": `[[rule]]
decision = "deny"
commandPrefix = "rm"

[[rule]]
decision = "allow"
toolName = "read_file"

[[safety_checker]]
toolName = "write_data"
priority = 200
[safety_checker.checker]
type = "in-process"
name = "allowed-path"
`,
	})
	rules, warnings := readPolicies("ext", []string{filepath.Join(dir, "bad.toml"), filepath.Join(dir, "mixed.toml")})
	all := strings.Join(warnings, "\n")
	if len(rules) != 1 || rules[0].CommandPrefix[0] != "rm" || len(warnings) != 3 ||
		!strings.Contains(all, "bad.toml: not read") || !strings.Contains(all, "1 safety checker(s) ignored") ||
		!strings.Contains(all, "mixed.toml: rule 2 refused") {
		t.Errorf("rules %+v\nwarnings:\n%s", rules, all)
	}
}

// TestExtensionHooksAndPolicies: an enabled extension's hooks run after the settings'
// hooks of the same event, its variables substituted, and its policy rules join the
// settings' below the user's; a disabled extension brings neither; what was refused
// is on the extension and in Ignored.
func TestExtensionHooksAndPolicies(t *testing.T) {
	home, cfg, root := t.TempDir(), t.TempDir(), t.TempDir()
	gemini := filepath.Join(home, ".gemini")
	testutil.WriteFiles(t, gemini, map[string]string{
		"settings.json":                          `{"hooks": {"BeforeTool": [{"matcher": "read_file", "hooks": [{"type": "command", "command": "user-hook"}]}]}}`,
		"extensions/guard/gemini-extension.json": `{"name": "guard", "version": "1.0.0"}`,
		"extensions/guard/hooks/hooks.json": `{"hooks": {
			"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "${extensionPath}${/}check.sh", "name": "guard-check"}]}],
			"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}`,
		"extensions/guard/policies/rules.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm"
decision = "deny"

[[rule]]
toolName = "run_shell_command"
decision = "allow"
`,
		"extensions/off/gemini-extension.json":    `{"name": "off"}`,
		"extensions/off/hooks/hooks.json":         `{"hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "off-hook"}]}]}}`,
		"extensions/off/policies/p.toml":          "[[rule]]\ndecision = \"deny\"\n",
		"extensions/broken/gemini-extension.json": `{"name": "broken"}`,
		"extensions/broken/hooks/hooks.json":      `{"BeforeTool": []}`,
		"extensions/extension-enablement.json":    `{"off": {"overrides": ["!` + filepath.ToSlash(root) + `/"]}}`,
	})
	l, err := LoadWith(cfg, root, Options{GeminiDir: gemini})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Settings
	before := s.Hooks.Events["BeforeTool"]
	if len(before) != 2 || before[0].Hooks[0].Command != "user-hook" ||
		before[1].Hooks[0].Command != filepath.Join(gemini, "extensions", "guard", "check.sh") ||
		before[1].Source != filepath.Join(gemini, "extensions", "guard", "hooks", "hooks.json") {
		t.Errorf("BeforeTool hooks %+v", before)
	}
	if len(s.Hooks.Events["SessionStart"]) != 1 || len(s.Hooks.Events["AfterTool"]) != 0 {
		t.Errorf("hooks %+v", s.Hooks.Events)
	}
	if len(s.Policy.Rules) != 1 || s.Policy.Rules[0].Source != confirm.SourceExtension || s.Policy.Rules[0].Decision != confirm.Deny {
		t.Errorf("rules %+v", s.Policy.Rules)
	}
	exts := map[string]Extension{}
	for _, e := range s.Extensions {
		exts[e.Name] = e
	}
	g := exts["guard"]
	if strings.Join(g.HookEvents, ",") != "SessionStart,BeforeTool" || g.PolicyRules != 1 || len(g.Warnings) != 1 ||
		!strings.Contains(g.Warnings[0], `an extension may not allow`) {
		t.Errorf("guard %+v", g)
	}
	if b := exts["broken"]; len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `"hooks" must be an object`) {
		t.Errorf("broken %+v", b)
	}
	if !exts["off"].Disabled {
		t.Errorf("off %+v", exts["off"])
	}
	if ignored := strings.Join(l.Ignored, "\n"); !strings.Contains(ignored, "extension guard: ") || !strings.Contains(ignored, "rule 2 refused") {
		t.Errorf("Ignored %q", l.Ignored)
	}
	// The policy the toolbox builds: the extension's deny applies; a user allow outranks it.
	p, err := confirm.NewPolicy(confirm.ModeYolo, s.Policy.Rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	rm := confirm.Call{Tool: "run_shell_command", Details: &confirm.Details{Type: confirm.TypeExecute, Command: "rm -r x"}}
	if v := p.Decide(rm); v.Decision != confirm.Deny || !strings.Contains(v.Reason, "from extension guard (rules.toml)") {
		t.Errorf("rm: %+v", v)
	}
	// A workspace's extension brings its hooks and policies only once the folder is
	// trusted, like its commands and skills.
	testutil.WriteFiles(t, root, map[string]string{
		".gemini/extensions/wsx/gemini-extension.json": `{"name": "wsx"}`,
		".gemini/extensions/wsx/hooks/hooks.json":      `{"hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "ws-hook"}]}]}}`,
		".gemini/extensions/wsx/policies/p.toml":       "[[rule]]\ntoolName = \"write_file\"\ndecision = \"deny\"\n",
	})
	for _, trusted := range []bool{false, true} {
		l, err := LoadWith(cfg, root, Options{GeminiDir: gemini, Trusted: trusted})
		if err != nil {
			t.Fatal(err)
		}
		after, rules := l.Settings.Hooks.Events["AfterTool"], l.Settings.Policy.Rules
		if got := len(after) == 1 && len(rules) == 2; got != trusted {
			t.Errorf("trusted %v: AfterTool hooks %+v, rules %+v", trusted, after, rules)
		}
	}

	user := append([]confirm.Rule{{ToolName: "run_shell_command", Decision: confirm.Allow, CommandPrefix: []string{"rm"}}}, s.Policy.Rules...)
	if p, err = confirm.NewPolicy(confirm.ModeYolo, user, nil); err != nil {
		t.Fatal(err)
	}
	if v := p.Decide(rm); v.Decision != confirm.Allow {
		t.Errorf("rm with the user's allow: %+v", v)
	}
}

// TestGeminiPolicyDirs: ~/.gemini/policies/*.toml are the user's rules, allow rules
// included; a workspace's .gemini/policies/*.toml are the workspace's, which may deny
// or ask anywhere and allow only in a trusted workspace; a refused rule is reported.
func TestGeminiPolicyDirs(t *testing.T) {
	gemini, root, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, gemini, map[string]string{"policies/mine.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "git status"
decision = "allow"
priority = 100

[[rule]]
decision = "deny"
modes = ["yolo"]
`})
	testutil.WriteFiles(t, root, map[string]string{".gemini/policies/team.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "git push"
decision = "ask_user"

[[rule]]
toolName = "read_file"
decision = "allow"
`})
	for _, trusted := range []bool{false, true} {
		l, err := LoadWith(cfg, root, Options{GeminiDir: gemini, Trusted: trusted, DeferAddons: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range l.Settings.Policy.Rules {
			got = append(got, fmt.Sprintf("%s %s %s %v %s", r.Source, r.Decision, r.ToolName, r.CommandPrefix, filepath.Base(r.Origin)))
		}
		want := []string{
			"user allow run_shell_command [git status] mine.toml",
			"workspace ask run_shell_command [git push] team.toml",
		}
		if trusted {
			want = append(want, "workspace allow read_file [] team.toml")
		}
		if !slices.Equal(got, want) {
			t.Errorf("trusted %v: rules\n%s\nwant\n%s", trusted, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		ignored := strings.Join(l.Ignored, "\n")
		if !strings.Contains(ignored, "mine.toml: rule 2 refused: modes is not supported") {
			t.Errorf("trusted %v: the refused rule is not reported: %q", trusted, ignored)
		}
		if untrusted := strings.Contains(ignored, `allow rule for "read_file" ignored`); untrusted == trusted {
			t.Errorf("trusted %v: the workspace's allow rule reported ignored: %v", trusted, untrusted)
		}
	}
}

// TestSystemPolicies: the machine's policy files (the folder of
// GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli, then policies/) are rules of the
// admin tier, allow rules included, and decide over the user's own.
func TestSystemPolicies(t *testing.T) {
	system, gemini, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(system, "settings.json"))
	testutil.WriteFiles(t, system, map[string]string{"policies/company.toml": `[[rule]]
toolName = "web_fetch"
decision = "deny"
denyMessage = "Company policy."

[[rule]]
toolName = "run_shell_command"
commandPrefix = "make"
decision = "allow"
`})
	testutil.WriteFiles(t, gemini, map[string]string{"policies/mine.toml": `[[rule]]
toolName = "web_fetch"
decision = "allow"
priority = 900

[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 900
`})
	l, err := LoadWith(cfg, "", Options{GeminiDir: gemini, DeferAddons: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range l.Settings.Policy.Rules {
		got = append(got, fmt.Sprintf("%s %s %s", r.Source, r.Decision, r.ToolName))
	}
	if want := []string{"user allow web_fetch", "user deny run_shell_command", "admin deny web_fetch", "admin allow run_shell_command"}; !slices.Equal(got, want) {
		t.Fatalf("rules %q, want %q", got, want)
	}
	p, err := confirm.NewPolicy(confirm.ModeDefault, l.Settings.Policy.Rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Decide(confirm.Call{Tool: "web_fetch", Args: []byte(`{}`)}); v.Decision != confirm.Deny || !strings.Contains(v.Reason, "Company policy.") {
		t.Errorf("web_fetch: %+v, want the system's deny over the user's allow", v)
	}
	make := confirm.Call{Tool: "run_shell_command", Details: &confirm.Details{Type: confirm.TypeExecute, Command: "make test"}}
	if v := p.Decide(make); v.Decision != confirm.Allow {
		t.Errorf("make: %+v, want the system's allow over the user's deny", v)
	}
	if !p.DeniesOutright("web_fetch") || p.DeniesOutright("run_shell_command") {
		t.Errorf("refused outright: web_fetch %t, run_shell_command %t", p.DeniesOutright("web_fetch"), p.DeniesOutright("run_shell_command"))
	}
}
