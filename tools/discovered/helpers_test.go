package discovered

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// script writes an executable shell script with body to dir/name and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// printing returns a script body that prints out exactly.
func printing(out string) string {
	return "cat <<'AGENTLS_EOF'\n" + out + "\nAGENTLS_EOF\n"
}

// logBuffer returns a logger writing to a buffer the test can read.
func logBuffer() (*slog.Logger, *testutil.Buffer) {
	var b testutil.Buffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// discoverJSON runs Discover with a discovery command that prints out and a call
// command that is never run.
func discoverJSON(t *testing.T, out string, opts Options) ([]tools.Tool, error) {
	t.Helper()
	bin := t.TempDir()
	opts.DiscoveryCommand = script(t, bin, "discover", printing(out))
	if opts.CallCommand == "" {
		opts.CallCommand = "false"
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	return Discover(context.Background(), opts)
}

// byName returns the tools by name.
func byName(ts []tools.Tool) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, t := range ts {
		m[t.Info().Name] = t
	}
	return m
}

// names returns the tools' names in order.
func names(ts []tools.Tool) []string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Info().Name)
	}
	return n
}

// readPID reads a process id a script wrote to path, waiting for the script to write it.
func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script never wrote %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}

// waitGone fails the test unless process pid is gone within a generous bound: a killed
// process disappears a moment after the signal is sent.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// errorType returns the tools error type of err and its message.
func errorType(err error) (tools.ErrorType, string) {
	var te *tools.Error
	if errors.As(err, &te) {
		return te.Type, te.Message
	}
	return "", ""
}
