package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentlsWith runs the binary in dir with the user configuration in cfg (shared between
// calls, unlike agentls) and extra environment variables; stdin is a pipe, so nothing
// that needs consent can be approved.
func agentlsWith(t *testing.T, dir, cfg string, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(agentlsBinary(t), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTLS_TRUST_WORKSPACE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader("y\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return outcome{code, stdout.String(), stderr.String()}
}

// trustSetup returns a parent folder holding a workspace ws whose settings ask for yolo
// mode, a symbolic link to ws, and an empty user configuration directory.
func trustSetup(t *testing.T) (parent, ws, link, cfg string) {
	t.Helper()
	parent = workspaceDir(t)
	ws = filepath.Join(parent, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".agentls", "settings.json"), []byte(`{"approvalMode": "yolo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	return parent, ws, link, t.TempDir()
}

// shellRuns runs `touch ran` in ws through agentls run and reports whether it ran,
// checking that the exit code agrees with the marker file.
func shellRuns(t *testing.T, ws, cfg string, env ...string) (bool, outcome) {
	t.Helper()
	marker := filepath.Join(ws, "ran")
	os.Remove(marker)
	got := agentlsWith(t, ws, cfg, env, "run", "run_shell_command", `{"command":"touch ran"}`)
	_, err := os.Stat(marker)
	ran := err == nil
	if ran != (got.code == 0) {
		t.Fatalf("exit code %d but marker exists = %v\nstdout: %s\nstderr: %s", got.code, ran, got.stdout, got.stderr)
	}
	return ran, got
}

func mustTrust(t *testing.T, dir, cfg string, args ...string) outcome {
	t.Helper()
	got := agentlsWith(t, dir, cfg, nil, append([]string{"trust"}, args...)...)
	if got.code != 0 {
		t.Fatalf("agentls trust %q: exit %d\nstdout: %s\nstderr: %s", args, got.code, got.stdout, got.stderr)
	}
	return got
}

// TestTrustFlow: a workspace's yolo setting applies only once the user trusts the
// folder, through every kind of entry, and stops applying when the trust is revoked or
// overridden by a more specific "do not trust".
func TestTrustFlow(t *testing.T) {
	parent, ws, link, cfg := trustSetup(t)

	ran, got := shellRuns(t, ws, cfg)
	if ran {
		t.Fatalf("an untrusted workspace switched to yolo")
	}
	if !strings.Contains(got.stderr, "no terminal") || !strings.Contains(got.stderr, "agentls trust "+ws) {
		t.Errorf("stderr %q: want the refusal and how to trust the folder", got.stderr)
	}

	out := mustTrust(t, ws, cfg) // DIR defaults to the current directory
	if !strings.Contains(out.stdout, "is trusted (TRUST_FOLDER "+ws+")") {
		t.Errorf("trust printed %q", out.stdout)
	}
	if ran, got := shellRuns(t, ws, cfg); !ran {
		t.Fatalf("a trusted workspace's yolo setting did not apply: %s", got.stderr)
	}
	fi, err := os.Stat(filepath.Join(cfg, "agentls", "trusted-folders.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("trusted-folders.json mode %v, want 0600", fi.Mode().Perm())
	}

	mustTrust(t, ws, cfg, "--revoke")
	if ran, _ := shellRuns(t, ws, cfg); ran {
		t.Fatalf("still trusted after --revoke")
	}
	if got := agentlsWith(t, ws, cfg, nil, "trust", "--revoke"); got.code != 1 || !strings.Contains(got.stderr, "no entry") {
		t.Errorf("revoking a missing entry: exit %d, stderr %q", got.code, got.stderr)
	}

	mustTrust(t, ws, cfg, "--parent", parent)
	if ran, got := shellRuns(t, ws, cfg); !ran {
		t.Fatalf("a --parent entry on the parent does not cover the subfolder: %s", got.stderr)
	}

	mustTrust(t, ws, cfg, "--distrust", ws)
	if ran, _ := shellRuns(t, ws, cfg); ran {
		t.Fatalf("a DO_NOT_TRUST entry under a trusted parent did not win")
	}
	list := mustTrust(t, ws, cfg, "--list")
	for _, want := range []string{"TRUST_PARENT  " + parent + "\n", "DO_NOT_TRUST  " + ws + "\n"} {
		if !strings.Contains(list.stdout, want) {
			t.Errorf("--list printed %q, want a line %q", list.stdout, want)
		}
	}

	// The symbolic link gets the folder's decision, and an entry made through it is
	// stored for the folder itself.
	mustTrust(t, ws, cfg, "--revoke", link)
	if ran, got := shellRuns(t, ws, cfg); !ran {
		t.Fatalf("revoking through a symlink did not remove the folder's entry: %s", got.stderr)
	}
	if got := agentlsWith(t, ws, cfg, nil, "run", "--root", link, "run_shell_command", `{"command":"touch via-link"}`); got.code != 0 {
		t.Errorf("a symlink to a trusted folder is not trusted: %s", got.stderr)
	}
	mustTrust(t, ws, cfg, "--revoke", parent)
	mustTrust(t, ws, cfg, link)
	if list := mustTrust(t, ws, cfg, "--list"); list.stdout != "TRUST_FOLDER  "+ws+"\n" {
		t.Errorf("--list after trusting through a symlink: %q, want the resolved folder only", list.stdout)
	}
	if ran, got := shellRuns(t, ws, cfg); !ran {
		t.Fatalf("trusted through a symlink, yet not trusted: %s", got.stderr)
	}
}

func TestTrustEnvironment(t *testing.T) {
	_, ws, _, cfg := trustSetup(t)
	if ran, _ := shellRuns(t, ws, cfg, "AGENTLS_TRUST_WORKSPACE=0"); ran {
		t.Fatalf("AGENTLS_TRUST_WORKSPACE=0 trusted the workspace")
	}
	if ran, got := shellRuns(t, ws, cfg, "AGENTLS_TRUST_WORKSPACE=1"); !ran {
		t.Fatalf("AGENTLS_TRUST_WORKSPACE=1 did not trust the workspace: %s", got.stderr)
	}
}

func TestTrustDamagedFile(t *testing.T) {
	_, ws, _, cfg := trustSetup(t)
	file := filepath.Join(cfg, "agentls", "trusted-folders.json")
	damaged := `{"` + ws + `": "TRUST_FOLDER",`
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	ran, got := shellRuns(t, ws, cfg)
	if ran || got.code != 1 || !strings.Contains(got.stderr, file) || !strings.Contains(got.stderr, "damaged") {
		t.Errorf("run with a damaged trust file: ran %v, exit %d, stderr %q; want a refusal naming the file", ran, got.code, got.stderr)
	}
	for _, args := range [][]string{{"trust", "--list"}, {"trust"}, {"trust", "--revoke"}} {
		got := agentlsWith(t, ws, cfg, nil, args...)
		if got.code != 1 || !strings.Contains(got.stderr, file) {
			t.Errorf("%q with a damaged trust file: exit %d, stderr %q; want failure naming the file", args, got.code, got.stderr)
		}
	}
	if data, _ := os.ReadFile(file); string(data) != damaged {
		t.Errorf("the damaged file was rewritten: %q", data)
	}
}

func TestTrustUsage(t *testing.T) {
	_, ws, _, cfg := trustSetup(t)
	tests := []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"trust", "--parent", "--revoke"}, 2, "exclude each other"},
		{[]string{"trust", "--list", "--distrust"}, 2, "exclude each other"},
		{[]string{"trust", "--list", ws}, 2, "unexpected argument"},
		{[]string{"trust", ws, ws + "2"}, 2, "unexpected argument"},
		{[]string{"trust", "--everything"}, 2, "everything"},
		{[]string{"trust", filepath.Join(ws, "missing")}, 1, "missing"},
		{[]string{"trust", filepath.Join(ws, ".agentls", "settings.json")}, 1, "not a folder"},
	}
	for _, tt := range tests {
		got := agentlsWith(t, ws, cfg, nil, tt.args...)
		if got.code != tt.wantCode || !strings.Contains(got.stderr, tt.wantErr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, got.code, got.stderr, tt.wantCode, tt.wantErr)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg, "agentls", "trusted-folders.json")); err == nil {
		t.Errorf("a failed trust command wrote the trust file")
	}
}
