package fakegemini_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// nextSpeakerSchema is the schema of Gemini CLI's next-speaker check.
const nextSpeakerSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["user","model"]}},"required":["reasoning","next_speaker"]}`

func TestSideCalls(t *testing.T) {
	t.Parallel()
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "scripted"}}})
	defer srv.Close()
	tests := []struct {
		name, config, want string
	}{
		{"next speaker", `{"responseMimeType":"application/json","responseJsonSchema":` + nextSpeakerSchema + `}`, `{"next_speaker":"user","reasoning":""}`},
		{"OpenAPI schema", `{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"confidence":{"type":"NUMBER"},"loop":{"type":"BOOLEAN"},"items":{"type":"ARRAY"}}}}`, `{"confidence":0,"items":[],"loop":false}`},
		{"JSON without schema", `{"responseMimeType":"application/json"}`, `{}`},
	}
	for _, tt := range tests {
		status, body := post(t, srv.URL+"/v1beta/models/gemini-2.5-flash-lite:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"who speaks?"}]}],"generationConfig":`+tt.config+`}`)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", tt.name, status, body)
		}
		var resp struct {
			Candidates []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		if got := resp.Candidates[0].Content.Parts[0].Text; got != tt.want {
			t.Errorf("%s: answer %s, want %s", tt.name, got, tt.want)
		}
	}
	if srv.Remaining() != 1 {
		t.Errorf("side calls consumed turns: %d remaining", srv.Remaining())
	}
	for _, r := range srv.Requests() {
		if !r.Side || r.Turn != 0 {
			t.Errorf("request %+v not recorded as a side call", r)
		}
	}
}

func TestStreamFormat(t *testing.T) {
	t.Parallel()
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Thought: "t", Text: "abc", ThoughtSignature: "c2ln", Usage: &clients.Usage{PromptTokens: 5, OutputTokens: 2}},
		{Text: "one", Calls: []clients.ScriptCall{{Name: "a"}}, ThoughtSignature: "c2lnMg=="},
	}})
	defer srv.Close()
	status, body := post(t, srv.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[]}`)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	if len(events) != 4 {
		t.Fatalf("%d events, want thought + 3 text pieces:\n%s", len(events), body)
	}
	for _, e := range events {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok || strings.Contains(data, "\n") || !json.Valid([]byte(data)) {
			t.Errorf("event %q is not one data line of JSON", e)
		}
	}
	last := events[len(events)-1]
	for _, want := range []string{`"finishReason":"STOP"`, `"thoughtSignature":"c2ln"`, `"promptTokenCount":5`} {
		if !strings.Contains(last, want) {
			t.Errorf("last event lacks %s: %s", want, last)
		}
	}

	// Unary: the text joined, the signature on the first call.
	status, body = post(t, srv.URL+"/v1beta/models/m:generateContent", `{"contents":[]}`)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]any `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	parts := resp.Candidates[0].Content.Parts
	if len(parts) != 2 || parts[0]["text"] != "one" || parts[1]["thoughtSignature"] != "c2lnMg==" {
		t.Errorf("unary parts %v", parts)
	}

	status, body = post(t, srv.URL+"/v1beta/models/m:generateContent", `{"contents":[]}`)
	if status != 400 || !strings.Contains(body, "no turn left") {
		t.Errorf("after the script: %d %s", status, body)
	}
	status, _ = post(t, srv.URL+"/v1beta/models/m:embedContent", `{}`)
	if status != 404 {
		t.Errorf("unknown action: %d", status)
	}
	resp2, err := http.Get(srv.URL + "/v1beta/models/gemini-2.5-pro")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 200 {
		t.Errorf("model info: %d", resp2.StatusCode)
	}
}

// TestCommand runs cmd/fakegemini as Gemini CLI's benchmark will: a script file in, the
// URL on stdout's first line, requests logged on stderr.
func TestCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakegemini")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/fakegemini").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`[{"text":"from the command"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	record := filepath.Join(dir, "requests")
	cmd := exec.CommandContext(ctx, bin, "-script", script, "-record", record)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	g, err := clients.NewGemini(ctx, clients.GeminiOptions{APIKey: "k", BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	req := clients.Request{System: "the system instruction",
		Tools:   []clients.Declaration{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		History: []clients.Content{{Role: "user", Parts: []clients.Part{{Text: "hi"}}}}}
	for c, err := range g.Stream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range c.Parts {
			text += p.Text
		}
	}
	if text != "from the command" {
		t.Errorf("text %q", text)
	}
	// Stopped, it writes the bodies it received into the -record directory; its log
	// gave the sizes of their parts.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fakegemini: %v\n%s", err, stderr.String())
	}
	body, err := os.ReadFile(filepath.Join(record, "001-streamGenerateContent.json"))
	if err != nil || !strings.Contains(string(body), "the system instruction") || !strings.Contains(string(body), `"read_file"`) {
		t.Errorf("recorded request %q (%v)", body, err)
	}
	for _, attr := range []string{"bytes=" + strconv.Itoa(len(body)), "system_bytes=", "tools_bytes=", "contents_bytes=", "declarations=1"} {
		if !strings.Contains(stderr.String(), attr) {
			t.Errorf("the log does not say %s:\n%s", attr, stderr.String())
		}
	}
	if err := exec.Command(bin).Run(); err == nil {
		t.Error("no -script: exit status 0")
	}
}

// TestMaxRequestTokens: a generate call above the budget gets the real API's 400 for a
// request beyond the context window and consumes no turn; one within it is answered.
func TestMaxRequestTokens(t *testing.T) {
	t.Parallel()
	srv, err := fakegemini.New(clients.Script{Turns: []clients.Turn{{Text: "fits"}}}, fakegemini.Options{MaxRequestTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := srv.URL + "/v1beta/models/gemini-2.5-flash:generateContent"
	big := `{"contents":[{"role":"user","parts":[{"text":"` + strings.Repeat("x", 400) + `"}]}]}`
	status, body := post(t, url, big)
	want := `{"error":{"code":400,"message":"The input token count (` + strconv.Itoa((len(big)+3)/4) +
		`) exceeds the maximum number of tokens allowed (100).","status":"INVALID_ARGUMENT"}}`
	if status != 400 || body != want {
		t.Errorf("over the budget: %d %s, want 400 %s", status, body, want)
	}
	if srv.Remaining() != 1 {
		t.Error("the refused call consumed a turn")
	}
	if status, body := post(t, url, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); status != 200 || !strings.Contains(body, "fits") {
		t.Errorf("within the budget: %d %s", status, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Rejected || reqs[0].Turn != 0 || reqs[1].Rejected || reqs[1].Turn != 1 {
		t.Errorf("recorded %+v", reqs)
	}
}

// TestBlockedPrompt: a turn finishing "BLOCKED:reason" is answered as the API answers a
// refused prompt, with promptFeedback and no candidate, streamed or not.
func TestBlockedPrompt(t *testing.T) {
	t.Parallel()
	turn := clients.Turn{FinishReason: "BLOCKED:PROHIBITED_CONTENT"}
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{turn, turn}})
	defer srv.Close()
	req := `{"contents":[{"role":"user","parts":[{"text":"bad"}]}]}`
	for _, action := range []string{"generateContent", "streamGenerateContent?alt=sse"} {
		status, body := post(t, srv.URL+"/v1beta/models/gemini-2.5-flash:"+action, req)
		body = strings.TrimSpace(strings.TrimPrefix(body, "data: "))
		var resp map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("%s: %d %s: %v", action, status, body, err)
		}
		if status != 200 || string(resp["promptFeedback"]) != `{"blockReason":"PROHIBITED_CONTENT"}` || resp["candidates"] != nil {
			t.Errorf("%s: %d %s", action, status, body)
		}
	}
}
