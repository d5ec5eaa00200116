package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
)

// noKeyEnv is an environment without a model key, logging at the debug level (where a
// leaked key would show).
func noKeyEnv(cfg string) []string {
	return []string{"GEMINI_API_KEY=", "GOOGLE_API_KEY=", "GOOGLE_GENAI_USE_VERTEXAI=", "OPENAI_API_KEY=",
		"AGENTLS_LOG_LEVEL=debug", "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
}

// TestLogin: agentls login on a terminal asks for the key without echoing it and
// stores it readable by the user alone; agentls prompt then sends it to the model
// (without a key in the environment) and logs it nowhere; agentls logout removes it,
// after which there is no key; a key piped on stdin is stored too.
func TestLogin(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	const key = "AIza-login-secret-4242"

	cmd := exec.Command(agentlsBinary(t), "login")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
	cmd.Env = append(cmd.Env, noKeyEnv(cfg)...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out testutil.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, tty) // ends with EIO once the process exits
		close(copied)
	}()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed check
	for !strings.Contains(out.String(), "not shown as you type") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no prompt on the terminal; got %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	io.WriteString(tty, key+"\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agentls login: %v; terminal: %q", err, out.String())
	}
	<-copied
	if strings.Contains(out.String(), key) {
		t.Errorf("the key was echoed on the terminal: %q", out.String())
	}
	if !strings.Contains(out.String(), "Gemini API key is stored") {
		t.Errorf("the terminal does not say where the key went: %q", out.String())
	}
	file := filepath.Join(cfg, "agentls", "keys.json")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", file, fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(key)) {
		t.Errorf("%s does not hold the key: %s", file, b)
	}

	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "hello"}}})
	defer srv.Close()
	env := append(noKeyEnv(cfg), "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	got := agentlsWith(t, root, cfg, env, "prompt", "hi")
	if got.code != 0 || got.stdout != "hello\n" {
		t.Fatalf("prompt with the stored key: exit %d, stdout %q\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	var sent []string
	for _, r := range srv.Requests() {
		if r.Turn != 0 {
			sent = append(sent, r.Header.Get("X-Goog-Api-Key"))
		}
	}
	if len(sent) != 1 || sent[0] != key {
		t.Errorf("the model got the keys %q, want the stored one", sent)
	}
	if strings.Contains(got.stderr, key) {
		t.Errorf("the key is in the log:\n%s", got.stderr)
	}

	if got := agentlsWith(t, root, cfg, env, "logout"); got.code != 0 || !strings.Contains(got.stdout, "removed") {
		t.Errorf("logout: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after logout: %v", file, err)
	}
	if got := agentlsWith(t, root, cfg, env, "prompt", "hi"); got.code == 0 || !strings.Contains(got.stderr, "agentls login") {
		t.Errorf("prompt after logout: exit %d, stderr %q; want a failure naming agentls login", got.code, got.stderr)
	}

	// Piped, for scripts; the OpenAI-compatible provider's key.
	pipe := exec.Command(agentlsBinary(t), "login", "--provider", "openai")
	pipe.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
	pipe.Stdin = strings.NewReader("sk-piped-key\n")
	if b, err := pipe.CombinedOutput(); err != nil {
		t.Fatalf("login from a pipe: %v\n%s", err, b)
	}
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(`"openai": "sk-piped-key"`)) {
		t.Errorf("%s after the piped login: %s", file, b)
	}
	for _, bad := range [][]string{{"login", "--provider", "scripted"}, {"login", "extra"}, {"logout", "extra"}} {
		if got := agentlsWith(t, root, cfg, env, bad...); got.code != exitBadUsage {
			t.Errorf("agentls %q: exit %d, want %d", bad, got.code, exitBadUsage)
		}
	}
}
