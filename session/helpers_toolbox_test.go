package session

import (
	"encoding/json"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// dirs returns a workspace root holding files and a user configuration directory
// holding the user's settings (none when user is empty).
func dirs(t *testing.T, files map[string]string, user string) (root, config string) {
	t.Helper()
	_, root = testutil.Workspace(t, files)
	config = t.TempDir()
	if user != "" {
		testutil.WriteFiles(t, config, map[string]string{"settings.json": user})
	}
	return root, config
}

func names(r *tools.Registry) []string {
	var out []string
	for _, info := range r.List() {
		out = append(out, info.Name)
	}
	return out
}

func parse(t *testing.T, s string) settings.Settings {
	t.Helper()
	var out settings.Settings
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
