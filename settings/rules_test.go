package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
)

func TestAddRule(t *testing.T) {
	rule := confirm.Rule{ToolName: "run_shell_command", Decision: confirm.Allow, CommandPrefix: []string{"git"}}
	tests := []struct {
		name    string
		before  *string // nil: no file
		want    string
		wantErr string
	}{
		{"no file", nil, `{
  "policy": {
    "rules": [
      {
        "toolName": "run_shell_command",
        "decision": "allow",
        "commandPrefix": [
          "git"
        ]
      }
    ]
  }
}
`, ""},
		{"blank file", ptr("  \n"), "", ""},
		{"other keys kept in order", ptr(`{"model": {"name": "m"}, "policy": {"x": 1, "rules": [{"toolName": "a", "decision": "deny"}]}, "approvalMode": "default"}`),
			`{
  "model": {
    "name": "m"
  },
  "policy": {
    "x": 1,
    "rules": [
      {
        "toolName": "a",
        "decision": "deny"
      },
      {
        "toolName": "run_shell_command",
        "decision": "allow",
        "commandPrefix": [
          "git"
        ]
      }
    ]
  },
  "approvalMode": "default"
}
`, ""},
		{"unparsable file", ptr(`{"policy": `), "", "settings file"},
		{"not an object", ptr(`[1]`), "", "not a JSON object"},
		{"rules not a list", ptr(`{"policy": {"rules": 3}}`), "", "policy.rules"},
		{"text after", ptr(`{} {}`), "", "text after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cfg", "settings.json")
			if tt.before != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tt.before), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			err := settings.AddRule(path, rule)
			got, _ := os.ReadFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("AddRule = %v, want %q", err, tt.wantErr)
				}
				if string(got) != *tt.before {
					t.Fatalf("the file changed after an error: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && string(got) != tt.want {
				t.Errorf("file is\n%s\nwant\n%s", got, tt.want)
			}
			rules, err := settings.FileRules(path)
			if err != nil {
				t.Fatal(err)
			}
			if last := rules[len(rules)-1]; last.ToolName != rule.ToolName || last.Decision != rule.Decision {
				t.Errorf("last rule %+v", last)
			}
			if tt.before != nil {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
					t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestAddRuleInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	err := settings.AddRule(path, confirm.Rule{ToolName: "x", Decision: "perhaps"})
	if err == nil || !strings.Contains(err.Error(), "decision") {
		t.Fatalf("AddRule = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a file was written for an invalid rule")
	}
}

func TestSavedRulesAndRemove(t *testing.T) {
	config, root := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(settings.UserFile(config), `{"model": "m", "policy": {"rules": [{"toolName": "a", "decision": "allow"}, {"toolName": "b", "decision": "deny"}]}}`)
	write(filepath.Join(root, ".gemini", "settings.json"), `{"policy": {"rules": [{"toolName": "c", "decision": "ask"}]}}`)
	write(settings.WorkspaceFile(root), `{"policy": {"rules": [{"toolName": "d", "decision": "deny"}]}}`)
	saved, err := settings.SavedRules(config, root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range saved {
		got = append(got, s.Source.String()+":"+s.Rule.ToolName+":"+filepath.Base(filepath.Dir(s.File)))
	}
	if want := "user:a:" + filepath.Base(config) + " user:b:" + filepath.Base(config) + " workspace:c:.gemini workspace:d:.agentls"; strings.Join(got, " ") != want {
		t.Fatalf("SavedRules = %v, want %s", got, want)
	}
	removed, err := settings.RemoveRule(saved[0].File, saved[0].Index)
	if err != nil || removed.ToolName != "a" {
		t.Fatalf("RemoveRule = %+v, %v", removed, err)
	}
	if _, err := settings.RemoveRule(saved[0].File, 5); err == nil || !strings.Contains(err.Error(), "no rule 6") {
		t.Fatalf("RemoveRule out of range = %v", err)
	}
	if _, err := settings.RemoveRule(filepath.Join(config, "none.json"), 0); err == nil {
		t.Fatal("RemoveRule of a missing file succeeded")
	}
	l, err := settings.LoadWith(config, "", settings.Options{GeminiDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if l.Settings.Model.Name != "m" || len(l.Settings.Policy.Rules) != 1 || l.Settings.Policy.Rules[0].ToolName != "b" {
		t.Fatalf("after removal: %+v", l.Settings)
	}
}

// TestAddRuleThroughLink: a settings file that is a symbolic link is edited where it
// points, and stays a link.
func TestAddRuleThroughLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(`{"model": "m"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := settings.AddRule(link, confirm.Rule{ToolName: "glob", Decision: confirm.Allow}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if rules, err := settings.FileRules(target); err != nil || len(rules) != 1 {
		t.Fatalf("target rules %+v, %v", rules, err)
	}
}

func ptr(s string) *string { return &s }
