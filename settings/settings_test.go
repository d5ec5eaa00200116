package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name        string
		user, ws    string
		wantMode    string
		wantCore    []string
		wantExclude []string
		wantRules   []confirm.Decision
		trusted     bool
		wantIgnored int
		wantErr     string
	}{
		{name: "nothing"},
		{name: "user only", user: `{"approvalMode":"yolo","coreTools":["read_file"]}`, wantMode: "yolo", wantCore: []string{"read_file"}},
		{
			name:        "workspace cannot loosen",
			user:        `{"approvalMode":"default"}`,
			ws:          `{"approvalMode":"yolo","policy":{"rules":[{"toolName":"*","decision":"allow"},{"toolName":"run_shell_command","decision":"deny"}]},"excludeTools":["write_file"]}`,
			wantMode:    "default",
			wantExclude: []string{"write_file"},
			wantRules:   []confirm.Decision{confirm.Deny},
			wantIgnored: 2,
		},
		{
			name:        "trusted workspace may loosen and still tightens",
			user:        `{"approvalMode":"default"}`,
			ws:          `{"approvalMode":"yolo","policy":{"rules":[{"toolName":"*","decision":"allow"},{"toolName":"run_shell_command","decision":"deny"}]},"excludeTools":["write_file"]}`,
			trusted:     true,
			wantMode:    "yolo",
			wantExclude: []string{"write_file"},
			wantRules:   []confirm.Decision{confirm.Allow, confirm.Deny},
		},
		{
			name:     "workspace core narrows user core",
			user:     `{"coreTools":["read_file","run_shell_command(git)"]}`,
			ws:       `{"tools":{"core":["run_shell_command","write_file"]}}`,
			wantCore: []string{"run_shell_command(git)"},
		},
		{name: "workspace core alone", ws: `{"coreTools":["glob"]}`, wantCore: []string{"glob"}},
		{name: "broken user file", user: `{"coreTools":`, wantErr: "settings.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, root := t.TempDir(), t.TempDir()
			if tt.user != "" {
				write(t, filepath.Join(cfg, "settings.json"), tt.user)
			}
			if tt.ws != "" {
				write(t, filepath.Join(root, ".agentls", "settings.json"), tt.ws)
			}
			l, err := LoadWith(cfg, root, Options{Trusted: tt.trusted, GeminiDir: t.TempDir()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := l.Settings
			if s.ApprovalMode != tt.wantMode {
				t.Errorf("mode = %q, want %q", s.ApprovalMode, tt.wantMode)
			}
			if got := s.Core(); !reflect.DeepEqual(got, tt.wantCore) && (len(got) > 0 || len(tt.wantCore) > 0) {
				t.Errorf("core = %q, want %q", got, tt.wantCore)
			}
			if got := s.Exclude(); !reflect.DeepEqual(got, tt.wantExclude) && (len(got) > 0 || len(tt.wantExclude) > 0) {
				t.Errorf("exclude = %q, want %q", got, tt.wantExclude)
			}
			var rules []confirm.Decision
			for _, r := range s.Policy.Rules {
				rules = append(rules, r.Decision)
			}
			if !reflect.DeepEqual(rules, tt.wantRules) {
				t.Errorf("rules = %v, want %v", rules, tt.wantRules)
			}
			if len(l.Ignored) != tt.wantIgnored {
				t.Errorf("ignored = %q, want %d entries", l.Ignored, tt.wantIgnored)
			}
			for _, why := range l.Ignored {
				if !strings.Contains(why, "agentls trust "+root) {
					t.Errorf("ignored %q does not say how to trust the folder", why)
				}
			}
			if l.Trusted != tt.trusted {
				t.Errorf("Trusted = %v, want %v", l.Trusted, tt.trusted)
			}
		})
	}
}

func TestShellTimeout(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "90s": true, "5m": true, "-1s": false, "soon": false} {
		s := Settings{Tools: ToolSettings{Shell: ShellSettings{InactivityTimeout: in}}}
		if _, err := s.ShellTimeout(); (err == nil) != ok {
			t.Errorf("ShellTimeout(%q) error = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestMerge(t *testing.T) {
	no, yes := false, true
	base := Settings{
		CoreTools:    []string{"read_file", "glob"},
		ExcludeTools: []string{"write_file"},
		ApprovalMode: "default",
		Policy:       PolicySettings{Rules: []confirm.Rule{{ToolName: "run_shell_command", Decision: confirm.Deny}}},
		Tools:        ToolSettings{Ripgrep: &yes, Shell: ShellSettings{InactivityTimeout: "1m"}},
	}
	tests := []struct {
		name string
		over Settings
		want Settings
	}{
		{name: "nothing over", over: Settings{}, want: base},
		{
			name: "scalars replace",
			over: Settings{ApprovalMode: "yolo", Tools: ToolSettings{Ripgrep: &no, Shell: ShellSettings{InactivityTimeout: "5m"}}},
			want: Settings{
				CoreTools: base.CoreTools, ExcludeTools: base.ExcludeTools, ApprovalMode: "yolo", Policy: base.Policy,
				Tools: ToolSettings{Ripgrep: &no, Shell: ShellSettings{InactivityTimeout: "5m"}},
			},
		},
		{
			name: "an enable list replaces, even empty",
			over: Settings{Tools: ToolSettings{Core: []string{}}},
			want: Settings{
				CoreTools: nil, ExcludeTools: base.ExcludeTools, ApprovalMode: "default", Policy: base.Policy,
				Tools: ToolSettings{Core: []string{}, Ripgrep: &yes, Shell: base.Tools.Shell},
			},
		},
		{
			name: "excludes and rules accumulate",
			over: Settings{ExcludeTools: []string{"replace"}, Policy: PolicySettings{Rules: []confirm.Rule{{ToolName: "glob", Decision: confirm.Allow}}}},
			want: Settings{
				CoreTools: base.CoreTools, ExcludeTools: []string{"write_file", "replace"}, ApprovalMode: "default",
				Policy: PolicySettings{Rules: []confirm.Rule{{ToolName: "run_shell_command", Decision: confirm.Deny}, {ToolName: "glob", Decision: confirm.Allow}}},
				Tools:  base.Tools,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprintf("%+v %+v", base, tt.over)
			got := Merge(base, tt.over)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge =\n%+v\nwant\n%+v", got, tt.want)
			}
			if after := fmt.Sprintf("%+v %+v", base, tt.over); after != before {
				t.Errorf("Merge modified its arguments:\n%s\n%s", before, after)
			}
			got.ExcludeTools = append(got.ExcludeTools[:0], "changed")
			if len(base.ExcludeTools) > 0 && base.ExcludeTools[0] != "write_file" {
				t.Errorf("the result shares its exclude list with base")
			}
		})
	}
}

func TestLoadWithOverrides(t *testing.T) {
	cfg, root := t.TempDir(), t.TempDir()
	write(t, filepath.Join(cfg, "settings.json"), `{"approvalMode":"auto_edit","coreTools":["read_file"]}`)
	write(t, filepath.Join(root, ".agentls", "settings.json"), `{"excludeTools":["glob"],"policy":{"rules":[{"toolName":"*","decision":"allow"}]}}`)
	over := Settings{ApprovalMode: "yolo", CoreTools: []string{"glob", "read_file"}}
	l, err := LoadWith(cfg, root, Options{Overrides: over})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Settings
	if s.ApprovalMode != "yolo" {
		t.Errorf("mode = %q, want the override yolo (overrides are user settings)", s.ApprovalMode)
	}
	if !reflect.DeepEqual(s.Core(), []string{"glob", "read_file"}) {
		t.Errorf("core = %q, want the override's list", s.Core())
	}
	if !reflect.DeepEqual(s.Exclude(), []string{"glob"}) || len(s.Policy.Rules) != 0 || len(l.Ignored) != 1 {
		t.Errorf("the workspace file must still tighten and not loosen: exclude %q, rules %v, ignored %q", s.Exclude(), s.Policy.Rules, l.Ignored)
	}
}

func TestWorkspaceToolSourcesNeedTrust(t *testing.T) {
	const ws = `{
		"model": "gemini-2.5-pro",
		"mcpServers": {"evil": {"command": "touch", "args": ["marker"]}, "remote": {"url": "http://example.invalid/mcp", "headers": {"Authorization": "Bearer $TOKEN"}}},
		"tools": {"discoveryCommand": "./discover", "callCommand": "./call"},
		"provider": {"baseUrl": "http://example.invalid"},
		"web": {"allowPrivateAddresses": true}
	}`
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprint("trusted=", trusted), func(t *testing.T) {
			cfg, root := t.TempDir(), t.TempDir()
			write(t, filepath.Join(root, ".agentls", "settings.json"), ws)
			l, err := LoadWith(cfg, root, Options{Trusted: trusted, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			s := l.Settings
			if s.Model.Name != "gemini-2.5-pro" {
				t.Errorf("model = %q; the model's name needs no trust", s.Model.Name)
			}
			discover, call := s.Discovery()
			loaded := len(s.MCPServers) == 2 && discover == "./discover" && call == "./call" &&
				s.Provider.BaseURL != "" && s.Web.AllowPrivateAddresses
			empty := len(s.MCPServers) == 0 && discover == "" && call == "" &&
				s.Provider == (ProviderSettings{}) && !s.Web.AllowPrivateAddresses
			if trusted && !loaded || !trusted && !empty {
				t.Errorf("trusted=%v: settings %+v", trusted, s)
			}
			wantSkipped := []string{"mcpServers.evil", "mcpServers.remote", "tools.discoveryCommand", "tools.callCommand"}
			if trusted {
				wantSkipped = nil
			}
			if len(l.UntrustedTools) != len(wantSkipped) {
				t.Fatalf("UntrustedTools = %q, want %q", l.UntrustedTools, wantSkipped)
			}
			for i, w := range wantSkipped {
				if !strings.HasPrefix(l.UntrustedTools[i], w+" in ") {
					t.Errorf("UntrustedTools[%d] = %q, want %q in …", i, l.UntrustedTools[i], w)
				}
			}
			if !trusted && len(l.Ignored) != 6 {
				t.Errorf("Ignored = %q, want the four tool sources, provider and web", l.Ignored)
			}
			for _, why := range l.Ignored {
				if !strings.Contains(why, "agentls trust "+root) {
					t.Errorf("ignored setting %q does not say how to trust the folder", why)
				}
			}
		})
	}
}

func TestGeminiCLISettings(t *testing.T) {
	cfg, gemini := t.TempDir(), t.TempDir()
	write(t, filepath.Join(gemini, "settings.json"), `{
		"approvalMode": "yolo",
		"model": {"name": "gemini-2.5-pro", "chatCompression": {"contextPercentageThreshold": 0.5}},
		"mcpServers": {"fs": {"command": "npx", "args": ["server"]}, "both": {"command": "gemini-version"}},
		"tools": {"discoveryCommand": "bin/discover", "shell": {"enableInteractiveShell": true}},
		"excludeTools": ["web_fetch"]
	}`)
	write(t, filepath.Join(cfg, "settings.json"), `{"mcpServers": {"both": {"command": "agentls-version"}}, "model": "gemini-2.5-flash"}`)
	l, err := LoadWith(cfg, "", Options{GeminiDir: gemini})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Settings
	if s.ApprovalMode != "" {
		t.Errorf("approvalMode %q taken from Gemini CLI's settings, which share only some keys", s.ApprovalMode)
	}
	if s.Model.Name != "gemini-2.5-flash" || s.MCPServers["fs"].Command != "npx" || s.MCPServers["both"].Command != "agentls-version" {
		t.Errorf("agentls's file should override Gemini CLI's per key: %+v", s)
	}
	if d, _ := s.Discovery(); d != "bin/discover" || !reflect.DeepEqual(s.Exclude(), []string{"web_fetch"}) {
		t.Errorf("shared keys lost: discovery %q, exclude %q", d, s.Exclude())
	}

	write(t, filepath.Join(gemini, "settings.json"), "{\n  // Gemini CLI allows comments\n}")
	l, err = LoadWith(cfg, "", Options{GeminiDir: gemini})
	if err != nil {
		t.Fatalf("a Gemini CLI file agentls cannot parse must not stop it: %v", err)
	}
	if len(l.Ignored) != 1 || !strings.Contains(l.Ignored[0], gemini) {
		t.Errorf("Ignored = %q, want a note naming the unreadable file", l.Ignored)
	}
}

// TestPassEnvNeedsTrust: tools.shell.passEnv hands secrets to commands, so a
// workspace's file sets it only when the folder is trusted; otherwise it is ignored and
// reported. The user's list and a trusted workspace's add up.
func TestPassEnvNeedsTrust(t *testing.T) {
	tests := []struct {
		name     string
		user, ws string
		trusted  bool
		want     []string
		ignored  bool
	}{
		{"user", `{"tools": {"shell": {"passEnv": ["GEMINI_API_KEY"]}}}`, "", false, []string{"GEMINI_API_KEY"}, false},
		{"untrusted workspace", `{"tools": {"shell": {"passEnv": ["GEMINI_API_KEY"]}}}`,
			`{"tools": {"shell": {"passEnv": ["OPENAI_API_KEY"], "inactivityTimeout": "1m"}}}`, false, []string{"GEMINI_API_KEY"}, true},
		{"trusted workspace", `{"tools": {"shell": {"passEnv": ["GEMINI_API_KEY"]}}}`,
			`{"tools": {"shell": {"passEnv": ["OPENAI_API_KEY"]}}}`, true, []string{"GEMINI_API_KEY", "OPENAI_API_KEY"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, root := t.TempDir(), t.TempDir()
			write(t, filepath.Join(cfg, "settings.json"), tt.user)
			if tt.ws != "" {
				write(t, filepath.Join(root, ".gemini", "settings.json"), tt.ws)
			}
			l, err := LoadWith(cfg, root, Options{Trusted: tt.trusted, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Settings.Tools.Shell.PassEnv; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("passEnv = %q, want %q", got, tt.want)
			}
			var reported bool
			for _, why := range l.Ignored {
				reported = reported || strings.Contains(why, "tools.shell.passEnv ignored") && strings.Contains(why, "agentls trust "+root)
			}
			if reported != tt.ignored {
				t.Errorf("Ignored = %q; passEnv reported %v, want %v", l.Ignored, reported, tt.ignored)
			}
			if tt.ws != "" && !tt.trusted && l.Settings.Tools.Shell.InactivityTimeout != "1m" {
				t.Errorf("an untrusted workspace's other shell settings were lost: %+v", l.Settings.Tools.Shell)
			}
		})
	}
}

// TestWorkspaceFilesCannotBeChanged checks that a caller changing the list it got does
// not change which files Load reads.
func TestWorkspaceFilesCannotBeChanged(t *testing.T) {
	files := WorkspaceFiles()
	want := []string{".gemini/settings.json", ".agentls/settings.json"}
	if !reflect.DeepEqual(files, want) {
		t.Fatalf("WorkspaceFiles() = %q, want %q", files, want)
	}
	files[0] = "elsewhere.json"
	if got := WorkspaceFiles(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a caller changed its copy, WorkspaceFiles() = %q, want %q", got, want)
	}
}

// TestAgentsNeedTrust: a sub-agent's instructions steer the model, so a workspace's file
// defines agents only when the folder is trusted; otherwise they are ignored and
// reported. The user's agents and a trusted workspace's add up, the workspace's
// winning on a name both define.
func TestAgentsNeedTrust(t *testing.T) {
	user := `{"agents": {"a": {"description": "user's a"}, "b": {"description": "user's b"}}}`
	ws := `{"agents": {"b": {"description": "workspace's b", "tools": ["read_file"]}, "c": {"description": "workspace's c"}}}`
	tests := []struct {
		name    string
		trusted bool
		want    map[string]string
		ignored bool
	}{
		{"untrusted workspace", false, map[string]string{"a": "user's a", "b": "user's b"}, true},
		{"trusted workspace", true, map[string]string{"a": "user's a", "b": "workspace's b", "c": "workspace's c"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, root := t.TempDir(), t.TempDir()
			write(t, filepath.Join(cfg, "settings.json"), user)
			write(t, filepath.Join(root, ".gemini", "settings.json"), ws)
			l, err := LoadWith(cfg, root, Options{Trusted: tt.trusted, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, a := range l.Settings.Agents {
				got[name] = a.Description
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("agents = %v, want %v", got, tt.want)
			}
			var reported bool
			for _, why := range l.Ignored {
				reported = reported || strings.Contains(why, "agents.c")
			}
			if reported != tt.ignored {
				t.Errorf("Ignored = %q; agents reported %v, want %v", l.Ignored, reported, tt.ignored)
			}
		})
	}
}
