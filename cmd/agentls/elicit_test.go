package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentls/agentls/internal/testutil"
)

// TestTerminalElicitation: server-everything's form is asked on the terminal, a prompt a
// field in name order: an empty answer takes the default, choices are numbered, a bad
// number is asked again; the answers reach the server.
func TestTerminalElicitation(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	root, cfg := workspaceDir(t), t.TempDir()
	settings := `{"mcpServers": {"everything": {"command": "node", "args": ["` + entry + `", "stdio"], "trust": true}}}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(agentlsBinary(t), "run", "everything__trigger-elicitation-request", `{}`)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out testutil.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, tty)
		close(copied)
	}()
	deadline := time.Now().Add(60 * time.Second) // a hang guard, not a speed check
	for !strings.Contains(out.String(), "MCP server everything asks:") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no question on the terminal; got %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The fields in name order: birthdate, check, email, firstLine, homepage, integer
	// (a bad answer, then 7), legacyTitledEnum, name, number, titledMultipleSelectEnum,
	// titledSingleSelectEnum, untitledMultipleSelectEnum, untitledSingleSelectEnum.
	answers := []string{"", "y", "", "", "", "many", "7", "2", "Ada", "", "1,3", "", "", "4"}
	io.WriteString(tty, strings.Join(answers, "\n")+"\n")
	err = cmd.Wait()
	<-copied
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	got := out.String()
	if cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit %d; terminal:\n%s", cmd.ProcessState.ExitCode(), got)
	}
	for _, want := range []string{"want a whole number", "[1] Cats", "[It was a dark and stormy night.]",
		"- Name: Ada", "- Agreed to terms: true", "- Favorite Integer: 7", "- Favorite Number: 3.14",
		`"legacyTitledEnum": "pet-2"`, `"untitledSingleSelectEnum": "Chandler"`, `"fish-3"`, `"titledSingleSelectEnum": "hero-1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal lacks %q:\n%s", want, got)
		}
	}
}
