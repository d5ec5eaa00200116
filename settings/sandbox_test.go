package settings

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// TestSandboxSettings: the boolean, string and object forms; a workspace can only
// tighten the user's, trusted or not; bad values are errors naming the key.
func TestSandboxSettings(t *testing.T) {
	tests := []struct {
		name     string
		user, ws string
		trusted  bool
		want     sandbox.Config
		ignored  []string
		err      string
	}{
		{"default", `{}`, "", false, sandbox.Config{}, nil, ""},
		{"gemini false", `{"tools": {"sandbox": false}}`, "", false, sandbox.Config{Enabled: "false"}, nil, ""},
		{"gemini docker", `{"tools": {"sandbox": "docker"}}`, "", false, sandbox.Config{Enabled: "true"}, nil, ""},
		{"object", `{"tools": {"sandbox": {"enabled": "auto", "network": true, "writablePaths": ["~/data"], "autoAllow": true}}}`, "", false,
			sandbox.Config{Enabled: "auto", Network: true, WritablePaths: []string{"~/data"}, AutoAllow: true}, nil, ""},
		{"workspace tightens", `{"tools": {"sandbox": {"enabled": false, "network": true, "autoAllow": true}}}`,
			`{"tools": {"sandbox": {"enabled": true, "network": false, "autoAllow": false, "hiddenPaths": ["secrets"]}}}`, false,
			sandbox.Config{Enabled: "true", HiddenPaths: []string{"secrets"}}, nil, ""},
		{"trusted workspace cannot loosen", `{"tools": {"sandbox": {"network": false}}}`,
			`{"tools": {"sandbox": {"enabled": false, "network": true, "autoAllow": true, "writablePaths": ["/"]}}}`, true,
			sandbox.Config{}, []string{"tools.sandbox.enabled false", "tools.sandbox.network true", "tools.sandbox.autoAllow true", "tools.sandbox.writablePaths"}, ""},
		{"bad enabled", `{"tools": {"sandbox": {"enabled": "sometimes"}}}`, "", false, sandbox.Config{}, nil, `tools.sandbox.enabled: "sometimes" is not one of`},
		{"bad string", `{"tools": {"sandbox": "maybe"}}`, "", false, sandbox.Config{}, nil, `tools.sandbox: "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, root := t.TempDir(), t.TempDir()
			write(t, filepath.Join(cfg, "settings.json"), tt.user)
			if tt.ws != "" {
				write(t, filepath.Join(root, ".gemini", "settings.json"), tt.ws)
			}
			l, err := LoadWith(cfg, root, Options{Trusted: tt.trusted, GeminiDir: t.TempDir()})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := l.Settings.Tools.Sandbox.Config()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config %+v, want %+v", got, tt.want)
			}
			for _, what := range tt.ignored {
				found := false
				for _, why := range l.Ignored {
					found = found || strings.Contains(why, what+" ignored")
				}
				if !found {
					t.Errorf("%q not reported as ignored: %q", what, l.Ignored)
				}
			}
		})
	}
}
