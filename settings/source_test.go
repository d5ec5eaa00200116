package settings

import (
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/confirm"
)

// TestRuleSources checks that rules from workspace files are marked as such, trusted or
// not, and the user's are not: the policy lets workspace rules only tighten.
func TestRuleSources(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		cfg, root := t.TempDir(), t.TempDir()
		write(t, filepath.Join(cfg, "settings.json"), `{"policy":{"rules":[{"toolName":"a","decision":"deny"}]}}`)
		write(t, filepath.Join(root, ".gemini", "settings.json"), `{"policy":{"rules":[{"toolName":"b","decision":"ask"}]}}`)
		write(t, filepath.Join(root, ".agentls", "settings.json"), `{"policy":{"rules":[{"toolName":"c","decision":"deny","priority":100}]}}`)
		over := Settings{Policy: PolicySettings{Rules: []confirm.Rule{{ToolName: "d", Decision: confirm.Ask}}}}
		l, err := LoadWith(cfg, root, Options{Overrides: over, Trusted: trusted, GeminiDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]confirm.Source{"a": confirm.SourceUser, "d": confirm.SourceUser, "b": confirm.SourceWorkspace, "c": confirm.SourceWorkspace}
		if len(l.Settings.Policy.Rules) != len(want) {
			t.Fatalf("trusted=%v: rules %+v, want %d", trusted, l.Settings.Policy.Rules, len(want))
		}
		for _, r := range l.Settings.Policy.Rules {
			if r.Source != want[r.ToolName] {
				t.Errorf("trusted=%v: rule %q has source %v, want %v", trusted, r.ToolName, r.Source, want[r.ToolName])
			}
		}
	}
}
