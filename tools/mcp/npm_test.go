package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// npmServer returns the entry point of an installed npm MCP server.
func npmServer(t testing.TB, pkg string) string { return testutil.NPMServer(t, pkg) }

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEverythingHTTP runs server-everything with an HTTP transport ("sse" or
// "streamableHttp") on a free loopback port and returns the port once it listens.
func startEverythingHTTP(t *testing.T, transport string) int {
	t.Helper()
	entry := npmServer(t, "server-everything")
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cmd := exec.Command("node", entry, transport)
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		listening := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			found := false
			for sc.Scan() {
				line := sc.Text()
				if !found && strings.Contains(line, fmt.Sprint(port)) && !strings.Contains(line, "in use") {
					found = true
					listening <- true
				}
			}
			if !found {
				listening <- false
			}
		}()
		ok := false
		select {
		case ok = <-listening:
		case <-time.After(30 * time.Second):
		}
		if ok {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})
			return port
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if attempt == 2 {
			t.Fatalf("server-everything %s did not start", transport)
		}
	}
}

func everythingStdio(t testing.TB) ServerConfig {
	return ServerConfig{Command: "node", Args: []string{npmServer(t, "server-everything"), "stdio"}, Trust: true}
}

// exerciseEverything runs the checks every transport of server-everything must pass.
func exerciseEverything(t *testing.T, m *Manager) {
	t.Helper()
	requireState(t, m, "everything", StateConnected)
	names := toolNames(m)
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__trigger-long-running-operation", ListResourcesName} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %s among %v", want, names)
		}
	}
	if info := toolNamed(t, m, "everything__get-sum").Info(); info.DisplayName != "get-sum (everything)" || info.Kind != tools.KindOther {
		t.Errorf("get-sum info = %+v", info)
	}
	if r := mustCall(t, m, "everything__echo", `{"message":"hello"}`); r.Output != "Echo: hello" {
		t.Errorf("echo: %q", r.Output)
	}
	if r := mustCall(t, m, "everything__get-sum", `{"a":2,"b":3.5}`); r.Output != "The sum of 2 and 3.5 is 5.5." {
		t.Errorf("get-sum: %q", r.Output)
	}

	// A bad argument: our validator catches it first...
	if _, err := call(t.Context(), t, m, "everything__get-sum", `{"a":"two","b":3}`); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("bad argument through the validator: %v", err)
	}
	// ...and the server reports it when it gets there anyway.
	inv, err := toolNamed(t, m, "everything__get-sum").Build([]byte(`{"a":"two","b":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Execute(t.Context(), io.Discard); testutil.ErrorType(err) != tools.ErrExecutionFailed ||
		!strings.Contains(err.Error(), `"everything"`) || !strings.Contains(strings.ToLower(err.Error()), "invalid") {
		t.Errorf("bad argument at the server: %v", err)
	}

	// Progress: 3 steps over 0.3 s.
	out := newLineWriter(3)
	inv, err = testutil.Build(t, toolNamed(t, m, "everything__trigger-long-running-operation"), `{"duration":0.3,"steps":3}`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := inv.Execute(t.Context(), out)
	if err != nil || !strings.Contains(r.Output, "Long running operation completed") {
		t.Fatalf("long-running: %v %+v", err, r)
	}
	if got := out.String(); got != "progress 1/3\nprogress 2/3\nprogress 3/3\n" {
		t.Errorf("progress = %q", got)
	}

	// Cancellation after the first progress report of a long operation.
	ctx, cancel := context.WithCancel(t.Context())
	out = newLineWriter(1)
	inv, err = testutil.Build(t, toolNamed(t, m, "everything__trigger-long-running-operation"), `{"duration":60,"steps":600}`)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := inv.Execute(ctx, out)
		errc <- err
	}()
	<-out.ready
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	mustCall(t, m, "everything__echo", `{"message":"still alive"}`)

	// Images come back as parts.
	r = mustCall(t, m, "everything__get-tiny-image", `{}`)
	if len(r.Parts) != 1 || r.Parts[0].MIMEType != "image/png" || len(r.Parts[0].Data) == 0 {
		t.Errorf("tiny image parts = %d %+v", len(r.Parts), r.Summary)
	}

	// Prompts.
	prompts, err := m.Prompts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var args *PromptInfo
	for i, p := range prompts {
		if p.Name == "args-prompt" {
			args = &prompts[i]
		}
	}
	if args == nil || args.Server != "everything" || !slices.ContainsFunc(args.Arguments, func(a PromptArgument) bool { return a.Name == "city" && a.Required }) {
		t.Fatalf("prompts = %+v", prompts)
	}
	text, err := m.GetPrompt(t.Context(), "everything", "args-prompt", map[string]string{"city": "Lisbon"})
	if err != nil || !strings.Contains(text, "Lisbon") {
		t.Errorf("args-prompt = %q, %v", text, err)
	}
	if text, err := m.GetPrompt(t.Context(), "everything", "simple-prompt", nil); err != nil || text == "" {
		t.Errorf("simple-prompt = %q, %v", text, err)
	}

	// Resources.
	r = mustCall(t, m, ListResourcesName, `{"server":"everything"}`)
	if !strings.Contains(r.Output, "everything: demo://resource/static/document/") || !strings.Contains(r.Output, "template demo://resource/dynamic/text/{") {
		t.Errorf("resources = %s", r.Output)
	}
	r = mustCall(t, m, ReadResourceName, `{"server":"everything","uri":"demo://resource/dynamic/text/1"}`)
	if r.Output == "" {
		t.Errorf("read resource: %+v", r)
	}
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"everything": everythingStdio(t)}})
	exerciseEverything(t, m)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	port := startEverythingHTTP(t, "streamableHttp")
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"everything": {URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Trust: true}}})
	exerciseEverything(t, m)
}

func TestEverythingSSE(t *testing.T) {
	t.Parallel()
	port := startEverythingHTTP(t, "sse")
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"everything": {URL: fmt.Sprintf("http://127.0.0.1:%d/sse", port), Type: "sse", Trust: true}}})
	exerciseEverything(t, m)
}

func TestFilesystemStdio(t *testing.T) {
	t.Parallel()
	entry := npmServer(t, "server-filesystem")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"notes.txt": "line one\nline two\n", "sub/inner.txt": "x"})
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"fs": {Command: "node", Args: []string{entry, dir}}}})
	requireState(t, m, "fs", StateConnected)
	r := mustCall(t, m, "fs__list_directory", fmt.Sprintf(`{"path":%q}`, dir))
	if !strings.Contains(r.Output, "[FILE] notes.txt") || !strings.Contains(r.Output, "[DIR] sub") {
		t.Errorf("list_directory = %q", r.Output)
	}
	r = mustCall(t, m, "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt")))
	if r.Output != "line one\nline two\n" {
		t.Errorf("read_text_file = %q", r.Output)
	}
	_, err = call(t.Context(), t, m, "fs__read_text_file", `{"path":"/etc/passwd"}`)
	if testutil.ErrorType(err) != tools.ErrExecutionFailed || !strings.Contains(err.Error(), `"fs"`) {
		t.Errorf("outside the allowed directory: %v", err)
	}
	// server-filesystem is untrusted here: its calls ask first.
	inv, err := testutil.Build(t, toolNamed(t, m, "fs__write_file"), fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(dir, "new.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := inv.Confirmation(t.Context()); err != nil || d == nil || d.Server != "fs" || d.Tool != "write_file" {
		t.Errorf("confirmation = %+v, %v", d, err)
	}
}
