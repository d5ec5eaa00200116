package clients_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

const testKey = "test-key-0123456789"

func startGemini(t *testing.T, turns ...clients.Turn) *fakegemini.Server {
	t.Helper()
	srv := fakegemini.Start(clients.Script{Turns: turns})
	t.Cleanup(srv.Close)
	return srv
}

func newGemini(t *testing.T, srv *fakegemini.Server, o clients.GeminiOptions) *clients.Gemini {
	t.Helper()
	if o.APIKey == "" {
		o.APIKey = testKey
	}
	o.BaseURL = srv.URL
	if o.Retry.BaseDelay == 0 {
		o.Retry.BaseDelay = time.Millisecond
	}
	g, err := clients.NewGemini(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGeminiStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		turn  clients.Turn
		check func(t *testing.T, r result)
	}{{
		name: "text in chunks",
		turn: clients.Turn{Text: "Hello there, this is the answer.", Chunks: 4},
		check: func(t *testing.T, r result) {
			if r.text != "Hello there, this is the answer." || r.textChunks != 4 {
				t.Errorf("text %q in %d chunks, want the answer in 4", r.text, r.textChunks)
			}
			if r.finish != clients.FinishStop {
				t.Errorf("finish %q, want STOP", r.finish)
			}
		},
	}, {
		name: "thought before text",
		turn: clients.Turn{Thought: "The user greets me.", Text: "Hi!"},
		check: func(t *testing.T, r result) {
			if r.thought != "The user greets me." || r.text != "Hi!" {
				t.Errorf("thought %q text %q", r.thought, r.text)
			}
			if !r.parts[0].Thought {
				t.Errorf("first part is not the thought: %+v", r.parts[0])
			}
		},
	}, {
		name: "parallel calls in one turn",
		turn: clients.Turn{Text: "Reading both.", Calls: []clients.ScriptCall{
			{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a.go"}`)},
			{ID: "c2", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/b.go"}`)},
			{ID: "c3", Name: "list_directory", Args: json.RawMessage(`{"dir_path":"/w"}`)},
		}},
		check: func(t *testing.T, r result) {
			want := []struct{ id, name, args string }{
				{"c1", "read_file", `{"absolute_path":"/w/a.go"}`},
				{"c2", "read_file", `{"absolute_path":"/w/b.go"}`},
				{"c3", "list_directory", `{"dir_path":"/w"}`},
			}
			if len(r.calls) != len(want) {
				t.Fatalf("got %d calls, want %d", len(r.calls), len(want))
			}
			for i, w := range want {
				c := r.calls[i]
				if c.ID != w.id || c.Name != w.name || !jsonEqual(t, string(c.Args), w.args) {
					t.Errorf("call %d = %s %s %s, want %s %s %s", i, c.ID, c.Name, c.Args, w.id, w.name, w.args)
				}
			}
		},
	}, {
		name: "calls without ids get distinct ids",
		turn: clients.Turn{Calls: []clients.ScriptCall{{Name: "glob"}, {Name: "glob"}}},
		check: func(t *testing.T, r result) {
			if len(r.calls) != 2 {
				t.Fatalf("got %d calls", len(r.calls))
			}
			a, b := r.calls[0], r.calls[1]
			if a.ID == "" || b.ID == "" || a.ID == b.ID {
				t.Errorf("ids %q and %q, want two distinct made-up ids", a.ID, b.ID)
			}
			if string(a.Args) != "{}" {
				t.Errorf("args %s, want {}", a.Args)
			}
		},
	}, {
		name: "usage on the last chunk only",
		turn: clients.Turn{Text: "Done.", Usage: &clients.Usage{PromptTokens: 1200, OutputTokens: 30, ThoughtTokens: 12}},
		check: func(t *testing.T, r result) {
			want := clients.Usage{PromptTokens: 1200, OutputTokens: 30, ThoughtTokens: 12, TotalTokens: 1242}
			if r.usage == nil || *r.usage != want {
				t.Errorf("usage %+v, want %+v", r.usage, want)
			}
			if r.chunks[len(r.chunks)-1].Usage == nil {
				t.Error("usage is not on the last chunk")
			}
		},
	}, {
		name: "finish reason passes through",
		turn: clients.Turn{Text: "I can't", FinishReason: "SAFETY"},
		check: func(t *testing.T, r result) {
			if r.finish != clients.FinishSafety {
				t.Errorf("finish %q, want SAFETY", r.finish)
			}
		},
	}, {
		name: "error after streaming",
		turn: clients.Turn{Text: "Half an", Error: "the backend fell over"},
		check: func(t *testing.T, r result) {
			if r.text != "Half an" {
				t.Errorf("text %q, want what came before the error", r.text)
			}
			if r.err == nil || !strings.Contains(r.err.Error(), "the backend fell over") {
				t.Errorf("error %v, want the server's message", r.err)
			}
		},
	}, {
		// Gemini ends every complete response with a finish reason: a stream that ends
		// without one broke off, and its text must not pass for a whole answer.
		name: "stream cut before the finish reason",
		turn: clients.Turn{Text: "The answer is partly", Cut: true},
		check: func(t *testing.T, r result) {
			if r.text != "The answer is partly" {
				t.Errorf("text %q, want what came before the cut", r.text)
			}
			if r.err == nil || !strings.Contains(r.err.Error(), "finish reason") {
				t.Errorf("error %v, want one saying the response ended without a finish reason", r.err)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startGemini(t, tt.turn)
			g := newGemini(t, srv, clients.GeminiOptions{})
			r := collect(g.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			if r.err != nil && tt.turn.Error == "" && !tt.turn.Cut {
				t.Fatal(r.err)
			}
			tt.check(t, r)
		})
	}
}

// TestGeminiRoundTrip runs two turns the way the agent loop does and checks what the
// second request carried: the model's parts unchanged (thought signature byte for
// byte), the function responses with the calls' ids and names, the system instruction
// and the tools.
func TestGeminiRoundTrip(t *testing.T) {
	t.Parallel()
	// '+' and '/' make sure the signature is not re-encoded in another base64 alphabet.
	const sig = "c2lnbmF0dXJl+/8AAQIDBAUGBwgJ"
	image := clients.Blob{MIMEType: "image/png", Data: []byte("\x89PNG fake")}
	for _, model := range []string{"gemini-2.5-flash", "gemini-3-pro-preview"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := startGemini(t,
				clients.Turn{
					Thought: "Two files to read.", Text: "Reading.", ThoughtSignature: sig,
					Calls: []clients.ScriptCall{
						{ID: "id-a", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a.go"}`)},
						{Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/logo.png"}`)},
					},
				},
				clients.Turn{Text: "Both read."},
			)
			g := newGemini(t, srv, clients.GeminiOptions{Model: model, IncludeThoughts: true})
			req := clients.Request{
				System:  "You are agentls.",
				History: []clients.Content{userText("read a.go and the logo")},
				Tools:   []clients.Declaration{readFileDecl},
			}
			first := collect(g.Stream(t.Context(), req))
			if first.err != nil {
				t.Fatal(first.err)
			}
			if len(first.calls) != 2 {
				t.Fatalf("got %d calls", len(first.calls))
			}
			var sigPart *clients.Part
			for i, p := range first.parts {
				if p.FunctionCall != nil && p.FunctionCall.ID == "id-a" {
					sigPart = &first.parts[i]
				}
			}
			if sigPart == nil || fakeB64(sigPart.ThoughtSignature) != sig {
				t.Fatalf("the first call does not carry the signature: %+v", sigPart)
			}
			madeUp := first.calls[1].ID
			req.History = append(req.History, first.modelContent(), clients.Content{Role: clients.RoleUser, Parts: []clients.Part{
				{FunctionResponse: &clients.FunctionResponse{ID: "id-a", Name: "read_file", Response: map[string]any{"output": "package a"}}},
				{FunctionResponse: &clients.FunctionResponse{ID: madeUp, Name: "read_file", Response: map[string]any{"output": "Read image"}, Parts: []clients.Blob{image}}},
			}})
			if second := collect(g.Stream(t.Context(), req)); second.err != nil || second.text != "Both read." {
				t.Fatalf("second turn: %q, %v", second.text, second.err)
			}

			reqs, err := srv.GenerateRequests()
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != 2 {
				t.Fatalf("server got %d generate requests", len(reqs))
			}
			got := reqs[1]
			if got.SystemInstruction == nil || got.SystemInstruction.Parts[0].Text != "You are agentls." {
				t.Errorf("system instruction %+v", got.SystemInstruction)
			}
			if len(got.Tools) != 1 || len(got.Tools[0].FunctionDeclarations) != 1 {
				t.Fatalf("tools %+v", got.Tools)
			}
			decl := got.Tools[0].FunctionDeclarations[0]
			if decl.Name != "read_file" || strings.Contains(string(decl.ParametersJSONSchema), "$schema") ||
				!strings.Contains(string(decl.ParametersJSONSchema), "absolute_path") {
				t.Errorf("declaration %s %s, want the schema without $schema", decl.Name, decl.ParametersJSONSchema)
			}
			if len(got.Contents) != 3 {
				t.Fatalf("history of %d contents, want 3", len(got.Contents))
			}
			roles := []string{got.Contents[0].Role, got.Contents[1].Role, got.Contents[2].Role}
			if !slices.Equal(roles, []string{"user", "model", "user"}) {
				t.Errorf("roles %v", roles)
			}
			// The model's turn goes back as it came.
			sent := got.Contents[1].Parts
			var sentSig []string
			var sentCalls []fakegemini.FunctionCall
			for _, p := range sent {
				if p.ThoughtSignature != "" {
					sentSig = append(sentSig, p.ThoughtSignature)
				}
				if p.FunctionCall != nil {
					sentCalls = append(sentCalls, *p.FunctionCall)
				}
			}
			if !slices.Equal(sentSig, []string{sig}) {
				t.Errorf("signatures sent back %q, want exactly %q", sentSig, sig)
			}
			if len(sentCalls) != 2 || sentCalls[0].ID != "id-a" || sentCalls[1].ID != "" {
				t.Errorf("calls sent back %+v, want them as the model sent them (the second without id)", sentCalls)
			}
			if !sent[0].Thought || sent[0].Text != "Two files to read." {
				t.Errorf("first part sent back %+v, want the thought", sent[0])
			}
			// The responses carry the calls' ids and names.
			var responses []fakegemini.FunctionResponse
			var inline []*fakegemini.Blob
			for _, p := range got.Contents[2].Parts {
				if p.FunctionResponse != nil {
					responses = append(responses, *p.FunctionResponse)
					for _, fp := range p.FunctionResponse.Parts {
						inline = append(inline, fp.InlineData)
					}
				}
				if p.InlineData != nil {
					inline = append(inline, p.InlineData)
				}
			}
			if len(responses) != 2 || responses[0].ID != "id-a" || responses[1].ID != madeUp ||
				responses[0].Name != "read_file" || !jsonEqual(t, string(responses[0].Response), `{"output":"package a"}`) {
				t.Errorf("responses %+v", responses)
			}
			if len(inline) != 1 || inline[0].MIMEType != "image/png" || inline[0].Data != fakeB64(image.Data) {
				t.Errorf("inline data %+v, want the image", inline)
			}
			inside := len(responses) == 2 && len(responses[1].Parts) == 1
			if wantInside := strings.HasPrefix(model, "gemini-3"); inside != wantInside {
				t.Errorf("image inside the function response: %v, want %v", inside, wantInside)
			}
			var body struct {
				GenerationConfig struct {
					ThinkingConfig struct {
						IncludeThoughts bool `json:"includeThoughts"`
					} `json:"thinkingConfig"`
				} `json:"generationConfig"`
			}
			if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil || !body.GenerationConfig.ThinkingConfig.IncludeThoughts {
				t.Errorf("thinking config not sent: %v", err)
			}
			if key := srv.Requests()[0].Header.Get("x-goog-api-key"); key != testKey {
				t.Errorf("api key header %q", key)
			}
		})
	}
}

func fakeB64(b []byte) string {
	data, _ := json.Marshal(b)
	return strings.Trim(string(data), `"`)
}

func TestGeminiErrors(t *testing.T) {
	t.Parallel()
	ok := clients.Turn{Text: "recovered"}
	tests := []struct {
		name      string
		turns     []clients.Turn
		wantText  string
		wantErr   []string
		wantWaits []time.Duration
		wantCalls int
	}{{
		name:      "429 with Retry-After, then success",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "quota", RetryAfter: "3"}}, ok},
		wantText:  "recovered",
		wantWaits: []time.Duration{3 * time.Second},
		wantCalls: 2,
	}, {
		name: "503 twice, then success, with doubling waits",
		turns: []clients.Turn{
			{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "overloaded"}},
			{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "overloaded"}},
			ok,
		},
		wantText:  "recovered",
		wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond},
		wantCalls: 3,
	}, {
		name: "503 until the attempts run out",
		turns: []clients.Turn{
			{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "overloaded"}},
			{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "overloaded"}},
			{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "still overloaded"}},
			ok,
		},
		wantErr:   []string{"503", "after 3 attempts", "still overloaded"},
		wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond},
		wantCalls: 3,
	}, {
		name:      "Retry-After beyond the cap ends the retries",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "daily quota", RetryAfter: "3600"}}, ok},
		wantErr:   []string{"rate limited", "wait 1h0m0s", "daily quota"},
		wantCalls: 1,
	}, {
		name:      "400 gives the server's message, without retrying",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "function declaration read_file: bad schema"}}, ok},
		wantErr:   []string{"rejected", "function declaration read_file: bad schema"},
		wantCalls: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startGemini(t, tt.turns...)
			var s sleeps
			g := newGemini(t, srv, clients.GeminiOptions{Retry: clients.RetryPolicy{
				Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Minute, Sleep: s.sleep,
			}})
			r := collect(g.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			t.Logf("error: %v", r.err)
			if tt.wantErr == nil && r.err != nil {
				t.Fatal(r.err)
			}
			for _, w := range tt.wantErr {
				if r.err == nil || !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %v, want it to contain %q", r.err, w)
				}
			}
			if r.text != tt.wantText {
				t.Errorf("text %q, want %q", r.text, tt.wantText)
			}
			if got := s.got(); !slices.Equal(got, tt.wantWaits) {
				t.Errorf("waits %v, want %v", got, tt.wantWaits)
			}
			if got := len(srv.Requests()); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			var ce *clients.Error
			if tt.wantErr != nil && !errors.As(r.err, &ce) {
				t.Errorf("error %T is not a *clients.Error", r.err)
			}
		})
	}
}

// TestGeminiRejectedKey checks that a 401 names the variable the key came from and
// never shows the key. Not parallel: it sets the environment.
func TestGeminiRejectedKey(t *testing.T) {
	const secret = "AIzaSy-very-secret-key"
	t.Setenv("GEMINI_API_KEY", secret)
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	t.Setenv("GOOGLE_GENAI_USE_ENTERPRISE", "")
	srv := startGemini(t, clients.Turn{HTTPError: &clients.ScriptHTTPError{Status: 401, Message: "API key not valid. Please pass a valid API key."}})
	g, err := clients.NewGemini(t.Context(), clients.GeminiOptions{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(g.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
	if r.err == nil {
		t.Fatal("no error")
	}
	msg := r.err.Error()
	t.Logf("error: %s", msg)
	if !strings.Contains(msg, "the API key in GEMINI_API_KEY was rejected") || !strings.Contains(msg, "API key not valid") {
		t.Errorf("error %q, want it to name GEMINI_API_KEY and give the server's message", msg)
	}
	if strings.Contains(msg, secret) {
		t.Errorf("the error shows the key: %q", msg)
	}
	if got := srv.Requests()[0].Header.Get("x-goog-api-key"); got != secret {
		t.Errorf("sent key %q, want the one from GEMINI_API_KEY", got)
	}

	t.Setenv("GEMINI_API_KEY", "")
	_, err = clients.NewGemini(t.Context(), clients.GeminiOptions{BaseURL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("without a key: %v, want an error naming GEMINI_API_KEY", err)
	}
}

func TestGeminiBaseURLFromEnv(t *testing.T) {
	srv := startGemini(t, clients.Turn{Text: "from env"})
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	t.Setenv("GOOGLE_GENAI_USE_ENTERPRISE", "")
	g, err := clients.NewGemini(t.Context(), clients.GeminiOptions{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(g.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}})); r.err != nil || r.text != "from env" {
		t.Fatalf("%q, %v", r.text, r.err)
	}
	if g.Model() != clients.DefaultGeminiModel || g.ContextWindow() != 1_048_576 {
		t.Errorf("model %q window %d", g.Model(), g.ContextWindow())
	}
}

func TestGeminiConnectionRefused(t *testing.T) {
	t.Parallel()
	url := closedURL(t)
	g, err := clients.NewGemini(t.Context(), clients.GeminiOptions{APIKey: testKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(g.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
	if r.err == nil || !strings.Contains(r.err.Error(), url) || !strings.Contains(r.err.Error(), "connection refused") {
		t.Errorf("error %v, want it to name %s and say the connection was refused", r.err, url)
	}
}

func TestGeminiCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := startGemini(t, clients.Turn{Text: "partial", Chunks: 1, Hang: true})
	g := newGemini(t, srv, clients.GeminiOptions{})
	r := cancelAfterFirstChunk(t, g)
	if r.text != "partial" {
		t.Errorf("text %q, want the chunk before the cancellation", r.text)
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", r.err)
	}
}

func TestGeminiCountTokens(t *testing.T) {
	t.Parallel()
	srv := startGemini(t)
	g := newGemini(t, srv, clients.GeminiOptions{})
	n, err := g.CountTokens(t.Context(), clients.Request{
		System:  "You are agentls.",
		History: []clients.Content{userText(strings.Repeat("word ", 100))},
		Tools:   []clients.Declaration{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 125 {
		t.Errorf("%d tokens, want at least the history's 500 characters / 4", n)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Action != "countTokens" {
		t.Fatalf("requests %+v", reqs)
	}
	var body struct {
		Contents []fakegemini.Content `json:"contents"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 2 || len(body.Contents[0].Parts) != 2 || body.Contents[0].Parts[0].Text != "You are agentls." ||
		!strings.Contains(body.Contents[0].Parts[1].Text, `"name":"read_file"`) {
		t.Errorf("counted contents %+v, want the system instruction and the tools first", body.Contents)
	}
}

func TestGeminiSearch(t *testing.T) {
	t.Parallel()
	text := "Go 1.26 came out in February 2026. It removes the old façade."
	srv := startGemini(t, clients.Turn{
		Text: text,
		Grounding: &clients.ScriptGrounding{
			Queries: []string{"go 1.26 release"},
			Sources: []clients.Source{
				{Title: "go.dev", URI: "https://go.dev/doc/go1.26"},
				{Title: "Go blog", URI: "https://go.dev/blog/go1.26"},
			},
			Supports: []clients.ScriptSupport{
				{Start: 0, End: 34, Sources: []int{0}},
				{Start: 35, End: len(text), Sources: []int{0, 1}},
			},
		},
	})
	g := newGemini(t, srv, clients.GeminiOptions{SearchModel: "gemini-2.5-flash-lite"})
	res, err := g.Search(t.Context(), "what is new in go 1.26")
	if err != nil {
		t.Fatal(err)
	}
	want := "Go 1.26 came out in February 2026.[1] It removes the old façade.[1][2]"
	if res.Text != want {
		t.Errorf("text\n %q\nwant\n %q", res.Text, want)
	}
	wantSources := []clients.Source{{Title: "go.dev", URI: "https://go.dev/doc/go1.26"}, {Title: "Go blog", URI: "https://go.dev/blog/go1.26"}}
	if !slices.Equal(res.Sources, wantSources) {
		t.Errorf("sources %+v", res.Sources)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gemini-2.5-flash-lite" || reqs[0].Action != "generateContent" {
		t.Fatalf("requests %+v", reqs)
	}
	gr, err := reqs[0].Generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Tools) != 1 || gr.Tools[0].GoogleSearch == nil {
		t.Errorf("tools %+v, want googleSearch", gr.Tools)
	}
}
