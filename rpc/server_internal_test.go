package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/internal/testutil"
)

// pipeClient drives a Server in this process over io.Pipes: for what only a test inside
// the package can arrange, such as a handler that panics.
type pipeClient struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
	seq int
}

func frame(body string) []byte {
	return []byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

func (c *pipeClient) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(frame(string(b))); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns its response, skipping notifications.
func (c *pipeClient) call(method string, params any) map[string]any {
	c.t.Helper()
	c.seq++
	c.send(map[string]any{"id": c.seq, "method": method, "params": params})
	for {
		body, err := readTestFrame(c.out)
		if err != nil {
			c.t.Fatalf("reading the response to %s: %v", method, err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Fatalf("response %q: %v", body, err)
		}
		if id, ok := m["id"].(float64); ok && int(id) == c.seq && m["method"] == nil {
			return m
		}
	}
}

func readTestFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, err = strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
		}
	}
	if length < 0 {
		return nil, errors.New("no Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

func TestPanicsAreRecovered(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := New(Options{ConfigDir: t.TempDir()})
	s.routes["test/panic"] = route{serve: func(context.Context, jsonrpc2.RawMessage) (any, error) { panic("boom") }}
	s.routes["test/panicInline"] = route{serve: func(context.Context, jsonrpc2.RawMessage) (any, error) { panic("bang") }, inline: true}
	s.notifications["test/panic"] = func(context.Context, jsonrpc2.RawMessage) error { panic("pow") }

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- s.Serve(context.Background(), inR, outW) }()
	c := &pipeClient{t: t, in: inW, out: bufio.NewReader(outR)}
	defer inW.Close()

	if r := c.call("initialize", map[string]any{"rootUri": "file://" + root, "capabilities": map[string]any{}}); r["error"] != nil {
		t.Fatalf("initialize: %v", r)
	}
	c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	for method, want := range map[string]string{"test/panic": "boom", "test/panicInline": "bang"} {
		r := c.call(method, nil)
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != float64(jsonrpc2.InternalError) || !strings.Contains(fmt.Sprint(e["message"]), want) {
			t.Errorf("%s: %v, want an internal error mentioning %q", method, r, want)
		}
	}
	c.send(map[string]any{"method": "test/panic", "params": map[string]any{}})
	if r := c.call("agentls/tools", nil); r["error"] != nil {
		t.Errorf("after the panics: %v", r)
	}
	c.call("shutdown", nil)
	c.send(map[string]any{"method": "exit"})
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after exit")
	}
}

// fuzzConfig is a user configuration directory shared by the fuzz runs.
var fuzzConfig = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "agentls-fuzz-config")
	if err != nil {
		panic(err)
	}
	return d
})

// FuzzServe feeds arbitrary bytes to the server as its input: whatever they are, the
// server must not crash or hang, must end with exit code 0 or 1 when the input ends,
// and everything it writes must be well-framed JSON-RPC 2.0.
func FuzzServe(f *testing.F) {
	root, err := os.MkdirTemp("", "agentls-fuzz-root")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(root) })
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("héllo\nwörld\n"), 0o644)
	uri := "file://" + root
	msg := func(s string) string { return string(frame(strings.ReplaceAll(s, "ROOT", uri))) }
	init := msg(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"ROOT","capabilities":{"workspace":{"applyEdit":true},"window":{"showMessage":{}},"experimental":{"agentls":{"confirm":true,"updates":true}},"general":{"positionEncodings":["utf-8"]}}}}`)
	f.Add([]byte(init + msg(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		msg(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"ROOT/a.txt","languageId":"text","version":1,"text":"héllo\nwörld\n"}}}`) +
		msg(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"ROOT/a.txt","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":1,"character":2}},"text":"ü"}]}}`) +
		msg(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentls.runTool","arguments":[{"name":"read_file","args":{"file_path":"a.txt"}}]}}`) +
		msg(`{"jsonrpc":"2.0","id":3,"method":"agentls/runTool","params":{"name":"list_directory","args":{"dir_path":"."}}}`) +
		msg(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}`) +
		msg(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`) + msg(`{"jsonrpc":"2.0","method":"exit"}`)))
	f.Add([]byte(init + msg(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentls.confirm","arguments":[{"id":"x","outcome":"cancel"}]}}`) +
		msg(`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"approvalMode":"plan"}}}`) +
		msg(`{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":{"added":[{"uri":"ROOT","name":"r"}],"removed":[]}}}`)))
	plain := msg(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"ROOT","capabilities":{"textDocument":{"publishDiagnostics":{},"codeAction":{"codeActionLiteralSupport":{}}},"window":{"workDoneProgress":true}}}}`)
	f.Add([]byte(plain + msg(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		msg(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"ROOT/a.txt","languageId":"text","version":1,"text":"héllo\nwörld\n"}}}`) +
		msg(`{"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"ROOT/a.txt"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[{"data":{"confirmation":"x"}}],"only":["quickfix"]}}}`) +
		msg(`{"jsonrpc":"2.0","method":"window/workDoneProgress/cancel","params":{"token":"agentls/editor-1/1"}}`) +
		msg(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"agentls.runTool","arguments":[{"name":"read_file","args":{"file_path":"missing.txt"}}]}}`) +
		msg(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`) + msg(`{"jsonrpc":"2.0","method":"exit"}`)))
	f.Add([]byte("Content-Length: 10\r\n\r\n{\"id\":1}\r\nContent-Length: x\r\n\r\n" + init))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Add([]byte(msg(`[]`) + msg(`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`) + msg(`{"jsonrpc":"2.0","id":7,"result":null}`)))

	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(Options{ConfigDir: fuzzConfig(), StateDir: filepath.Join(fuzzConfig(), "state"), ConfirmTimeout: 50 * time.Millisecond,
			onlyTools: []string{"read_file", "list_directory"}})
		var out testutil.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		code := s.Serve(ctx, bytes.NewReader(data), &out)
		if ctx.Err() != nil {
			t.Fatalf("Serve did not return when the input ended")
		}
		if code != 0 && code != 1 {
			t.Fatalf("exit code %d", code)
		}
		r := bufio.NewReader(bytes.NewReader(out.Bytes()))
		for {
			body, err := readTestFrame(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("badly framed output: %v\n%q", err, out.Bytes())
			}
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("output message %q: %v", body, err)
			}
		}
	})
}
