package toolbox

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
)

// TestSetTrust: trusting the folder lets its settings loosen consent at once, with the
// front end's overrides still in force; revoking takes that back, and an unknown scope
// changes nothing.
func TestSetTrust(t *testing.T) {
	root, config := testutil.Dirs(t, map[string]string{
		".gemini/settings.json": `{"approvalMode": "yolo"}`,
	}, `{}`)
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config,
		Overrides: parse(t, `{"excludeTools": ["glob"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		scope   TrustScope
		trusted bool
		path    string
		mode    confirm.Mode
		wantErr bool
	}{
		{scope: TrustFolder, trusted: true, path: real, mode: confirm.ModeYolo},
		{scope: TrustRevoke, trusted: false, path: real, mode: confirm.ModeDefault},
		{scope: TrustParent, trusted: true, path: filepath.Dir(real), mode: confirm.ModeYolo},
		{scope: TrustRevoke, trusted: false, path: real, mode: confirm.ModeDefault},
		{scope: "everything", wantErr: true, mode: confirm.ModeDefault},
	}
	for _, tt := range tests {
		got, _, err := tb.SetTrust(tt.scope)
		switch {
		case tt.wantErr && err == nil:
			t.Errorf("%s: no error", tt.scope)
		case !tt.wantErr && err != nil:
			t.Errorf("%s: %v", tt.scope, err)
		case !tt.wantErr && (got.Trusted != tt.trusted || got.Path != tt.path || got.Message == ""):
			t.Errorf("%s: %+v, want trusted %v at %s", tt.scope, got, tt.trusted, tt.path)
		}
		if m := tb.Config().Policy.Mode(); m != tt.mode {
			t.Errorf("after %s: mode %s, want %s", tt.scope, m, tt.mode)
		}
		if names := testutil.ToolNames(tb.Config().Registry); len(names) == 0 || slices.Contains(names, "glob") {
			t.Errorf("after %s: tools %v, want the overrides' exclusion of glob kept", tt.scope, names)
		}
	}
}
