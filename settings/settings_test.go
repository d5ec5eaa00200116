package settings

import (
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
			l, err := Load(cfg, root)
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
