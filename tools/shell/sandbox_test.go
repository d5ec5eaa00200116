package shell

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/sandbox"
)

// TestCommandsRunContained: foreground, background and persistent-shell commands all
// run in the sandbox: their writes outside are refused and their results say they ran
// contained; the same commands uncontained write their marker.
func TestCommandsRunContained(t *testing.T) {
	m, exe := testutil.Landlocked(t)
	var err error
	for _, mode := range []string{"foreground", "background", "persistent"} {
		t.Run(mode, func(t *testing.T) {
			for _, contained := range []bool{true, false} {
				outside := t.TempDir()
				t.Setenv("TMPDIR", t.TempDir()) // so that /tmp, which holds outside, is not writable
				marker := filepath.Join(outside, "marker")
				var box *sandbox.Sandbox
				s, root := newShell(t, Options{}, nil)
				if contained {
					box, err = sandbox.New(m, sandbox.Config{}, sandbox.Options{Roots: []string{root}, Helper: exe})
					if err != nil {
						t.Fatal(err)
					}
					s.sandbox = func() *sandbox.Sandbox { return box }
				}
				ctx := t.Context()
				if mode == "persistent" {
					ctx = WithSession(ctx, NewSession())
				}
				extra := map[string]any{}
				if mode == "background" {
					extra["is_background"] = true
				}
				res, err := run(ctx, t, s, "echo pwned > "+marker+"; echo in > in.txt", extra, nil)
				if err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(10 * time.Second)
				for !exists(filepath.Join(root, "in.txt")) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if !exists(filepath.Join(root, "in.txt")) {
					t.Fatalf("contained=%t: the command did not run: %s", contained, res.Output)
				}
				if exists(marker) == contained {
					t.Fatalf("contained=%t: marker written %t\n%s", contained, exists(marker), res.Output)
				}
				if contained && !strings.Contains(res.Output, "Sandbox: contained (") {
					t.Errorf("the result does not say the command ran contained:\n%s", res.Output)
				}
			}
		})
	}
}
