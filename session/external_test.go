package session

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
)

// TestExternalTools: the user's discovery command loads its tools into the registry,
// and a changed command is reported for reloading.
func TestExternalTools(t *testing.T) {
	t.Parallel()
	root, config := testutil.Dirs(t, map[string]string{
		"discover.sh": "#!/bin/sh\necho '[{\"name\": \"lint\", \"description\": \"Lints.\"}]'\n",
		"other.sh":    "#!/bin/sh\necho '[{\"name\": \"format\", \"description\": \"Formats.\"}]'\n",
	}, `{"tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}`)
	tb, err := toolbox.New(toolbox.Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if slices.Contains(testutil.ToolNames(tb.Config().Registry), "lint") {
		t.Fatal("discovered tools before StartExternal")
	}
	if err := tb.StartExternal(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(testutil.ToolNames(tb.Config().Registry), "lint") || tb.Untrusted() != nil || len(tb.MCPStatuses()) != 0 {
		t.Fatalf("after StartExternal: tools %v, untrusted %+v", testutil.ToolNames(tb.Config().Registry), tb.Untrusted())
	}

	r, err := tb.Reconfigure(parse(t, `{"tools": {"discoveryCommand": "sh other.sh"}}`))
	if err != nil || !r.External {
		t.Fatalf("Reconfigure = %+v, %v; want External", r, err)
	}
	infos, err := tb.Discover(context.Background())
	if err != nil || len(infos) != 1 || infos[0].Name != "format" {
		t.Fatalf("Discover = %+v, %v", infos, err)
	}
	if got := testutil.ToolNames(tb.Config().Registry); slices.Contains(got, "lint") || !slices.Contains(got, "format") {
		t.Errorf("discovery did not replace the discovered set: %v", got)
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
