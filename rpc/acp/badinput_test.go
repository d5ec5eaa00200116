package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBadInput: malformed lines, batches, messages that are not JSON-RPC, unknown
// methods, bad params and prompts for unknown sessions each get a JSON-RPC error with
// a message saying what is wrong, and the agent keeps serving.
func TestBadInput(t *testing.T) {
	tests := []struct {
		line string
		id   string // the id of the answer, "null" when the message has none
		code int
		says string
	}{
		{`this is not json`, "null", -32700, "not JSON"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"`, "null", -32700, "not JSON"},
		{`[{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}]`, "null", -32600, "batches"},
		{`42`, "null", -32600, "object"},
		{`{"id":3,"method":"initialize","params":{"protocolVersion":1}}`, "3", -32600, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":4,"method":7}`, "4", -32600, `"method" must be a string`},
		{`{"jsonrpc":"2.0","id":5}`, "5", -32600, `no "method"`},
		{`{"jsonrpc":"2.0","id":6,"method":"session/fly","params":{}}`, "6", -32601, "Method not found"},
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":"x"}`, "7", -32602, "Invalid params"},
		{`{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`, "8", -32602, `unknown session "nope"`},
		{`{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`, "9", -32602, "not an absolute path"},
		{`{"jsonrpc":"2.0","id":10,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"yolo"}}`, "10", -32602, "unknown session"},
	}
	cmd := exec.Command(buildBinary(t), "acp")
	cmd.Env = env(t.TempDir(), t.TempDir(), "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	go func() {
		for _, tt := range tests {
			io.WriteString(stdin, tt.line+"\n")
		}
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":"last","method":"initialize","params":{"protocolVersion":1}}`+"\n")
	}()

	type answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	answers := map[string][]answer{}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(testTimeout)
	for n := 0; n < len(tests)+1; n++ {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the agent closed its output")
			}
			var a answer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("the agent wrote %q: %v", line, err)
			}
			answers[string(a.ID)] = append(answers[string(a.ID)], a)
		case <-timeout:
			t.Fatalf("only %d answers; got %v", n, answers)
		}
	}
	if last := answers[`"last"`]; len(last) != 1 || last[0].Error != nil || len(last[0].Result) == 0 {
		t.Errorf("initialize after the bad input = %+v: the agent stopped serving", last)
	}
	nulls := 0
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.line, "/", "|"), func(t *testing.T) {
			as := answers[tt.id]
			i := 0
			if tt.id == "null" {
				i = nulls
				nulls++
			}
			if i >= len(as) || as[i].Error == nil {
				t.Fatalf("answers of id %s: %+v", tt.id, as)
			}
			e := as[i].Error
			text := fmt.Sprintf("%s %s", e.Message, e.Data)
			if e.Code != tt.code || !strings.Contains(text, tt.says) {
				t.Errorf("error %d %q, want %d saying %q", e.Code, text, tt.code, tt.says)
			}
		})
	}
}
