package fakeopenai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeopenai"
	"github.com/agentls/agentls/internal/fakeserver"
)

func TestStreamFormat(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a.go"}`)}}},
		{Text: "no usage asked"},
	}})
	defer srv.Close()
	tests := []struct {
		body       string
		wantUsage  bool
		wantFinish string
	}{
		{`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`, true, "tool_calls"},
		{`{"model":"m","stream":true,"messages":[]}`, false, "stop"},
	}
	for i, tt := range tests {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		events := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
		if events[len(events)-1] != "data: [DONE]" {
			t.Errorf("turn %d does not end with [DONE]: %q", i+1, events[len(events)-1])
		}
		var args strings.Builder
		argChunks := 0
		var usage, finish bool
		for _, e := range events[:len(events)-1] {
			var c struct {
				Choices []struct {
					Delta struct {
						ToolCalls []struct {
							Function struct{ Arguments string } `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage json.RawMessage `json:"usage"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c); err != nil {
				t.Fatalf("event %q: %v", e, err)
			}
			usage = usage || len(c.Usage) > 0
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					if tc.Function.Arguments != "" {
						argChunks++
						args.WriteString(tc.Function.Arguments)
					}
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason == tt.wantFinish
				}
			}
		}
		if usage != tt.wantUsage || !finish {
			t.Errorf("turn %d: usage %v finish ok %v", i+1, usage, finish)
		}
		if i == 0 && (argChunks < 2 || args.String() != `{"absolute_path":"/w/a.go"}`) {
			t.Errorf("arguments %q in %d chunks, want them split", args.String(), argChunks)
		}
	}
	reqs, err := srv.ChatRequests()
	if err != nil || len(reqs) != 2 || reqs[0].Model != "m" {
		t.Errorf("recorded %+v, %v", reqs, err)
	}
}

// TestMaxRequestTokens: a completion above the budget gets OpenAI's
// context_length_exceeded error and consumes no turn; one within it reports its
// estimated size as the prompt tokens.
func TestMaxRequestTokens(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.StartWith(clients.Script{Turns: []clients.Turn{{Text: "fits"}}},
		fakeopenai.Options{Options: fakeserver.Options{MaxRequestTokens: 100}})
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	big := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]}`
	status, body := post(big)
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || status != 400 || e.Error.Code != "context_length_exceeded" ||
		e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "maximum context length is 100 tokens") {
		t.Errorf("over the budget: %d %s", status, body)
	}
	if srv.Remaining() != 1 {
		t.Error("the refused call consumed a turn")
	}
	small := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	status, body = post(small)
	if want := `"prompt_tokens":` + strconv.Itoa((len(small)+3)/4); status != 200 || !strings.Contains(body, "fits") || !strings.Contains(body, want) {
		t.Errorf("within the budget: %d %s, want usage %s", status, body, want)
	}
}
