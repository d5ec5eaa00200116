//go:build linux

package mcp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processGone reports whether the process pid has ended (a zombie that no one reaps
// has ended too).
func processGone(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// TestCloseStopsWrappedServer: a stdio server started through a wrapper (a shell, as
// npx and uvx start theirs) that keeps running after its stdin ends is stopped by
// Close, not left running once the wrapper is gone.
func TestCloseStopsWrappedServer(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	cfg := kitConfig("linger", map[string]string{markDirEnv: marks})
	// "; :" keeps the shell from replacing itself with the server.
	cfg.Args = []string{"-c", `"$0"; :`, cfg.Command}
	cfg.Command = "sh"
	m := NewManager(Options{Servers: map[string]ServerConfig{"linger": cfg}})
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	requireState(t, m, "linger", StateConnected)
	if r := mustCall(t, m, "linger__echo", `{"message":"hi"}`); r.Output != "echo: hi" {
		t.Fatalf("echo = %q", r.Output)
	}
	waitFile(t, filepath.Join(marks, "pid"))
	b, err := os.ReadFile(filepath.Join(marks, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Close has returned: the server must be gone, or going (a moment for the signal).
	deadline := time.Now().Add(time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server (pid %d) still runs after Close", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
