package fakeopenai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeopenai"
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
