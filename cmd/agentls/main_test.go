package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// bin is the agentls binary, built on first use (agentlsBinary): these tests drive the
// real command over real pipes.
var bin testutil.Binary

func TestMain(m *testing.M) {
	testutil.RunAsBrowser()
	// The command runs under the race detector when its tests do (a race build takes
	// several times as long to link and to run).
	bin.Race = raceEnabled
	code := m.Run()
	bin.Remove()
	os.Exit(code)
}

// agentlsBinary returns the agentls binary, built once; a failed build fails t.
func agentlsBinary(t testing.TB) string {
	t.Helper()
	return bin.Path(t)
}

type outcome struct {
	code           int
	stdout, stderr string
}

// agentls runs the binary in a workspace root with an empty user configuration, stdin
// a pipe (no terminal).
func agentls(t *testing.T, root string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(agentlsBinary(t), args...)
	cmd.Dir = root
	cfg := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
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
		{name: "serve takes no arguments", args: []string{"serve", "extra"}, wantCode: 2, wantErr: `unexpected argument "extra"`},
		{name: "serve with a bad timeout", args: []string{"serve", "--confirm-timeout", "-1s"}, wantCode: 2, wantErr: "confirm-timeout"},
		{name: "help", args: []string{"help"}, wantOut: "agentls [serve"},
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

// TestNoTerminalSaysHowToAllow checks that a call needing consent with nobody to ask
// is reported as such, with how to allow it, and not as the user declining it.
func TestNoTerminalSaysHowToAllow(t *testing.T) {
	root := workspaceDir(t)
	got := agentls(t, root, "run", "run_shell_command", `{"command":"touch ran"}`)
	if got.code != 1 {
		t.Errorf("exit code %d, want 1", got.code)
	}
	for _, want := range []string{"needs approval", "policy rule", "no terminal", "--approval-mode yolo"} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("stderr %q, want it to say %q", got.stderr, want)
		}
	}
	for _, bad := range []string{"did not approve", "declined"} {
		if strings.Contains(got.stderr, bad) {
			t.Errorf("stderr %q says %q: nobody was asked", got.stderr, bad)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
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
		"grep_search", "run_shell_command", "list_background_processes",
		"read_background_output", "save_memory", "write_todos", "invoke_agent"}
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
	// grep_search's earlier name is an alias, not a tool of its own.
	if _, ok := have["search_file_content"]; ok {
		t.Error("agentls tools --json lists the alias search_file_content as a tool")
	}
}

// TestRunInvokeAgent: invoke_agent is listed by agentls tools, but a person's own call
// has no session to run a sub-agent in, and says so.
func TestRunInvokeAgent(t *testing.T) {
	got := agentls(t, workspaceDir(t), "run", "invoke_agent", `{"agent_name": "codebase_investigator", "prompt": "look"}`)
	if got.code == 0 || !strings.Contains(got.stdout+got.stderr, "runs only within a model session") {
		t.Errorf("agentls run invoke_agent: %+v", got)
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

// lspFrames frames JSON-RPC messages for the server's stdin.
func lspFrames(msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(m), m)
	}
	return b.String()
}

// TestServe: with no arguments, and with serve, agentls is a language server on stdin
// and stdout: a whole session with an orderly exit ends with code 0, and the log goes
// to stderr or the log file, never stdout.
func TestServe(t *testing.T) {
	root := workspaceDir(t)
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	for _, args := range [][]string{nil, {"serve"}, {"serve", "--log-file", logFile}} {
		t.Run(strings.Join(append([]string{"agentls"}, args...), " "), func(t *testing.T) {
			cmd := exec.Command(agentlsBinary(t), args...)
			cmd.Dir = root
			cfg := t.TempDir()
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "AGENTLS_LOG_LEVEL=info", "GORACE=atexit_sleep_ms=10")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(stdout)
			// A client sends exit once shutdown has been answered.
			io.WriteString(stdin, lspFrames(
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://`+root+`","capabilities":{}}}`,
				`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
				`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentls.runTool","arguments":[{"name":"read_file","args":{"file_path":"hello.txt"}}]}}`,
			))
			responses := readResponses(t, out, 2)
			io.WriteString(stdin, lspFrames(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`))
			responses += readResponses(t, out, 1)
			io.WriteString(stdin, lspFrames(`{"jsonrpc":"2.0","method":"exit"}`))
			stdin.Close()
			rest, _ := io.ReadAll(out)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr.String())
			}
			if len(rest) > 0 {
				t.Errorf("written after exit: %q", rest)
			}
			for _, want := range []string{`"id":1,"result":{"capabilities"`, `"name":"agentls"`, `"output":"hello\nworld\n"`, `"id":3,"result":null`} {
				if !strings.Contains(responses, want) {
					t.Errorf("stdout lacks %s:\n%s", want, responses)
				}
			}
			if strings.Contains(responses, "level=") {
				t.Errorf("the log went to stdout")
			}
			log := stderr.String()
			if len(args) == 3 {
				b, err := os.ReadFile(logFile)
				if err != nil {
					t.Fatal(err)
				}
				log = string(b)
				if strings.Contains(stderr.String(), "initialized") {
					t.Errorf("with --log-file the log still went to stderr")
				}
			}
			if !strings.Contains(log, "msg=initialized") {
				t.Errorf("the log lacks the initialization: %q", log)
			}
		})
	}
}

// readResponses reads n frames and returns their bodies.
func readResponses(t *testing.T, r *bufio.Reader, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading a response: %v", err)
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		b.Write(body)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestServeExitWithoutShutdown: the editor going away without shutdown is exit code 1.
func TestServeExitWithoutShutdown(t *testing.T) {
	got := agentls(t, workspaceDir(t))
	if got.code != 1 || got.stdout != "" {
		t.Errorf("agentls with stdin %q: code %d, stdout %q; want 1 and nothing written", "y\n", got.code, got.stdout)
	}
}

// TestTerminalConsent answers the terminal prompt of agentls run through a real
// pseudo-terminal: only an explicit yes (or always) lets the edit happen.
func TestTerminalConsent(t *testing.T) {
	tests := []struct {
		answer   string
		wantCode int
		wantFile bool
	}{
		{"y", 0, true},
		{"a", 0, true},
		{"n", 1, false},
		{"", 1, false},
		{"whatever", 1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("answer %q", tt.answer), func(t *testing.T) {
			root := workspaceDir(t)
			cmd := exec.Command(agentlsBinary(t), "run", "write_file", `{"file_path":"new.txt","content":"x\n"}`)
			cmd.Dir = root
			cfg := t.TempDir()
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg)
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
			for !strings.Contains(out.String(), "Allow?") {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no prompt on the terminal; got %q", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(out.String(), "+x") {
				t.Errorf("the prompt does not show the diff: %q", out.String())
			}
			if _, err := os.Stat(filepath.Join(root, "new.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the file exists before the answer: %v", err)
			}
			io.WriteString(tty, tt.answer+"\n")
			err = cmd.Wait()
			<-copied
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; terminal: %q", code, tt.wantCode, out.String())
			}
			_, err = os.Stat(filepath.Join(root, "new.txt"))
			if got := err == nil; got != tt.wantFile {
				t.Errorf("new.txt exists = %v, want %v", got, tt.wantFile)
			}
		})
	}
}
