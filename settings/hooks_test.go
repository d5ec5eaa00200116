package settings

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHooks: hooks are read in Gemini CLI's format from Gemini CLI's user file,
// agentls's and a trusted workspace's, every file's running, earlier files first; an
// untrusted workspace's hooks and hooksConfig are ignored, and said to be.
func TestHooks(t *testing.T) {
	hook := func(cmd string) string {
		return `{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"` + cmd + `","timeout":500}]}]}`
	}
	for _, tt := range []struct {
		name        string
		trusted     bool
		ws          string
		wantCmds    []string
		wantOn      bool
		wantIgnored []string
	}{
		{"untrusted", false, `{"hooks":` + hook("ws") + `,"hooksConfig":{"enabled":false}}`, []string{"gemini", "user"}, true,
			[]string{"hooks.BeforeTool ignored", "hooksConfig ignored"}},
		{"trusted", true, `{"hooks":` + hook("ws") + `}`, []string{"gemini", "user", "ws"}, true, nil},
		{"trusted turns them off", true, `{"hooksConfig":{"enabled":false}}`, []string{"gemini", "user"}, false, nil},
		{"older spelling", true, `{"hooks":{"enabled":false}}`, []string{"gemini", "user"}, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config, root, gemini := filepath.Join(dir, "config"), filepath.Join(dir, "ws"), filepath.Join(dir, "gemini")
			write(t, filepath.Join(gemini, "settings.json"), `{"hooks":`+hook("gemini")+`}`)
			write(t, filepath.Join(config, "settings.json"), `{"hooks":`+hook("user")+`,"hooksConfig":{"disabled":["x"]}}`)
			write(t, filepath.Join(root, ".gemini", "settings.json"), tt.ws)
			l, err := LoadWith(config, root, Options{Trusted: tt.trusted, GeminiDir: gemini})
			if err != nil {
				t.Fatal(err)
			}
			var cmds []string
			for _, g := range l.Settings.Hooks.Events["BeforeTool"] {
				if g.Matcher != "run_shell_command" || g.Hooks[0].Timeout != 500 || g.Source == "" {
					t.Errorf("group %+v", g)
				}
				cmds = append(cmds, g.Hooks[0].Command)
			}
			if !slices.Equal(cmds, tt.wantCmds) || l.Settings.HooksOn() != tt.wantOn || !slices.Equal(l.Settings.HooksDisabled(), []string{"x"}) {
				t.Errorf("commands %v, on %t, disabled %v", cmds, l.Settings.HooksOn(), l.Settings.HooksDisabled())
			}
			ignored := strings.Join(l.Ignored, "\n")
			for _, want := range tt.wantIgnored {
				if !strings.Contains(ignored, want) || !strings.Contains(ignored, "agentls trust") {
					t.Errorf("ignored %q, want %q", ignored, want)
				}
			}
			if len(tt.wantIgnored) == 0 && ignored != "" {
				t.Errorf("ignored %q", ignored)
			}
		})
	}
}

// TestHooksBadFormat: a hooks entry that is not Gemini CLI's format is an error
// naming it.
func TestHooksBadFormat(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "settings.json"), `{"hooks":{"BeforeTool":{"command":"x"}}}`)
	if _, err := LoadWith(dir, "", Options{GeminiDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "hooks.BeforeTool") {
		t.Errorf("error %v", err)
	}
}
