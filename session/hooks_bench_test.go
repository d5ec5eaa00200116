package session

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// BenchmarkBeforeToolHook is the cost of a BeforeTool hook per tool call: one read_file
// call per iteration through a session's scheduler (Live.Run), with no hook, with a
// hook that reads its input and allows (a shell script), and with the same hook
// contained by the sandbox (agentls-sandbox built for the benchmark as the helper).
func BenchmarkBeforeToolHook(b *testing.B) {
	helperDir := b.TempDir()
	helper := filepath.Join(helperDir, "agentls-sandbox")
	build := exec.Command("go", "build", "-o", helper, "github.com/agentls/agentls/cmd/agentls-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building agentls-sandbox: %v\n%s", err, out)
	}
	hook := filepath.Join(helperDir, "allow.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"allow\"}'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name      string
		hook      bool
		contained bool
	}{
		{"no-hook", false, false},
		{"hook", true, false},
		{"hook-contained", true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, root := testutil.Workspace(b, map[string]string{"a.txt": "a\n"})
			config := b.TempDir()
			s := map[string]any{"tools": map[string]any{"sandbox": map[string]any{"enabled": bc.contained}}}
			if bc.hook {
				s["hooks"] = map[string]any{"BeforeTool": []any{map[string]any{"matcher": "read_file",
					"hooks": []any{map[string]any{"type": "command", "command": hook}}}}}
			}
			data, _ := json.Marshal(s)
			if err := os.WriteFile(filepath.Join(config, "settings.json"), data, 0o644); err != nil {
				b.Fatal(err)
			}
			opts := toolbox.Options{Roots: []string{root}, ConfigDir: config, GeminiDir: b.TempDir()}
			if bc.contained {
				opts.SandboxHelper = helper
			}
			h, err := NewHost(HostOptions{Toolbox: opts, Logger: discard(),
				NewClient: func(context.Context, settings.Settings) (clients.Client, error) {
					return clients.NewScripted(clients.Script{}), nil
				}})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			if bc.contained && !h.tb.Config().Sandbox.Contained() {
				b.Skipf("not contained here: %s", h.tb.Config().Sandbox.Status().Reason)
			}
			l, err := h.Open(context.Background(), "")
			if err != nil {
				b.Fatal(err)
			}
			req := []tools.Request{{Name: "read_file", Args: json.RawMessage(`{"file_path": "a.txt"}`)}}
			for b.Loop() {
				res := l.Run(context.Background(), req)
				if res[0].Status != tools.StatusSuccess || bc.hook != (len(res[0].Hooks) == 1) {
					b.Fatalf("%+v", res[0])
				}
			}
		})
	}
}
