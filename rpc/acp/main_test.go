package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
)

// The tests run the real agentls binary (`agentls acp`) over real pipes, as an editor
// does, with the SDK's client side as the editor and a real Gemini client talking to
// a fake Gemini API on loopback (internal/fakegemini) that replays a script.

// bin is agentls, built on first use (buildBinary).
var bin testutil.Binary

func TestMain(m *testing.M) {
	testutil.RunAsBrowser()
	flag.Parse()
	// Benchmarks measure the server as shipped; tests run it under the race detector
	// when they run under it themselves.
	bin.Race = raceEnabled && flag.Lookup("test.bench").Value.String() == ""
	cleanup := testutil.IsolateHome("agentls-acp")
	code := m.Run()
	cleanup()
	bin.Remove()
	os.Exit(code)
}

// buildBinary returns the agentls binary, built once; a failed build fails t.
func buildBinary(t testing.TB) string { return bin.Path(t) }

// testTimeout bounds every exchange: an agent that stops answering fails the test
// instead of hanging it.
const testTimeout = 90 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// modelEnv are the environment variables that give agentls a model: the agents of the
// tests have none but what a test gives them.
var modelEnv = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "OPENAI_API_KEY", "OPENAI_BASE_URL"}

// env is an agent's environment: an empty user configuration, state under state, and
// extra (KEY=value).
func env(cfg, state string, extra ...string) []string {
	out := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(modelEnv, name)
	})
	out = append(out, "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "XDG_STATE_HOME="+state, "AGENTLS_LOG_LEVEL=debug",
		// A binary built with -race otherwise sleeps a second before it exits.
		"GORACE=atexit_sleep_ms=10")
	return append(out, extra...)
}

// agent is a running `agentls acp` and the SDK's client connected to it.
type agent struct {
	t      *testing.T
	cmd    *exec.Cmd
	conn   *sdk.ClientSideConnection
	client *editor
	stdin  io.WriteCloser
	stderr *testutil.Buffer
	// wire is what the agent wrote on its stdout, as it wrote it.
	wire *testutil.Buffer
}

// startProcess starts bin acp with environment env, connected to a client that
// answers permission requests with permit.
func startProcess(t testing.TB, bin string, env []string, permit func(sdk.RequestPermissionRequest) sdk.PermissionOptionId) *agent {
	t.Helper()
	cmd := exec.Command(bin, "acp")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{cmd: cmd, stdin: stdin, stderr: &testutil.Buffer{}, wire: &testutil.Buffer{}, client: &editor{permit: permit}}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.conn = sdk.NewClientSideConnection(a.client, stdin, io.TeeReader(stdout, a.wire))
	a.conn.SetLogger(slog.New(slog.DiscardHandler))
	return a
}

// stop closes the agent's input and waits for it to exit, which it must do cleanly.
func (a *agent) stop(t testing.TB) {
	a.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agentls acp exited: %v", err)
		}
	case <-time.After(testTimeout):
		a.cmd.Process.Kill()
		t.Errorf("agentls acp did not exit when its input closed")
	}
}

// start starts `agentls acp` with environment env for the test, connected to a client
// that answers permission requests with permit; it is stopped when the test ends.
func start(t *testing.T, env []string, permit func(sdk.RequestPermissionRequest) sdk.PermissionOptionId) *agent {
	t.Helper()
	a := startProcess(t, buildBinary(t), env, permit)
	a.t = t
	t.Cleanup(func() {
		a.stop(t)
		if t.Failed() {
			t.Logf("agent log:\n%s", a.stderr.String())
		}
	})
	return a
}

// initialize initializes the connection as a client without fs or terminal.
func (a *agent) initialize(ctx context.Context) sdk.InitializeResponse {
	a.t.Helper()
	return a.initializeWith(ctx, sdk.ClientCapabilities{})
}

// initializeWith initializes the connection as a client with caps.
func (a *agent) initializeWith(ctx context.Context, caps sdk.ClientCapabilities) sdk.InitializeResponse {
	a.t.Helper()
	res, err := a.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo: &sdk.Implementation{Name: "acp-go-sdk test", Version: "1"}, ClientCapabilities: caps})
	if err != nil {
		a.t.Fatalf("initialize: %v", err)
	}
	return res
}

// newSession starts a session in root.
func (a *agent) newSession(ctx context.Context, root string) sdk.NewSessionResponse {
	a.t.Helper()
	res, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		a.t.Fatalf("session/new: %v", err)
	}
	return res
}

// prompt sends text to the session and returns the answer.
func (a *agent) prompt(ctx context.Context, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// editor is the client: it records the session updates and the permission requests,
// and answers the latter with permit.
type editor struct {
	permit func(sdk.RequestPermissionRequest) sdk.PermissionOptionId

	mu          sync.Mutex
	updates     []sdk.SessionNotification
	permissions []sdk.RequestPermissionRequest
	// onUpdate, when set, sees each update as it comes.
	onUpdate func(sdk.SessionNotification)
	// buffers, when not nil, are the editor's texts of files by path: the client
	// serves fs/read_text_file and fs/write_text_file from them (reads of other files
	// from the disk), and records the reads and writes.
	buffers map[string]string
	reads   []string
	writes  []sdk.WriteTextFileRequest
	// terminals, when not nil, are the editor's terminals by id: the client serves
	// terminal/* by running their commands.
	terminals map[string]*terminal
	// elicit, when set, answers elicitation/create; elicitations are the requests.
	elicit       func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error)
	elicitations []sdk.UnstableCreateElicitationRequest
}

// UnstableCreateElicitation answers with e.elicit, when the test set it.
func (e *editor) UnstableCreateElicitation(ctx context.Context, p sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	e.mu.Lock()
	f := e.elicit
	e.elicitations = append(e.elicitations, p)
	e.mu.Unlock()
	if f == nil {
		return sdk.UnstableCreateElicitationResponse{}, errNotDeclared
	}
	return f(ctx, p)
}

var errNotDeclared = errors.New("the test client did not declare this capability")

// wait is the answer of a permit function that answers nothing until the request is
// cancelled (the agent's $/cancel_request), then answers cancelled.
const wait = sdk.PermissionOptionId("")

func (e *editor) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.permissions = append(e.permissions, p)
	e.mu.Unlock()
	if e.permit == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	answer := e.permit(p)
	if answer == wait {
		<-ctx.Done()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	// An answer named by a kind is the first option of that kind, as a person
	// clicking the first button of its kind would choose.
	for _, o := range p.Options {
		if string(o.Kind) == string(answer) {
			answer = o.OptionId
			break
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(answer)}, nil
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	e.updates = append(e.updates, n)
	f := e.onUpdate
	e.mu.Unlock()
	if f != nil {
		f(n)
	}
	return nil
}

// ReadTextFile serves the editor's buffers, else the disk, when the test gave the
// editor buffers (e.buffers not nil).
func (e *editor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buffers == nil {
		return sdk.ReadTextFileResponse{}, errNotDeclared
	}
	e.reads = append(e.reads, p.Path)
	if text, ok := e.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

// WriteTextFile writes into the editor's buffers, when it has them.
func (e *editor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buffers == nil {
		return sdk.WriteTextFileResponse{}, errNotDeclared
	}
	e.buffers[p.Path] = p.Content
	e.writes = append(e.writes, p)
	return sdk.WriteTextFileResponse{}, nil
}

// buffer returns the editor's text of path, and whether it has a buffer of it.
func (e *editor) buffer(path string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	text, ok := e.buffers[path]
	return text, ok
}

// setBuffer sets the editor's text of path, as a user typing.
func (e *editor) setBuffer(path, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buffers[path] = text
}

// terminal is a terminal of the editor: a process and what it printed.
type terminal struct {
	req  sdk.CreateTerminalRequest
	cmd  *exec.Cmd
	out  testutil.Buffer
	done chan struct{}
	// released is set by terminal/release.
	released bool
}

// CreateTerminal runs the command, when the test gave the editor terminals.
func (e *editor) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.terminals == nil {
		return sdk.CreateTerminalResponse{}, errNotDeclared
	}
	term := &terminal{req: p, cmd: exec.Command(p.Command, p.Args...), done: make(chan struct{})}
	if p.Cwd != nil {
		term.cmd.Dir = *p.Cwd
	}
	if len(p.Env) > 0 {
		term.cmd.Env = os.Environ()
		for _, v := range p.Env {
			term.cmd.Env = append(term.cmd.Env, v.Name+"="+v.Value)
		}
	}
	term.cmd.Stdout, term.cmd.Stderr = &term.out, &term.out
	if err := term.cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() {
		term.cmd.Wait()
		close(term.done)
	}()
	id := fmt.Sprintf("term-%d", len(e.terminals)+1)
	e.terminals[id] = term
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (e *editor) terminal(id string) (*terminal, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	term, ok := e.terminals[id]
	if !ok {
		return nil, fmt.Errorf("no terminal %q", id)
	}
	return term, nil
}

func (e *editor) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	term, err := e.terminal(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	term.cmd.Process.Kill()
	<-term.done
	return sdk.KillTerminalResponse{}, nil
}

func (e *editor) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	term, err := e.terminal(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	res := sdk.TerminalOutputResponse{Output: term.out.String()}
	select {
	case <-term.done:
		res.ExitStatus = &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(term.cmd.ProcessState.ExitCode())}
	default:
	}
	return res, nil
}

func (e *editor) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	term, err := e.terminal(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	term.cmd.Process.Kill()
	<-term.done
	e.mu.Lock()
	term.released = true
	e.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

func (e *editor) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	term, err := e.terminal(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-term.done:
		return sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(term.cmd.ProcessState.ExitCode())}, nil
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

// take returns the updates received so far and forgets them.
func (e *editor) take() []sdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]sdk.SessionUpdate, len(e.updates))
	for i, n := range e.updates {
		out[i] = n.Update
	}
	e.updates = nil
	return out
}

// takePermissions returns the permission requests received so far and forgets them.
func (e *editor) takePermissions() []sdk.RequestPermissionRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.permissions
	e.permissions = nil
	return out
}

// fakeModel serves turns as the Gemini API on loopback and returns the environment
// that points agentls at it.
func fakeModel(t testing.TB, turns ...clients.Turn) (*fakegemini.Server, []string) {
	t.Helper()
	fake := fakegemini.Start(clients.Script{Turns: turns})
	t.Cleanup(fake.Close)
	return fake, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL}
}

// call is a scripted function call.
func call(id, name string, args map[string]any) clients.ScriptCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return clients.ScriptCall{ID: id, Name: name, Args: b}
}

// textOf returns the text of a content block, "" for others.
func textOf(b sdk.ContentBlock) string {
	if b.Text != nil {
		return b.Text.Text
	}
	return ""
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codeOf returns the JSON-RPC error code of err, or 0.
func codeOf(err error) int {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// writeFile writes content to name under dir.
func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
