package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/tools"
)

// binary is the agentls binary built once for these tests: they drive the real command
// over real pipes.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentls-cmd-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentls")
	build := exec.Command("go", "build", "-race", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building agentls: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type outcome struct {
	code           int
	stdout, stderr string
}

// agentls runs the binary in a workspace root with an empty user configuration, stdin
// a pipe (no terminal).
func agentls(t *testing.T, root string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = root
	cfg := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg)
	cmd.Stdin = strings.NewReader("y\n") // a pipe: must never be taken as consent
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

func workspaceDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // substring of stdout
		wantErr    string // substring of stderr
		wantFile   string // a file that must exist afterwards, relative to the root
		wantNoFile string // a file that must not exist afterwards
	}{
		{name: "version", args: []string{"version"}, wantOut: "agentls "},
		{name: "no arguments", args: nil, wantCode: 2, wantErr: "usage:"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
		{name: "tools table", args: []string{"tools"}, wantOut: "read_file"},
		{name: "read a file", args: []string{"run", "read_file", `{"file_path":"hello.txt"}`}, wantOut: "world"},
		{name: "flags before arguments", args: []string{"run", "--json", "read_file", `{"file_path":"hello.txt"}`}, wantOut: `"status": "success"`},
		{name: "bad JSON", args: []string{"run", "read_file", `{"file_path":`}, wantCode: 2, wantErr: "not valid JSON"},
		{name: "missing tool name", args: []string{"run"}, wantCode: 2, wantErr: "want a tool name"},
		{name: "unknown tool", args: []string{"run", "read_fil", `{}`}, wantCode: 2, wantErr: "read_file"},
		{name: "bad approval mode", args: []string{"run", "--approval-mode", "reckless", "read_file", `{"file_path":"hello.txt"}`}, wantCode: 2, wantErr: "reckless"},
		{name: "invalid parameters", args: []string{"run", "read_file", `{"start_line":"x"}`}, wantCode: 1, wantErr: "invalid_tool_params"},
		{name: "outside the workspace", args: []string{"run", "read_file", `{"file_path":"../../../../etc/passwd"}`}, wantCode: 1, wantErr: "path_not_in_workspace"},
		{
			name: "write needs consent and there is no terminal", args: []string{"run", "write_file", `{"file_path":"new.txt","content":"x"}`},
			wantCode: 1, wantErr: "no terminal", wantNoFile: "new.txt",
		},
		{
			name: "shell needs consent and there is no terminal", args: []string{"run", "run_shell_command", `{"command":"touch ran"}`},
			wantCode: 1, wantErr: "no terminal", wantNoFile: "ran",
		},
		{
			name: "auto_edit writes", args: []string{"run", "write_file", `{"file_path":"new.txt","content":"x"}`, "--approval-mode", "auto_edit"},
			wantFile: "new.txt",
		},
		{
			name: "auto_edit still asks for shell", args: []string{"run", "--approval-mode", "auto_edit", "run_shell_command", `{"command":"touch ran"}`},
			wantCode: 1, wantErr: "no terminal", wantNoFile: "ran",
		},
		{
			name: "yolo runs shell", args: []string{"run", "--approval-mode", "yolo", "run_shell_command", `{"command":"echo hi; touch ran"}`},
			wantOut: "hi", wantFile: "ran",
		},
		{
			name: "plan mode refuses edits", args: []string{"run", "--approval-mode", "plan", "write_file", `{"file_path":"new.txt","content":"x"}`},
			wantCode: 1, wantErr: "policy_violation", wantNoFile: "new.txt",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspaceDir(t)
			got := agentls(t, root, tt.args...)
			if got.code != tt.wantCode {
				t.Errorf("exit code = %d, want %d\nstdout: %s\nstderr: %s", got.code, tt.wantCode, got.stdout, got.stderr)
			}
			if !strings.Contains(got.stdout, tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", got.stdout, tt.wantOut)
			}
			if !strings.Contains(got.stderr, tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", got.stderr, tt.wantErr)
			}
			if tt.wantFile != "" {
				if _, err := os.Stat(filepath.Join(root, tt.wantFile)); err != nil {
					t.Errorf("want %s to exist: %v", tt.wantFile, err)
				}
			}
			if tt.wantNoFile != "" {
				if _, err := os.Stat(filepath.Join(root, tt.wantNoFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("want no %s, stat: %v", tt.wantNoFile, err)
				}
			}
		})
	}
}

func TestToolsJSON(t *testing.T) {
	got := agentls(t, workspaceDir(t), "tools", "--json")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	var infos []tools.Info
	if err := json.Unmarshal([]byte(got.stdout), &infos); err != nil {
		t.Fatalf("not ToolInfo JSON: %v\n%s", err, got.stdout)
	}
	want := []string{"list_directory", "read_file", "write_file", "replace", "read_many_files", "glob",
		"grep_search", "search_file_content", "run_shell_command", "list_background_processes",
		"read_background_output", "save_memory", "write_todos"}
	have := map[string]tools.Info{}
	for _, in := range infos {
		have[in.Name] = in
		if in.Source != tools.SourceBuiltin || in.Kind == "" || in.DisplayName == "" || in.Description == "" || !json.Valid(in.Parameters) {
			t.Errorf("incomplete ToolInfo: %+v", in)
		}
	}
	for _, name := range want {
		if _, ok := have[name]; !ok {
			t.Errorf("tool %s missing from agentls tools --json", name)
		}
	}
}

func TestRunJSONResult(t *testing.T) {
	root := workspaceDir(t)
	got := agentls(t, root, "run", "replace", `{"file_path":"hello.txt","old_string":"world","new_string":"there"}`,
		"--approval-mode", "auto_edit", "--json")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	var res tools.CallResult
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("not a ToolResult: %v\n%s", err, got.stdout)
	}
	if res.Status != tools.StatusSuccess || res.Name != "replace" || res.CallID == "" || res.Diff == nil ||
		!strings.Contains(res.Diff.Diff, "+there") {
		t.Errorf("unexpected result: %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(root, "hello.txt"))
	if err != nil || string(b) != "hello\nthere\n" {
		t.Errorf("hello.txt = %q, %v", b, err)
	}
}
