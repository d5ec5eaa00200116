package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxPlace is a workspace, the temporary directory agentls gives commands, and a
// folder outside both where no contained command may write.
type sandboxPlace struct{ ws, tmp, outside, home string }

func newSandboxPlace(t *testing.T) sandboxPlace {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := sandboxPlace{ws: filepath.Join(base, "ws"), tmp: filepath.Join(base, "tmp"), outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home")}
	for _, d := range []string{p.ws, p.tmp, p.outside, p.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// run runs agentls in the workspace with extra environment entries.
func (p sandboxPlace) run(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(agentlsBinary(t), args...)
	cmd.Dir = p.ws
	cmd.Env = append(os.Environ(), append([]string{"XDG_CONFIG_HOME=" + p.home, "HOME=" + p.home, "TMPDIR=" + p.tmp, "GORACE=atexit_sleep_ms=10"}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return outcome{code, stdout.String(), stderr.String()}
}

// requireContained skips (or under AGENTLS_REQUIRE_SANDBOX=1 fails) where agentls
// cannot contain commands on this machine.
func requireContained(t *testing.T, p sandboxPlace) {
	t.Helper()
	o := p.run(t, nil, "sandbox", "--json")
	var st struct {
		Contained bool
		Level     string
		Reason    string
	}
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil {
		t.Fatalf("agentls sandbox --json: %v\n%s%s", err, o.stdout, o.stderr)
	}
	if st.Level != "landlock+namespaces" {
		if os.Getenv("AGENTLS_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("AGENTLS_REQUIRE_SANDBOX=1 but commands are %s: %s", st.Level, st.Reason)
		}
		t.Skipf("commands are %s here: %s", st.Level, st.Reason)
	}
}

// TestSandboxCommand: agentls sandbox reports the machine and runs one command
// contained; forced down to nothing, it says so and the same command escapes.
func TestSandboxCommand(t *testing.T) {
	p := newSandboxPlace(t)
	requireContained(t, p)
	o := p.run(t, nil, "sandbox")
	if o.code != 0 || !strings.Contains(o.stdout, "Commands: contained (landlock+namespaces, network off)") || !strings.Contains(o.stdout, "Landlock:         ABI") {
		t.Fatalf("agentls sandbox: %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = p.run(t, []string{"AGENTLS_SANDBOX_MACHINE=landlock"}, "sandbox")
	if !strings.Contains(o.stdout, "Commands: contained (landlock, network off); Landlock only (turned off by AGENTLS_SANDBOX_MACHINE=landlock)") {
		t.Errorf("forced to Landlock alone:\n%s%s", o.stdout, o.stderr)
	}
	marker := filepath.Join(p.outside, "marker")
	o = p.run(t, []string{"AGENTLS_SANDBOX_MACHINE=landlock"}, "sandbox", "--", "bash", "-c", "echo pwned > "+marker)
	if o.code == 0 || fileExists(marker) {
		t.Fatalf("Landlock alone: exit %d, marker written %t\n%s%s", o.code, fileExists(marker), o.stdout, o.stderr)
	}
	o = p.run(t, nil, "sandbox", "--", "bash", "-c", "echo in > in.txt && echo pwned > "+marker)
	if o.code == 0 || fileExists(marker) || !fileExists(filepath.Join(p.ws, "in.txt")) {
		t.Fatalf("contained: exit %d, marker written %t\n%s%s", o.code, fileExists(marker), o.stdout, o.stderr)
	}
	o = p.run(t, []string{"AGENTLS_SANDBOX_MACHINE=none"}, "sandbox", "--", "bash", "-c", "echo pwned > "+marker)
	if o.code != 0 || !fileExists(marker) || !strings.Contains(o.stderr, "not contained: ") {
		t.Fatalf("control: exit %d, marker %t\n%s%s", o.code, fileExists(marker), o.stdout, o.stderr)
	}
	o = p.run(t, nil, "sandbox", "--", "sh", "-c", "exit 7")
	if o.code != 7 {
		t.Errorf("exit status %d, want the command's 7", o.code)
	}
}

// TestShellResultSaysContained: run_shell_command's result says the command ran
// contained and what the sandbox refused; sandbox: false with a justification runs it
// outside in yolo mode, and without one is refused.
func TestShellResultSaysContained(t *testing.T) {
	p := newSandboxPlace(t)
	requireContained(t, p)
	marker := filepath.Join(p.outside, "marker")
	args := func(extra string) string {
		return `{"command": "echo pwned > ` + marker + `"` + extra + `}`
	}
	o := p.run(t, nil, "run", "run_shell_command", args(""), "--approval-mode", "yolo")
	if fileExists(marker) || !strings.Contains(o.stdout, "Sandbox: contained (landlock+namespaces, network off).") ||
		!strings.Contains(o.stdout, marker+" is outside the paths contained commands may write") {
		t.Fatalf("contained: marker %t\n%s%s", fileExists(marker), o.stdout, o.stderr)
	}
	o = p.run(t, nil, "run", "run_shell_command", args(`, "sandbox": false`), "--approval-mode", "yolo")
	if fileExists(marker) || !strings.Contains(o.stdout+o.stderr, "needs a justification") {
		t.Fatalf("no justification: marker %t\n%s%s", fileExists(marker), o.stdout, o.stderr)
	}
	o = p.run(t, nil, "run", "run_shell_command", args(`, "sandbox": false, "justification": "writes the marker"`))
	if fileExists(marker) {
		t.Fatalf("outside the sandbox ran without consent (default mode, no terminal)\n%s%s", o.stdout, o.stderr)
	}
	o = p.run(t, nil, "run", "run_shell_command", args(`, "sandbox": false, "justification": "writes the marker"`), "--approval-mode", "yolo")
	if !fileExists(marker) || !strings.Contains(o.stdout, "Sandbox: not contained: run outside the sandbox") {
		t.Fatalf("yolo, outside: marker %t\n%s%s", fileExists(marker), o.stdout, o.stderr)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
