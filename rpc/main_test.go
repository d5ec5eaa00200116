package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// binary is agentls, built on first use (buildBinary) for the tests that drive the real
// server over real pipes, as an editor does. Tests of a server in this process
// (lsptest.Serve) need none.
// bin is agentls, built on first use (buildBinary).
var bin testutil.Binary

func TestMain(m *testing.M) {
	flag.Parse()
	// Benchmarks measure the server as shipped; tests run it under the race detector
	// when they run under it themselves.
	bin.Race = raceEnabled && flag.Lookup("test.bench").Value.String() == ""
	// The servers run in this process (lsptest.Serve) must not read the user's own
	// Gemini CLI settings.
	cleanup := testutil.IsolateHome("agentls-rpc")
	code := m.Run()
	cleanup()
	bin.Remove()
	os.Exit(code)
}

// buildBinary returns the agentls binary, built once; a failed build fails t.
func buildBinary(t testing.TB) string { return bin.Path(t) }

// testTimeout bounds every exchange: a server that stops answering fails the test
// instead of hanging it.
const testTimeout = 60 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// workspaceDir returns a new workspace root (symlinks resolved) holding files.
func workspaceDir(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// start starts agentls serve in root with an empty user configuration.
func start(t testing.TB, root string, args ...string) *lsptest.Client {
	t.Helper()
	return startEnv(t, root, nil, args...)
}

// modelEnv are the environment variables that give agentls a model: the tests' servers
// have none unless a test gives them one (startEnv).
var modelEnv = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "OPENAI_API_KEY", "OPENAI_BASE_URL"}

// startEnv starts agentls serve in root with an empty user configuration and state,
// no model but what extra (KEY=value) gives it.
func startEnv(t testing.TB, root string, extra []string, args ...string) *lsptest.Client {
	t.Helper()
	cfg := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(modelEnv, name)
	})
	env = append(env, "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "XDG_STATE_HOME="+filepath.Join(cfg, "state"), "AGENTLS_LOG_LEVEL=debug",
		// A server built with -race otherwise sleeps a second before it exits.
		"GORACE=atexit_sleep_ms=10")
	env = append(env, extra...)
	return lsptest.Start(t, buildBinary(t), lsptest.Options{Args: append([]string{"serve"}, args...), Dir: root, Env: env})
}

// Client capability sets.
var (
	// capsNone is a client that advertises nothing.
	capsNone = map[string]any{}
	// capsEditor is an editor that applies versioned edits, creates files, annotates
	// changes and shows message requests, but knows nothing of agentls.
	capsEditor = map[string]any{
		"workspace": map[string]any{
			"applyEdit": true,
			"workspaceEdit": map[string]any{
				"documentChanges":         true,
				"resourceOperations":      []string{"create", "rename", "delete"},
				"changeAnnotationSupport": map[string]any{"groupsOnLabel": true},
			},
			"workspaceFolders": true,
		},
		"window": map[string]any{
			"workDoneProgress": true,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
		},
	}
	// capsRich is an agentls plugin.
	capsRich = withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true, "updates": true}})
)

// withCaps returns caps with key set to value.
func withCaps(caps map[string]any, key string, value any) map[string]any {
	out := map[string]any{}
	for k, v := range caps {
		out[k] = v
	}
	out[key] = value
	return out
}

// initParams are initialize params for a client in root.
func initParams(root string, caps map[string]any, options any) map[string]any {
	p := map[string]any{
		"processId":    os.Getpid(),
		"rootUri":      lsptest.FileURI(root),
		"capabilities": caps,
		"clientInfo":   map[string]any{"name": "lsptest", "version": "1"},
	}
	if options != nil {
		p["initializationOptions"] = options
	}
	return p
}

// session starts a server in root and initializes it.
func session(t testing.TB, root string, caps map[string]any, options any, args ...string) *lsptest.Client {
	t.Helper()
	c := start(t, root, args...)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Initialize(ctx, initParams(root, caps, options)); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// runTool runs a tool with agentls.runTool and returns the ToolResult.
func runTool(ctx context.Context, t testing.TB, c *lsptest.Client, name string, args any) tools.CallResult {
	t.Helper()
	var res tools.CallResult
	err := c.Call(ctx, "workspace/executeCommand", map[string]any{
		"command": "agentls.runTool", "arguments": []any{map[string]any{"name": name, "args": args}},
	}, &res)
	if err != nil {
		t.Fatalf("agentls.runTool %s: %v", name, err)
	}
	return res
}

// command runs workspace/executeCommand with one argument.
func command(ctx context.Context, c *lsptest.Client, cmd string, arg any, result any) error {
	return c.Call(ctx, "workspace/executeCommand", map[string]any{"command": cmd, "arguments": []any{arg}}, result)
}

// readOverlay returns what the tools read of path: the editor's text if it is open.
func readOverlay(ctx context.Context, t testing.TB, c *lsptest.Client, path string) string {
	t.Helper()
	res := runTool(ctx, t, c, "read_file", map[string]any{"file_path": path})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("read_file %s: %s: %s", path, res.Status, res.Output)
	}
	return res.Output
}

// codeOf returns the JSON-RPC error code of err, or 0.
func codeOf(err error) int64 {
	var re *lsptest.ResponseError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

var sleepSeq atomic.Int64

// uniqueSleep returns a sleep command line that no other process runs, to find it.
func uniqueSleep() string {
	return fmt.Sprintf("sleep %d.%03d%d", 300+os.Getpid()%100, sleepSeq.Add(1), 7)
}

// waitProcess waits until a process whose command line contains cmdline is running
// (or, with running false, until none is).
func waitProcess(ctx context.Context, t testing.TB, cmdline string, running bool) {
	t.Helper()
	for {
		if processRunning(cmdline) == running {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %q to be running=%v: %v", cmdline, running, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func processRunning(cmdline string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		// The shell running the command has it in its own command line after -c; only
		// the command itself counts.
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if strings.Join(args, " ") == cmdline {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
