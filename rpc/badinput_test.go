package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
)

// TestBadInput: malformed messages are answered as JSON-RPC prescribes (under their id
// when it can be read, else null), and the server serves on after each.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		raw      []byte
		wantCode int64 // 0: no answer
		wantID   string
		wantMsg  string
	}{
		{name: "malformed JSON", raw: lsptest.Frame([]byte(`{"jsonrpc":"2.0","id":1,"method":`)), wantCode: lsptest.CodeParseError, wantID: "null", wantMsg: "not valid JSON"},
		{name: "not an object", raw: lsptest.Frame([]byte(`"hello"`)), wantCode: lsptest.CodeInvalidRequest, wantID: "null", wantMsg: "object"},
		{name: "batch", raw: lsptest.Frame([]byte(`[{"jsonrpc":"2.0","id":1,"method":"agentls/tools"}]`)), wantCode: lsptest.CodeInvalidRequest, wantID: "null", wantMsg: "batch"},
		{name: "wrong version", raw: lsptest.Frame([]byte(`{"jsonrpc":"1.0","id":77,"method":"agentls/tools"}`)), wantCode: lsptest.CodeInvalidRequest, wantID: "77", wantMsg: `"2.0"`},
		{name: "method not a string", raw: lsptest.Frame([]byte(`{"jsonrpc":"2.0","id":"x","method":5}`)), wantCode: lsptest.CodeInvalidRequest, wantID: `"x"`, wantMsg: "method"},
		{name: "Content-Length too short", raw: []byte("Content-Length: 20\r\n\r\n" + `{"jsonrpc":"2.0","id":9,"method":"agentls/tools"}`), wantCode: lsptest.CodeParseError, wantID: "null"},
		{name: "Content-Length not a number", raw: []byte("Content-Length: ten\r\n\r\n{}"), wantCode: lsptest.CodeParseError, wantID: "null", wantMsg: "Content-Length"},
		{name: "no Content-Length", raw: []byte("Content-Type: application/json\r\n\r\n{}"), wantCode: lsptest.CodeParseError, wantID: "null", wantMsg: "Content-Length"},
		{name: "empty body", raw: []byte("Content-Length: 0\r\n\r\n"), wantCode: lsptest.CodeParseError, wantID: "null"},
		{name: "garbage", raw: []byte("\x00\x01 not a header at all\n")},
		{name: "an unknown notification", raw: lsptest.Frame([]byte(`{"jsonrpc":"2.0","method":"foo/bar","params":[1]}`))},
		{name: "a response to nothing", raw: lsptest.Frame([]byte(`{"jsonrpc":"2.0","id":4242,"result":{}}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, capsNone, nil)
			if err := c.WriteRaw(tt.raw); err != nil {
				t.Fatal(err)
			}
			// The next well-formed request is served.
			var infos []map[string]any
			if err := c.Call(ctx, "agentls/tools", nil, &infos); err != nil || len(infos) == 0 {
				t.Fatalf("a request after the bad input: %v", err)
			}
			answers := c.Unmatched()
			if tt.wantCode == 0 {
				if len(answers) != 0 {
					t.Errorf("answers %s, want none", mustJSON(t, answers))
				}
				return
			}
			if len(answers) != 1 || answers[0].Error == nil || answers[0].Error.Code != tt.wantCode ||
				string(answers[0].ID) != tt.wantID || !strings.Contains(answers[0].Error.Message, tt.wantMsg) {
				t.Errorf("answers %s, want one error %d for id %s mentioning %q", mustJSON(t, answers), tt.wantCode, tt.wantID, tt.wantMsg)
			}
		})
	}
}

// TestWrongContentLengthTooLong: a Content-Length longer than the message swallows the
// start of the next; both are lost, the error is answered, and the server reads on
// from the next header.
func TestWrongContentLengthTooLong(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsNone, nil)
	body := `{"jsonrpc":"2.0","method":"foo/bar"}`
	raw := []byte("Content-Length: " + itoa(len(body)+30) + "\r\n\r\n" + body)
	raw = append(raw, lsptest.Frame([]byte(`{"jsonrpc":"2.0","method":"foo/baz","params":{"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`))...)
	if err := c.WriteRaw(raw); err != nil {
		t.Fatal(err)
	}
	var infos []map[string]any
	if err := c.Call(ctx, "agentls/tools", nil, &infos); err != nil || len(infos) == 0 {
		t.Fatalf("a request after the bad input: %v", err)
	}
	if a := c.Unmatched(); len(a) != 1 || a[0].Error == nil || a[0].Error.Code != lsptest.CodeParseError {
		t.Errorf("answers %s, want one parse error", mustJSON(t, a))
	}
}

// TestErrorsKeepServing: unknown methods, invalid params and requests after shutdown
// get their errors, and the connection stays up.
func TestErrorsKeepServing(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsNone, nil)
	tests := []struct {
		method  string
		params  any
		code    int64
		wantMsg string
	}{
		{"textDocument/hover", map[string]any{}, lsptest.CodeMethodNotFound, "textDocument/hover"},
		// No model: the test environment has no API key (see start).
		{"agentls/prompt", map[string]any{"prompt": "hi"}, -32803, "model"},
		{"agentls/prompt", map[string]any{"prompt": ""}, lsptest.CodeInvalidParams, `"prompt"`},
		{"workspace/executeCommand", map[string]any{"command": 5}, lsptest.CodeInvalidParams, "command"},
		{"workspace/executeCommand", []int{1}, lsptest.CodeInvalidParams, "workspace/executeCommand"},
		{"workspace/executeCommand", nil, lsptest.CodeInvalidParams, "params are missing"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.frobnicate"}, lsptest.CodeInvalidParams, "unknown command"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.prompt", "arguments": []any{map[string]any{"prompt": "x"}}}, -32803, "model"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.trust", "arguments": []any{map[string]any{"scope": "everything"}}}, lsptest.CodeInvalidParams, "want \"folder\""},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runPrompt", "arguments": []any{map[string]any{"name": "x"}}}, lsptest.CodeInvalidParams, "server and name"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runTool", "arguments": []any{"read_file"}}, lsptest.CodeInvalidParams, "object"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runTool", "arguments": []any{map[string]any{"name": 3}}}, lsptest.CodeInvalidParams, "/name"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runTool", "arguments": []any{map[string]any{"args": map[string]any{}}}}, lsptest.CodeInvalidParams, `"name"`},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runTool", "arguments": []any{map[string]any{"name": "read_file", "args": []int{}}}}, lsptest.CodeInvalidParams, `"args"`},
		{"workspace/executeCommand", map[string]any{"command": "agentls.runTool", "arguments": []any{map[string]any{}, map[string]any{}}}, lsptest.CodeInvalidParams, "one object"},
		{"agentls/runTool", "read_file", lsptest.CodeInvalidParams, "object"},
		{"workspace/executeCommand", map[string]any{"command": "agentls.setApprovalMode", "arguments": []any{map[string]any{}}}, lsptest.CodeInvalidParams, "mode"},
	}
	for _, tt := range tests {
		err := c.Call(ctx, tt.method, tt.params, nil)
		if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s %s: %v, want %d mentioning %q", tt.method, mustJSON(t, tt.params), err, tt.code, tt.wantMsg)
		}
	}
	var actions []any
	if err := c.Call(ctx, "textDocument/codeAction", map[string]any{}, &actions); err != nil || actions == nil || len(actions) != 0 {
		t.Errorf("codeAction: %v %v, want an empty list", actions, err)
	}
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := c.Call(ctx, "agentls/tools", nil, nil); codeOf(err) != lsptest.CodeInvalidRequest {
			t.Errorf("after shutdown: %v, want InvalidRequest", err)
		}
	}
	if code, err := c.Shutdown(ctx); err == nil || code != -1 {
		// A second shutdown is itself a request after shutdown.
		t.Errorf("a second shutdown: code %d, %v", code, err)
	}
	c.Notify("exit", nil)
	if code, err := c.Wait(ctx); code != 0 || err != nil {
		t.Errorf("exit code %d, %v", code, err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
