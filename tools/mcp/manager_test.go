package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startManager starts a manager of servers and closes it at the end of the test.
func startManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	m := NewManager(opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := m.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return m
}

// kit starts a manager with one kit server called "kit".
func kit(t *testing.T) *Manager {
	t.Helper()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": kitConfig("kit", nil)}})
	requireState(t, m, "kit", StateConnected)
	return m
}

func requireState(t *testing.T, m *Manager, server string, want State) ServerStatus {
	t.Helper()
	for _, st := range m.Statuses() {
		if st.Name == server {
			if st.State != want {
				t.Fatalf("server %s is %s (%s), want %s", server, st.State, st.Error, want)
			}
			return st
		}
	}
	t.Fatalf("no status for server %s", server)
	return ServerStatus{}
}

func toolNamed(t *testing.T, m *Manager, name string) tools.Tool {
	t.Helper()
	var names []string
	for _, tool := range m.Tools() {
		if tool.Info().Name == name {
			return tool
		}
		names = append(names, tool.Info().Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return nil
}

func toolNames(m *Manager) []string {
	var names []string
	for _, tool := range m.Tools() {
		names = append(names, tool.Info().Name)
	}
	return names
}

// call validates, builds and runs one call of the named tool.
func call(ctx context.Context, t *testing.T, m *Manager, name, args string) (*tools.Result, error) {
	t.Helper()
	return testutil.Call(ctx, t, toolNamed(t, m, name), args, nil)
}

func mustCall(t *testing.T, m *Manager, name, args string) *tools.Result {
	t.Helper()
	r, err := call(t.Context(), t, m, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return r
}

// waitFile waits for the marker file the server leaves.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the server never wrote %s", path)
}

func TestStdioToolsAndCall(t *testing.T) {
	t.Parallel()
	m := kit(t)
	echo := toolNamed(t, m, "kit__echo")
	info := echo.Info()
	// echo says it only reads (readOnlyHint), but the settings do not: its kind is other.
	if info.DisplayName != "echo (kit)" || info.Source != tools.SourceMCP || info.Server != "kit" ||
		info.Kind != tools.KindOther || info.Description != "Echoes message." || !info.Idempotent {
		t.Errorf("info = %+v", info)
	}
	r := mustCall(t, m, "kit__echo", `{"message":"hi"}`)
	if r.Output != "echo: hi" || r.Summary != "echo (kit): echo: hi" {
		t.Errorf("result = %+v", r)
	}
	// The kit offers resources, so the resource tools are there.
	toolNamed(t, m, ListResourcesName)
	toolNamed(t, m, ReadResourceName)
	st := requireState(t, m, "kit", StateConnected)
	if st.Transport != TransportStdio || st.Tools != len(m.Tools())-2 || !st.Prompts || !st.Resources || !st.Trusted {
		t.Errorf("status = %+v", st)
	}
}

func TestCrashMidCallThenReconnect(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var states []State
	m := startManager(t, Options{
		Servers: map[string]ServerConfig{"kit": kitConfig("kit", nil)},
		OnStatus: func(st ServerStatus) {
			mu.Lock()
			states = append(states, st.State)
			mu.Unlock()
		},
	})
	_, err := call(t.Context(), t, m, "kit__crash", `{}`)
	if testutil.ErrorType(err) != tools.ErrExecutionFailed {
		t.Fatalf("crash: err = %v, want execution_failed", err)
	}
	for _, want := range []string{`MCP server "kit"`, "exit status 3", "deliberate crash", "next call will try to reconnect"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	st := requireState(t, m, "kit", StateDisconnected)
	if !strings.Contains(st.Error, "exit status 3") {
		t.Errorf("status error = %q", st.Error)
	}
	// The tools stay registered, and the next call reconnects.
	if r := mustCall(t, m, "kit__echo", `{"message":"again"}`); r.Output != "echo: again" {
		t.Errorf("after reconnecting: %q", r.Output)
	}
	requireState(t, m, "kit", StateConnected)
	mu.Lock()
	defer mu.Unlock()
	// (A status is also reported when only the number of tools changes.)
	states = slices.Compact(states)
	want := []State{StateConnecting, StateConnected, StateDisconnected, StateConnecting, StateConnected}
	if !slices.Equal(states, want) {
		t.Errorf("status changes = %v, want %v", states, want)
	}
}

func TestCallTimeoutCancelsRequest(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	cfg := kitConfig("kit", map[string]string{markDirEnv: marks})
	cfg.Timeout = 300
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": cfg}})
	_, err := call(t.Context(), t, m, "kit__hang", `{}`)
	if testutil.ErrorType(err) != tools.ErrTimeout || !strings.Contains(err.Error(), "300ms") || !strings.Contains(err.Error(), `"kit"`) {
		t.Fatalf("err = %v, want a timeout naming the server and 300ms", err)
	}
	waitFile(t, filepath.Join(marks, "cancelled")) // notifications/cancelled arrived
	// The server is still fine.
	mustCall(t, m, "kit__echo", `{"message":"still there"}`)
	requireState(t, m, "kit", StateConnected)
}

// lineWriter collects live output and signals when it has n lines.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	n     int
	ready chan struct{}
}

func newLineWriter(n int) *lineWriter { return &lineWriter{n: n, ready: make(chan struct{})} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Count(w.buf.String(), "\n") >= w.n && w.n > 0 {
		w.n = 0
		close(w.ready)
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestProgressAndCancellation(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": kitConfig("kit", map[string]string{markDirEnv: marks})}})
	steps := toolNamed(t, m, "kit__steps")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := newLineWriter(3)
	inv, err := testutil.Build(t, steps, `{"n":3,"wait":true}`)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := inv.Execute(ctx, out)
		errc <- err
	}()
	<-out.ready
	want := "progress 1/3: step 1\nprogress 2/3: step 2\nprogress 3/3: step 3\n"
	if got := out.String(); got != want {
		t.Errorf("live output = %q, want %q", got, want)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: err = %v, want context.Canceled", err)
	}
	waitFile(t, filepath.Join(marks, "cancelled"))
	mustCall(t, m, "kit__echo", `{"message":"after cancel"}`)
}

func TestToolErrorResult(t *testing.T) {
	t.Parallel()
	m := kit(t)
	_, err := call(t.Context(), t, m, "kit__fail", `{}`)
	if testutil.ErrorType(err) != tools.ErrExecutionFailed || !strings.Contains(err.Error(), "the disk is on fire") ||
		!strings.Contains(err.Error(), `"kit"`) {
		t.Fatalf("err = %v", err)
	}
	// A call of a tool the server does not know is a protocol error, also execution_failed.
	tool := toolNamed(t, m, "kit__echo").(*Tool)
	ghost := &Tool{srv: tool.srv, raw: "ghost", info: tool.info}
	_, err = testutil.Call(t.Context(), t, ghost, `{"message":"x"}`, nil)
	if testutil.ErrorType(err) != tools.ErrExecutionFailed || !strings.Contains(err.Error(), "refused the call of ghost") {
		t.Fatalf("unknown tool: err = %v", err)
	}
	requireState(t, m, "kit", StateConnected)
}

func TestResultContent(t *testing.T) {
	t.Parallel()
	m := kit(t)
	r := mustCall(t, m, "kit__media", `{}`)
	wantParts := []tools.Part{
		{MIMEType: "image/png", Data: []byte("PNGDATA")},
		{MIMEType: "audio/wav", Data: []byte("WAVDATA")},
		{MIMEType: "application/zip", Data: []byte("ZIPDATA")},
	}
	if len(r.Parts) != len(wantParts) {
		t.Fatalf("parts = %+v", r.Parts)
	}
	for i, p := range wantParts {
		if r.Parts[i].MIMEType != p.MIMEType || string(r.Parts[i].Data) != string(p.Data) {
			t.Errorf("part %d = %s %q, want %s %q", i, r.Parts[i].MIMEType, r.Parts[i].Data, p.MIMEType, p.Data)
		}
	}
	want := strings.Join([]string{
		"here it is",
		"[image/png image, 7 bytes, attached]",
		"[audio/wav audio, 7 bytes, attached]",
		"embedded text",
		"[application/zip resource test://bin, 7 bytes, attached]",
		"Resource link: linked <test://linked> (text/markdown): a linked page",
	}, "\n")
	if r.Output != want {
		t.Errorf("output =\n%s\nwant\n%s", r.Output, want)
	}
}

func TestDraft07Schema(t *testing.T) {
	t.Parallel()
	m := kit(t)
	tool := toolNamed(t, m, "kit__draft07")
	var params map[string]any
	if err := json.Unmarshal(tool.Info().Parameters, &params); err != nil {
		t.Fatal(err)
	}
	if _, ok := params["$schema"]; ok {
		t.Errorf("$schema kept: %s", tool.Info().Parameters)
	}
	if _, ok := params["definitions"]; !ok {
		t.Errorf("definitions dropped: %s", tool.Info().Parameters)
	}
	if _, err := tools.NewValidator(tool.Info().Parameters); err != nil {
		t.Fatalf("the validator rejects the schema: %v", err)
	}
	r := mustCall(t, m, "kit__draft07", `{"color":"red","pair":["a",1],"size":2,"weird":"x","remote":{}}`)
	if !strings.Contains(r.Output, `"color":"red"`) {
		t.Errorf("output = %q", r.Output)
	}
	// What can be checked still is: the $ref to definitions, the exclusive minimum.
	for _, args := range []string{`{"color":"blue"}`, `{"color":"red","size":0}`} {
		if _, err := call(t.Context(), t, m, "kit__draft07", args); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("%s: err = %v, want invalid_tool_params", args, err)
		}
	}
}

func TestInputSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		want  string
		notes int
	}{
		{"plain", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`, 0},
		{"$schema dropped", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, `{"type":"object"}`, 0},
		{"draft-04 exclusiveMinimum", `{"type":"object","properties":{"n":{"type":"number","minimum":1,"exclusiveMinimum":true}}}`,
			`{"properties":{"n":{"exclusiveMinimum":1,"type":"number"}},"type":"object"}`, 1},
		{"draft-04 exclusiveMaximum false", `{"type":"object","properties":{"n":{"maximum":5,"exclusiveMaximum":false}}}`,
			`{"properties":{"n":{"maximum":5}},"type":"object"}`, 1},
		{"unknown type", `{"type":"object","properties":{"s":{"type":"strin","description":"d"}}}`,
			`{"properties":{"s":{"description":"d"}},"type":"object"}`, 0},
		{"remote ref", `{"type":"object","properties":{"r":{"$ref":"https://example.com/x.json"}}}`,
			`{"properties":{"r":{}},"type":"object"}`, 0},
		{"not an object", `"string"`, `{"type":"object"}`, 1},
		{"null", `null`, `{"type":"object"}`, 1},
		{"type string", `{"type":"string"}`, `{"type":"object"}`, 1},
		{"$ref by the document's own $id", `{"$id":"https://example.com/s.json","type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/$defs/x"},"b":{"$ref":"s.json#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
			`{"$defs":{"x":{"type":"string"}},"$id":"https://example.com/s.json","properties":{"a":{"$ref":"https://example.com/s.json#/$defs/x"},"b":{"$ref":"s.json#/$defs/x"}},"type":"object"}`, 0},
		{"large numbers kept", `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`,
			`{"properties":{"n":{"maximum":9007199254740993,"type":"integer"}},"type":"object"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in any
			if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
				t.Fatal(err)
			}
			if tt.name == "large numbers kept" {
				in = json.RawMessage(tt.in) // as a server's raw schema, not through float64
			}
			got, notes := inputSchema(in)
			if string(got) != tt.want {
				t.Errorf("schema = %s, want %s", got, tt.want)
			}
			if tt.notes > 0 && len(notes) == 0 {
				t.Errorf("no notes, want some")
			}
			if _, err := tools.NewValidator(got); err != nil {
				t.Errorf("validator rejects %s: %v", got, err)
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"a": kitConfig("kit", nil), "b": kitConfig("kit", nil),
	}})
	a := mustCall(t, m, "a__echo", `{"message":"1"}`)
	b := mustCall(t, m, "b__echo", `{"message":"2"}`)
	if a.Summary != "echo (a): echo: 1" || b.Summary != "echo (b): echo: 2" {
		t.Errorf("a: %q, b: %q", a.Summary, b.Summary)
	}
	// "x_y" keeps its valid name; "x y", which sanitises to the same, gets a suffix.
	if r := mustCall(t, m, "a__x_y", `{}`); r.Output != `I am "x_y"` {
		t.Errorf("a__x_y: %q", r.Output)
	}
	if r := mustCall(t, m, "a__x_y_2", `{}`); r.Output != `I am "x y"` {
		t.Errorf("a__x_y_2: %q", r.Output)
	}
	if got := toolNamed(t, m, "a__x_y_2").(*Tool).ServerTool(); got != "x y" {
		t.Errorf("ServerTool = %q", got)
	}
	names := toolNames(m)
	if len(names) != len(slices.Compact(slices.Clone(names))) {
		t.Errorf("duplicate names: %v", names)
	}
	for _, n := range names {
		if n != tools.SanitizeName(n) {
			t.Errorf("name %q is not a valid function name", n)
		}
	}
}

func TestAssignNames(t *testing.T) {
	t.Parallel()
	m := NewManager(Options{Servers: map[string]ServerConfig{"my server": {}, "my_server": {}, "s": {}}})
	defer m.Close()
	first := m.assignNames(m.servers["my server"], []string{"echo"}, nil)
	second := m.assignNames(m.servers["my_server"], []string{"echo"}, nil)
	if first["echo"] != "my_server__echo" || second["echo"] != "my_server__echo_2" {
		t.Errorf("names = %v, %v", first, second)
	}
	long := strings.Repeat("very_long_tool_name_", 5)
	got := m.assignNames(m.servers["s"], []string{long, long + "x"}, nil)
	if n := got[long]; len(n) != 63 || !strings.HasPrefix(n, "s__very_long") || !strings.Contains(n, "___") {
		t.Errorf("long name = %q (%d)", n, len(n))
	}
	if a, b := got[long], got[long+"x"]; a == b || len(b) > 63 {
		t.Errorf("long names %q and %q", a, b)
	}
	// A reload keeps names, and frees those of tools that went away.
	again := m.assignNames(m.servers["my server"], []string{"other", "echo"}, first)
	if again["echo"] != "my_server__echo" || again["other"] != "my_server__other" {
		t.Errorf("reload names = %v", again)
	}
	m.assignNames(m.servers["my server"], nil, again)
	if got := m.assignNames(m.servers["my_server"], []string{"echo"}, second); got["echo"] != "my_server__echo_2" {
		t.Errorf("kept name = %v", got)
	}
}

func TestIncludeExclude(t *testing.T) {
	t.Parallel()
	cfg := kitConfig("kit", nil)
	cfg.IncludeTools = []string{"echo", "fail", "crash"}
	cfg.ExcludeTools = []string{"crash", "media"}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": cfg}})
	want := []string{"kit__echo", "kit__fail", ListResourcesName, ReadResourceName}
	if got := toolNames(m); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	cfg = kitConfig("kit", nil)
	cfg.ExcludeTools = []string{"crash"}
	m = startManager(t, Options{Servers: map[string]ServerConfig{"kit": cfg}})
	if got := toolNames(m); slices.Contains(got, "kit__crash") || !slices.Contains(got, "kit__hang") {
		t.Errorf("tools = %v", got)
	}
}

func TestEnvExpansionAndCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WHO": "world", "N": "3"}
	cfg := kitConfig("kit", map[string]string{"GREETING": "hello ${WHO}, $WHO$N times", "MISSING": "[$NOPE]"})
	sub := cfg
	sub.Cwd = "sub"
	m := startManager(t, Options{
		Servers: map[string]ServerConfig{"kit": cfg, "sub": sub},
		Dir:     dir,
		Getenv:  func(k string) string { return env[k] },
	})
	if r := mustCall(t, m, "kit__getenv", `{"name":"GREETING"}`); r.Output != "GREETING=hello world, world3 times" {
		t.Errorf("GREETING: %q", r.Output)
	}
	if r := mustCall(t, m, "kit__getenv", `{"name":"MISSING"}`); r.Output != "MISSING=[]" {
		t.Errorf("MISSING: %q", r.Output)
	}
	if r := mustCall(t, m, "kit__cwd", `{}`); r.Output != dir {
		t.Errorf("cwd = %q, want %q", r.Output, dir)
	}
	if r := mustCall(t, m, "sub__cwd", `{}`); r.Output != filepath.Join(dir, "sub") {
		t.Errorf("cwd = %q, want %q", r.Output, filepath.Join(dir, "sub"))
	}
}

func TestSecretsReachServerButNotLog(t *testing.T) {
	t.Parallel()
	const token, team, envSecret = "s3cr3t-t0ken-value", "team-secret-42", "env-secret-value-99"
	getenv := func(k string) string {
		return map[string]string{"TOKEN": token, "TEAM": team, "API_KEY": envSecret}[k]
	}
	var logs testutil.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, sse := range []bool{false, true} {
		k := newHTTPKit(t, sse)
		cfg := ServerConfig{URL: k.URL, Trust: true,
			Headers: map[string]string{"Authorization": "Bearer $TOKEN", "X-Team": "${TEAM}"}}
		if sse {
			cfg.Type = "sse"
		}
		stdio := kitConfig("kit", map[string]string{"API_KEY": "$API_KEY"})
		m := startManager(t, Options{Servers: map[string]ServerConfig{"web": cfg, "kit": stdio}, Logger: logger, Getenv: getenv})
		st := requireState(t, m, "web", StateConnected)
		if want := map[bool]string{false: TransportHTTP, true: TransportSSE}[sse]; st.Transport != want {
			t.Errorf("transport = %s, want %s", st.Transport, want)
		}
		if r := mustCall(t, m, "web__echo", `{"message":"over http"}`); r.Output != "echo: over http" {
			t.Errorf("echo: %q", r.Output)
		}
		if r := mustCall(t, m, "kit__getenv", `{"name":"API_KEY"}`); r.Output != "API_KEY="+envSecret {
			t.Errorf("env: %q", r.Output)
		}
		hdrs := k.headers()
		if len(hdrs) == 0 {
			t.Fatal("the server saw no request")
		}
		for _, h := range hdrs {
			if h.Get("Authorization") != "Bearer "+token || h.Get("X-Team") != team {
				t.Errorf("request headers = %v", h)
				break
			}
		}
		// Also a call that fails on the HTTP server gets logged without secrets.
		_, _ = call(t.Context(), t, m, "web__fail", `{}`)
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "server=web") || !strings.Contains(out, "MCP server connected") {
		t.Errorf("log lacks the connection events:\n%s", out)
	}
	for _, secret := range []string{token, team, envSecret} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains secret %q:\n%s", secret, out)
		}
	}
}

func TestProgressOverHTTP(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		k := newHTTPKit(t, sse)
		cfg := ServerConfig{URL: k.URL, Trust: true}
		if sse {
			cfg.Type = "sse"
		}
		m := startManager(t, Options{Servers: map[string]ServerConfig{"web": cfg}})
		out := newLineWriter(2)
		inv, err := testutil.Build(t, toolNamed(t, m, "web__steps"), `{"n":2}`)
		if err != nil {
			t.Fatal(err)
		}
		r, err := inv.Execute(t.Context(), out)
		if err != nil || r.Output != "2 steps done" {
			t.Fatalf("sse=%v: %v %+v", sse, err, r)
		}
		<-out.ready
		if got := out.String(); got != "progress 1/2: step 1\nprogress 2/2: step 2\n" {
			t.Errorf("sse=%v: progress = %q", sse, got)
		}
	}
}

func TestFailedServersDoNotStopOthers(t *testing.T) {
	t.Parallel()
	silent := kitConfig("silent", nil)
	silent.Timeout = 500
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"kit":     kitConfig("kit", nil),
		"silent":  silent,
		"exits":   kitConfig("exit", nil),
		"missing": {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"invalid": {URL: "http://127.0.0.1:1/mcp", Command: "x"},
		"refused": {URL: "http://127.0.0.1:1/mcp", Timeout: 2000},
	}})
	requireState(t, m, "kit", StateConnected)
	mustCall(t, m, "kit__echo", `{"message":"fine"}`)
	for server, want := range map[string]string{
		"silent":  "did not complete the MCP handshake within 500ms",
		"exits":   "fatal: missing configuration file",
		"missing": "no-such-server",
		"invalid": "invalid configuration",
		"refused": "could not be reached",
	} {
		st := requireState(t, m, server, StateError)
		if !strings.Contains(st.Error, want) {
			t.Errorf("%s: error %q does not mention %q", server, st.Error, want)
		}
	}
	for _, name := range toolNames(m) {
		if !strings.HasPrefix(name, "kit__") && name != ListResourcesName && name != ReadResourceName {
			t.Errorf("tool %s of a failed server", name)
		}
	}
	// A failed server is not retried before its backoff has passed.
	s := m.servers["missing"]
	_, err := s.session(t.Context())
	if err == nil || !strings.Contains(err.Error(), "the next attempt to connect is in") {
		t.Errorf("second attempt: %v", err)
	}
	// Reconnect ignores the backoff (and fails again, the command being missing).
	if err := m.Reconnect(t.Context(), "missing"); err == nil || strings.Contains(err.Error(), "next attempt") {
		t.Errorf("Reconnect: %v", err)
	}
	if err := m.Reconnect(t.Context(), "nobody"); err == nil {
		t.Error("Reconnect of an unknown server succeeded")
	}
}

func TestToolOfDeadServerFailsClearly(t *testing.T) {
	t.Parallel()
	m := kit(t)
	echo := toolNamed(t, m, "kit__echo")
	s := m.servers["kit"]
	// The server's command goes away, then the server dies: the tool stays and says why
	// it cannot run.
	s.cfg.Command = filepath.Join(t.TempDir(), "gone")
	_, err := call(t.Context(), t, m, "kit__crash", `{}`)
	if err == nil {
		t.Fatal("crash succeeded")
	}
	// The crash's answer may come before the server's exit is noticed; the call after
	// the exit is the one that must say the server cannot be started.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st := m.Statuses()
		if i := slices.IndexFunc(st, func(s ServerStatus) bool { return s.Name == "kit" }); i >= 0 && st[i].State != StateConnected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed server still counts as connected after 10 s")
		}
	}
	_, err = testutil.Call(t.Context(), t, echo, `{"message":"x"}`, nil)
	if testutil.ErrorType(err) != tools.ErrExecutionFailed || !strings.Contains(err.Error(), `MCP server "kit" could not be started`) {
		t.Fatalf("err = %v", err)
	}
	if !slices.Contains(toolNames(m), "kit__echo") {
		t.Error("the dead server's tools were dropped")
	}
	requireState(t, m, "kit", StateError)
}

// TestToolKindFromSettings: a tool is a read (which plan mode runs) only when the
// settings say the server's tools are read-only (red team R14), whatever its
// readOnlyHint; the hint is only shown, in the question about an untrusted server's call.
func TestToolKindFromSettings(t *testing.T) {
	readOnly := kitConfig("kit", nil)
	readOnly.ReadOnly = true
	untrusted := kitConfig("kit", nil)
	untrusted.Trust = false
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": kitConfig("kit", nil), "ro": readOnly, "asked": untrusted}})
	for _, tt := range []struct {
		tool  string
		kind  tools.Kind
		title string // of the question; "" when nobody is asked
	}{
		{"kit__echo", tools.KindOther, ""},
		{"kit__fail", tools.KindOther, ""},
		{"ro__echo", tools.KindRead, ""},
		{"ro__fail", tools.KindRead, ""},
		{"asked__echo", tools.KindOther, "Run echo from MCP server asked (the server says it only reads)"},
		{"asked__fail", tools.KindOther, "Run fail from MCP server asked"},
	} {
		tool := toolNamed(t, m, tt.tool)
		if got := tool.Info().Kind; got != tt.kind {
			t.Errorf("%s: kind %s, want %s", tt.tool, got, tt.kind)
		}
		args := `{}`
		if strings.HasSuffix(tt.tool, "__echo") {
			args = `{"message":"hi"}`
		}
		inv, err := testutil.Build(t, tool, args)
		if err != nil {
			t.Fatal(err)
		}
		d, err := inv.Confirmation(t.Context())
		if err != nil || (d == nil) != (tt.title == "") || (d != nil && d.Title != tt.title) {
			t.Errorf("%s: Confirmation = %+v, %v; want the title %q", tt.tool, d, err, tt.title)
		}
	}
}

func TestConfirmation(t *testing.T) {
	t.Parallel()
	untrusted := kitConfig("kit", nil)
	untrusted.Trust = false
	m := startManager(t, Options{Servers: map[string]ServerConfig{"kit": untrusted, "trusted": kitConfig("kit", nil)}})
	inv, err := testutil.Build(t, toolNamed(t, m, "kit__echo"), `{"message":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(t.Context())
	if err != nil || d == nil {
		t.Fatalf("Confirmation = %v, %v", d, err)
	}
	if d.Type != confirm.TypeMCP || d.Server != "kit" || d.Tool != "echo" || string(d.Arguments) != `{"message":"hi"}` || d.Title == "" {
		t.Errorf("details = %+v", d)
	}
	inv, err = testutil.Build(t, toolNamed(t, m, "trusted__echo"), `{"message":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := inv.Confirmation(t.Context()); d != nil || err != nil {
		t.Errorf("trusted: Confirmation = %+v, %v", d, err)
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	reloads := make(chan []string, 10)
	m := startManager(t, Options{
		Servers: map[string]ServerConfig{"kit": kitConfig("kit", nil)},
		OnTools: func(server string, ts []tools.Tool) {
			var names []string
			for _, tool := range ts {
				names = append(names, tool.Info().Name)
			}
			reloads <- names
		},
	})
	if first := <-reloads; !slices.Contains(first, "kit__echo") || slices.Contains(first, "kit__added") {
		t.Fatalf("first load = %v", first)
	}
	mustCall(t, m, "kit__add_tool", `{}`)
	select {
	case names := <-reloads:
		if !slices.Contains(names, "kit__added") || !slices.Contains(names, "kit__echo") {
			t.Fatalf("reload = %v", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no reload after tools/list_changed")
	}
	if r := mustCall(t, m, "kit__added", `{}`); r.Output != "added works" {
		t.Errorf("added: %q", r.Output)
	}
}

func TestPromptsAndResources(t *testing.T) {
	t.Parallel()
	m := kit(t)
	prompts, err := m.Prompts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []PromptInfo{{Server: "kit", Name: "greet", Description: "Greets someone.",
		Arguments: []PromptArgument{{Name: "name", Description: "who", Required: true}}}}
	if len(prompts) != 1 || prompts[0].Name != want[0].Name || prompts[0].Description != want[0].Description ||
		!slices.Equal(prompts[0].Arguments, want[0].Arguments) {
		t.Errorf("prompts = %+v", prompts)
	}
	text, err := m.GetPrompt(t.Context(), "kit", "greet", map[string]string{"name": "Ann"})
	if err != nil || text != "Hello, Ann.\n\nHow can I help?" {
		t.Errorf("GetPrompt = %q, %v", text, err)
	}
	if _, err := m.GetPrompt(t.Context(), "kit", "nope", nil); err == nil {
		t.Error("unknown prompt: no error")
	}
	if _, err := m.GetPrompt(t.Context(), "nobody", "greet", nil); err == nil {
		t.Error("unknown server: no error")
	}

	r := mustCall(t, m, ListResourcesName, `{}`)
	if r.Output != "kit: test://hello — hello (text/plain): A greeting." {
		t.Errorf("list = %q", r.Output)
	}
	mustCall(t, m, ListResourcesName, `{"server":"kit"}`)
	if _, err := call(t.Context(), t, m, ListResourcesName, `{"server":"nobody"}`); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("unknown server: %v", err)
	}
	r = mustCall(t, m, ReadResourceName, `{"server":"kit","uri":"test://hello"}`)
	if r.Output != "hello resource" {
		t.Errorf("read = %q", r.Output)
	}
	if _, err := call(t.Context(), t, m, ReadResourceName, `{"server":"kit","uri":"test://nope"}`); testutil.ErrorType(err) != tools.ErrExecutionFailed {
		t.Errorf("unknown resource: %v", err)
	}
}

func TestToolsBeforeStart(t *testing.T) {
	t.Parallel()
	cfg := kitConfig("kit", nil)
	m := NewManager(Options{Servers: map[string]ServerConfig{"kit": cfg}})
	defer m.Close()
	if got := m.Tools(); len(got) != 0 {
		t.Errorf("tools before Start = %d", len(got))
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	m := NewManager(Options{Servers: map[string]ServerConfig{"kit": kitConfig("kit", nil)}})
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	echo := toolNamed(t, m, "kit__echo")
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	requireState(t, m, "kit", StateDisconnected)
	if _, err := testutil.Call(t.Context(), t, echo, `{"message":"x"}`, nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close: %v", err)
	}
	if err := m.Start(t.Context()); err == nil {
		t.Error("Start after Close succeeded")
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestServerConfigTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg     ServerConfig
		want    string
		wantErr string
	}{
		{ServerConfig{Command: "x"}, TransportStdio, ""},
		{ServerConfig{URL: "http://h"}, TransportHTTP, ""},
		{ServerConfig{URL: "http://h", Type: "http"}, TransportHTTP, ""},
		{ServerConfig{URL: "http://h", Type: "sse"}, TransportSSE, ""},
		{ServerConfig{HTTPURL: "http://h"}, TransportHTTP, ""},
		{ServerConfig{URL: "http://h", Type: "websocket"}, "", `"type" is "websocket"`},
		{ServerConfig{}, "", "neither"},
		{ServerConfig{Command: "x", URL: "http://h"}, "", "only one"},
	}
	for _, tt := range tests {
		got, err := tt.cfg.Transport()
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v: Transport() = %q, %v; want %q, %q", tt.cfg, got, err, tt.want, tt.wantErr)
		}
	}
	if err := (ServerConfig{Command: "x", Timeout: -1}).Validate(); err == nil {
		t.Error("negative timeout accepted")
	}
	if d := (ServerConfig{}).RequestTimeout(); d != DefaultRequestTimeout {
		t.Errorf("default request timeout = %v", d)
	}
	if d := (ServerConfig{Timeout: 1500}).ConnectTimeout(); d != 1500*time.Millisecond {
		t.Errorf("connect timeout = %v", d)
	}
}

func TestStderrLog(t *testing.T) {
	t.Parallel()
	var logs testutil.Buffer
	l := newStderrLog(slog.New(slog.NewTextHandler(&logs, nil)), "srv")
	_, _ = l.Write([]byte("first\r\nsec"))
	_, _ = l.Write([]byte("ond\n\n" + strings.Repeat("x", 3000) + "\nlast partial"))
	out := logs.String()
	if !strings.Contains(out, "line=first") || !strings.Contains(out, "line=second") || strings.Contains(out, strings.Repeat("x", maxStderrLine+1)) {
		t.Errorf("log = %s", out)
	}
	if got := l.lastLines(); !strings.HasPrefix(got, "first | second | xxx") || !strings.HasSuffix(got, " | last partial") {
		t.Errorf("lastLines = %q", got)
	}
	for range maxStderrLines + 10 {
		_, _ = l.Write([]byte("spam\n"))
	}
	if n := strings.Count(logs.String(), "MCP server stderr"); n != maxStderrLines {
		t.Errorf("%d lines logged, want %d", n, maxStderrLines)
	}
	if !strings.Contains(logs.String(), "further lines are not logged") {
		t.Error("no note about the suppressed lines")
	}
}

// TestCloseWhileConnecting: closing a manager whose server is still connecting (a
// configuration change does that) leaves it disconnected, saying it was closed: not
// failed with a timeout it never had, and with nothing reported after Close returns.
func TestCloseWhileConnecting(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var reports []ServerStatus
	closed := false
	var afterClose []ServerStatus
	connecting := make(chan struct{})
	var once sync.Once
	m := NewManager(Options{
		Servers: map[string]ServerConfig{"silent": kitConfig("silent", nil)},
		OnStatus: func(st ServerStatus) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, st)
			if closed {
				afterClose = append(afterClose, st)
			}
			if st.State == StateConnecting {
				once.Do(func() { close(connecting) })
			}
		},
	})
	started := make(chan struct{})
	go func() {
		defer close(started)
		_ = m.Start(context.Background())
	}()
	select {
	case <-connecting:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never started connecting")
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	mu.Lock()
	closed = true
	mu.Unlock()
	<-started
	st := requireState(t, m, "silent", StateDisconnected)
	if strings.Contains(st.Error, "within") {
		t.Errorf("status after Close = %+v: the attempt was cut short by Close, not timed out", st)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range reports {
		if r.State == StateError {
			t.Errorf("reported %+v while closing", r)
		}
	}
	if len(afterClose) > 0 {
		t.Errorf("statuses reported after Close returned: %+v", afterClose)
	}
}

// messages is a slog.Handler that sends the message of each record to a channel.
type messages chan string

func (h messages) Enabled(context.Context, slog.Level) bool { return true }
func (h messages) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h messages) WithGroup(string) slog.Handler            { return h }
func (h messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default: // the test reads only what it waits for
	}
	return nil
}

// TestListChangedReloadEndsWithManager checks that the reload of a server's tools after
// tools/list_changed runs under the manager's context: when that ends (Close ends it
// first), a reload waiting for the server stops, rather than at its own timeout.
func TestListChangedReloadEndsWithManager(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"},
		&sdk.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	noop := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil }
	srv.AddTool(&sdk.Tool{Name: "first", InputSchema: objectSchema}, noop)
	var (
		lists   int
		mu      sync.Mutex
		blocked = make(chan struct{})
		release = make(chan struct{})
	)
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			mu.Lock()
			lists++
			n := lists
			mu.Unlock()
			if n != 2 {
				return next(ctx, method, req)
			}
			// The reload after the change: answered only when it is given up.
			close(blocked)
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil, errors.New("gave up")
		}
	})
	logged := make(messages, 100)
	m := startManager(t, Options{
		// A timeout longer than any test: only the manager's context can end the reload.
		Servers: map[string]ServerConfig{"slow": {Command: "unused", Timeout: int(time.Hour / time.Millisecond)}},
		Transport: func(context.Context, string, ServerConfig) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			if _, err := srv.Connect(t.Context(), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		},
		Logger: slog.New(logged),
	})
	t.Cleanup(func() { close(release) }) // before Close, which cleanups run after
	requireState(t, m, "slow", StateConnected)

	srv.AddTool(&sdk.Tool{Name: "second", InputSchema: objectSchema}, noop)
	<-blocked
	m.cancel()
	for msg := range logged {
		if msg == "MCP server's changed tools could not be listed" {
			break
		}
	}
}
