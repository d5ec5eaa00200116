package shell

import (
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// BenchmarkShell50MB compares run_shell_command streaming 50 MiB of x in lines of 100
// (tool) with the same command run through os/exec with its output discarded (raw).
func BenchmarkShell50MB(b *testing.B) {
	benchShell(b, `head -c 52428800 /dev/zero | tr '\0' 'x' | fold -w 100`, 52428800+52428800/100)
}

// BenchmarkShell50MBYes is BenchmarkShell50MB with output that costs next to nothing to
// make, so the tool's own cost shows most.
func BenchmarkShell50MBYes(b *testing.B) {
	benchShell(b, `yes | head -c 52428800`, 52428800)
}

func benchShell(b *testing.B, command string, size int64) {
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			cmd := exec.Command("bash", "-c", command)
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		ws, _ := testutil.Workspace(b, nil)
		s := New(ws, Options{OutputDir: b.TempDir()})
		b.Cleanup(func() {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		})
		inv, err := testutil.Build(b, tool(b, s, RunToolName), args(b, map[string]any{"command": command}))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		for b.Loop() {
			res, err := inv.Execute(b.Context(), io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			if res.OutputFile == "" {
				b.Fatal("no output file")
			}
			if err := os.Remove(res.OutputFile); err != nil {
				b.Fatal(err)
			}
		}
	})
}
