package clients

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"google.golang.org/genai"
)

// DefaultGeminiModel is the model NewGemini uses when none is given.
const DefaultGeminiModel = "gemini-2.5-flash"

// GeminiOptions configure a Gemini client. Zero values fall back to the environment the
// Gemini SDK and Gemini CLI read: GEMINI_API_KEY (else GOOGLE_API_KEY),
// GOOGLE_GEMINI_BASE_URL, and for Vertex AI GOOGLE_GENAI_USE_VERTEXAI,
// GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION and application default credentials.
type GeminiOptions struct {
	// APIKey is used instead of the key in the environment.
	APIKey string
	// Model is the model to call; "" means DefaultGeminiModel.
	Model string
	// BaseURL replaces the API's address (GOOGLE_GEMINI_BASE_URL when empty), e.g. a
	// proxy or a test server.
	BaseURL string
	// ContextWindow overrides the model's input limit from the built-in table.
	ContextWindow int
	// IncludeThoughts asks the model for summaries of its reasoning, streamed as thought
	// parts.
	IncludeThoughts bool
	// ThinkingBudget caps the reasoning tokens of Gemini 2.5 models (0 turns thinking
	// off where the model allows it, -1 lets the model decide); nil keeps the model's
	// default.
	ThinkingBudget *int32
	// ThinkingLevel sets the reasoning depth of Gemini 3 models ("LOW", "HIGH"); empty
	// keeps the model's default.
	ThinkingLevel string
	// SearchModel answers Search; "" means Model.
	SearchModel string
	// Retry says how 429 and 5xx answers are retried.
	Retry RetryPolicy
	// Transport carries the HTTP requests under the retries; nil means
	// http.DefaultTransport (or, for Vertex AI, an authenticated transport).
	Transport http.RoundTripper
	// Logger receives the client's warnings, such as each retry of a busy endpoint
	// (with the URL's secrets masked); nil discards them.
	Logger *slog.Logger
}

// Gemini is a Client for Google's Gemini models, through the Gemini API or Vertex AI. It
// also counts tokens (TokenCounter) and answers with Google Search grounding (Searcher).
//
// Every part the model sends keeps, in Part.Raw, its JSON form as the SDK reads and
// writes it, and goes back from there: thought signatures and any field agentls does not
// model return unchanged.
type Gemini struct {
	client      *genai.Client
	model       string
	searchModel string
	window      int
	thinking    *genai.ThinkingConfig
	ep          endpoint
	log         *slog.Logger
}

var (
	_ Client       = (*Gemini)(nil)
	_ TokenCounter = (*Gemini)(nil)
	_ Searcher     = (*Gemini)(nil)
)

// NewGemini makes a Gemini client. It fails, saying what to set, when no API key or
// Vertex AI configuration is found; it does not call the API.
func NewGemini(ctx context.Context, o GeminiOptions) (*Gemini, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	model := o.Model
	if model == "" {
		model = DefaultGeminiModel
	}
	g := &Gemini{model: model, searchModel: o.SearchModel, window: o.ContextWindow, log: log}
	if g.searchModel == "" {
		g.searchModel = model
	}
	if g.window <= 0 {
		g.window = GeminiContextWindow(model)
	}
	g.ep = endpoint{name: "gemini (" + model + ")"}

	vertex := envTrue("GOOGLE_GENAI_USE_VERTEXAI") || envTrue("GOOGLE_GENAI_USE_ENTERPRISE")
	key := o.APIKey
	switch {
	case key != "":
		g.ep.credential = "the configured Gemini API key"
	case os.Getenv("GEMINI_API_KEY") != "":
		key = os.Getenv("GEMINI_API_KEY")
		g.ep.credential = "the API key in GEMINI_API_KEY"
	case os.Getenv("GOOGLE_API_KEY") != "":
		key = os.Getenv("GOOGLE_API_KEY")
		g.ep.credential = "the API key in GOOGLE_API_KEY"
	case vertex:
		g.ep.credential = "the Google Cloud credentials (application default credentials)"
	default:
		return nil, errors.New("gemini: no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or run `agentls login` to store one, or GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION for Vertex AI")
	}
	g.ep.secret = key
	g.ep.keyHint = "GEMINI_API_KEY"

	cc := &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI}
	if vertex {
		cc.Backend = genai.BackendVertexAI
	}
	baseURL := o.BaseURL
	if baseURL == "" && !vertex {
		baseURL = os.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	cc.HTTPOptions.BaseURL = baseURL

	inner := o.Transport
	if inner == nil && vertex && key == "" && baseURL == "" && os.Getenv("GOOGLE_VERTEX_BASE_URL") == "" {
		// The SDK authenticates Vertex AI only through a client it builds itself, and
		// then without our retries: build the authenticated transport here.
		t, err := vertexTransport(ctx)
		if err != nil {
			return nil, g.ep.errorf(0, err, "Vertex AI credentials: %v", err)
		}
		inner = t
	}
	cc.HTTPClient = newRetryClient(o.Retry, inner, log)

	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		// The SDK's message can print the whole configuration, key included: errorf
		// redacts it.
		return nil, g.ep.errorf(0, nil, "%v", err)
	}
	g.client = client
	g.ep.url = client.ClientConfig().HTTPOptions.BaseURL

	if o.IncludeThoughts || o.ThinkingBudget != nil || o.ThinkingLevel != "" {
		g.thinking = &genai.ThinkingConfig{
			IncludeThoughts: o.IncludeThoughts,
			ThinkingBudget:  o.ThinkingBudget,
			ThinkingLevel:   genai.ThinkingLevel(o.ThinkingLevel),
		}
	}
	return g, nil
}

func vertexTransport(ctx context.Context) (http.RoundTripper, error) {
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{
		Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"},
	})
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	if project, err := creds.QuotaProjectID(ctx); err == nil && project != "" {
		headers.Set("X-Goog-User-Project", project)
	}
	c, err := httptransport.NewClient(&httptransport.Options{Credentials: creds, Headers: headers})
	if err != nil {
		return nil, err
	}
	return c.Transport, nil
}

func envTrue(name string) bool {
	v := strings.ToLower(os.Getenv(name))
	return v == "1" || v == "true"
}

// GeminiContextWindow is the input limit, in tokens, of a Gemini model by name: 2,097,152
// for Gemini 1.5 Pro, 1,048,576 for the other Gemini 1.5, 2.x and 3 models (and for
// names it does not know).
func GeminiContextWindow(model string) int {
	model = strings.TrimPrefix(model, "models/")
	switch {
	case strings.HasPrefix(model, "gemini-1.5-pro"):
		return 2_097_152
	case strings.HasPrefix(model, "gemini-2.0-flash-preview-image-generation"):
		return 32_000
	default:
		return 1_048_576
	}
}

// Model names the model in use.
func (g *Gemini) Model() string { return g.model }

// ContextWindow is the model's input limit in tokens.
func (g *Gemini) ContextWindow() int { return g.window }

// Stream sends req through streamGenerateContent and yields the response as it comes.
// Usage is reported once, with the last chunk.
func (g *Gemini) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		contents, err := g.contents(req.History)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		cfg, err := g.config(req)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		ctx, ci := trackCall(ctx)
		var usage *Usage
		usageSent, finished, called := false, false, false
		for resp, err := range g.client.Models.GenerateContentStream(ctx, cmp.Or(req.Model, g.model), contents, cfg) {
			if err != nil {
				yield(Chunk{}, g.wrap(ctx, err, ci))
				return
			}
			c := g.chunk(resp)
			finished = finished || c.FinishReason != ""
			called = called || slices.ContainsFunc(c.Parts, func(p Part) bool { return p.FunctionCall != nil })
			if c.Usage != nil {
				usage = c.Usage
			}
			c.Usage = nil
			if c.FinishReason != "" && usage != nil {
				c.Usage, usageSent = usage, true
			}
			if len(c.Parts) == 0 && c.Usage == nil && c.FinishReason == "" {
				continue
			}
			if !yield(c, nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(Chunk{}, err)
			return
		}
		if !finished && !called {
			// Gemini ends every complete answer with a finish reason; without one the
			// stream was cut (a dropped connection, a proxy, a backend fault), and the
			// text so far must not pass for the whole answer. Calls arrive whole, so a
			// response with calls stands, as in Gemini CLI.
			yield(Chunk{}, g.ep.errorf(0, nil, "the response broke off: the stream ended before the model finished (no finish reason)"))
			return
		}
		if usage != nil && !usageSent {
			yield(Chunk{Usage: usage}, nil)
		}
	}
}

// CountTokens counts the tokens of req's system instruction, tools and history through
// countTokens. The Gemini API's countTokens takes neither a system instruction nor tools,
// so the instruction and the tools' declarations (as JSON) are counted as a first user
// turn: a request's size is what compression needs, and the tools are a good part of it.
func (g *Gemini) CountTokens(ctx context.Context, req Request) (int, error) {
	contents, err := g.contents(req.History)
	if err != nil {
		return 0, err
	}
	var preamble []*genai.Part
	if req.System != "" {
		preamble = append(preamble, &genai.Part{Text: req.System})
	}
	if len(req.Tools) > 0 {
		decls, err := json.Marshal(req.Tools)
		if err != nil {
			return 0, fmt.Errorf("counting the tools' tokens: %w", err)
		}
		preamble = append(preamble, &genai.Part{Text: string(decls)})
	}
	if len(preamble) > 0 {
		contents = append([]*genai.Content{{Role: genai.RoleUser, Parts: preamble}}, contents...)
	}
	ctx, ci := trackCall(ctx)
	resp, err := g.client.Models.CountTokens(ctx, g.model, contents, nil)
	if err != nil {
		return 0, g.wrap(ctx, err, ci)
	}
	return int(resp.TotalTokens), nil
}

// wrap turns an SDK error into a *Error (or the context's error).
func (g *Gemini) wrap(ctx context.Context, err error, ci *callInfo) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return g.ep.callError(ctx, err, ci, apiErr.Code, apiErr.Message)
	}
	return g.ep.callError(ctx, err, ci, 0, "")
}

func (g *Gemini) config(req Request) (*genai.GenerateContentConfig, error) {
	cfg := &genai.GenerateContentConfig{ThinkingConfig: g.thinking}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if sp := req.Sampling; sp != nil {
		f32 := func(v *float64) *float32 {
			if v == nil {
				return nil
			}
			f := float32(*v)
			return &f
		}
		cfg.Temperature, cfg.TopP = f32(sp.Temperature), f32(sp.TopP)
		if sp.TopK != nil {
			k := float64(*sp.TopK)
			cfg.TopK = f32(&k)
		}
		if sp.MaxOutputTokens != nil {
			cfg.MaxOutputTokens = int32(*sp.MaxOutputTokens)
		}
		cfg.StopSequences = sp.StopSequences
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, d := range req.Tools {
			fd := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description}
			schema, err := toolSchema(d)
			if err != nil {
				return nil, err
			}
			if schema != nil {
				fd.ParametersJsonSchema = schema
			}
			decls = append(decls, fd)
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if req.ToolsRequired {
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}
		}
	}
	return cfg, nil
}

// toolSchema decodes a declaration's parameters, without $schema, which the APIs
// reject; nil when it has none.
func toolSchema(d Declaration) (map[string]any, error) {
	if len(d.Parameters) == 0 || string(d.Parameters) == "null" {
		return nil, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(d.Parameters, &schema); err != nil {
		return nil, fmt.Errorf("tool %s: the parameters are not a JSON Schema object: %w", d.Name, err)
	}
	delete(schema, "$schema")
	return schema, nil
}

// supportsFunctionResponseParts tells whether the model takes images and documents
// inside a function response (Gemini 3); older models get them as parts after it.
func (g *Gemini) supportsFunctionResponseParts() bool {
	return strings.HasPrefix(strings.TrimPrefix(g.model, "models/"), "gemini-3")
}

func (g *Gemini) contents(history []Content) ([]*genai.Content, error) {
	out := make([]*genai.Content, 0, len(history))
	for i, c := range history {
		gc := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			parts, err := g.toGenai(p)
			if err != nil {
				return nil, fmt.Errorf("history turn %d: %w", i+1, err)
			}
			gc.Parts = append(gc.Parts, parts...)
		}
		out = append(out, gc)
	}
	return out, nil
}

// toGenai converts one Part; a function response with inline data becomes several parts
// for models that take none inside the response.
func (g *Gemini) toGenai(p Part) ([]*genai.Part, error) {
	if len(p.Raw) > 0 {
		var gp genai.Part
		if err := json.Unmarshal(p.Raw, &gp); err == nil {
			if b, err := json.Marshal(&gp); err == nil && string(b) != "{}" {
				return []*genai.Part{&gp}, nil
			}
		}
	}
	switch {
	case p.FunctionCall != nil:
		var args map[string]any
		if len(p.FunctionCall.Args) > 0 {
			if err := json.Unmarshal(p.FunctionCall.Args, &args); err != nil {
				return nil, fmt.Errorf("the arguments of the call to %s are not a JSON object: %w", p.FunctionCall.Name, err)
			}
		}
		return []*genai.Part{{
			FunctionCall:     &genai.FunctionCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args},
			ThoughtSignature: p.ThoughtSignature,
		}}, nil
	case p.FunctionResponse != nil:
		fr := p.FunctionResponse
		resp := &genai.FunctionResponse{ID: fr.ID, Name: fr.Name, Response: fr.Response}
		parts := []*genai.Part{{FunctionResponse: resp}}
		for _, b := range fr.Parts {
			if g.supportsFunctionResponseParts() {
				resp.Parts = append(resp.Parts, &genai.FunctionResponsePart{
					InlineData: &genai.FunctionResponseBlob{MIMEType: b.MIMEType, Data: b.Data},
				})
			} else {
				parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: b.MIMEType, Data: b.Data}})
			}
		}
		return parts, nil
	case p.InlineData != nil:
		return []*genai.Part{{InlineData: &genai.Blob{MIMEType: p.InlineData.MIMEType, Data: p.InlineData.Data}}}, nil
	default:
		return []*genai.Part{{Text: p.Text, Thought: p.Thought, ThoughtSignature: p.ThoughtSignature}}, nil
	}
}

func (g *Gemini) chunk(resp *genai.GenerateContentResponse) Chunk {
	var c Chunk
	if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
		cand := resp.Candidates[0]
		if cand.Content != nil {
			for _, gp := range cand.Content.Parts {
				if gp != nil {
					c.Parts = append(c.Parts, fromGenai(gp))
				}
			}
		}
		c.FinishReason = string(cand.FinishReason)
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		c.FinishReason = FinishBlocked + ":" + string(pf.BlockReason)
	}
	if u := resp.UsageMetadata; u != nil {
		c.Usage = &Usage{
			PromptTokens:  int(u.PromptTokenCount),
			OutputTokens:  int(u.CandidatesTokenCount),
			ThoughtTokens: int(u.ThoughtsTokenCount),
			TotalTokens:   int(u.TotalTokenCount),
		}
	}
	return c
}

// fromGenai converts a part the model sent, keeping its JSON form in Raw.
func fromGenai(gp *genai.Part) Part {
	p := Part{Text: gp.Text, Thought: gp.Thought, ThoughtSignature: gp.ThoughtSignature}
	if raw, err := json.Marshal(gp); err == nil {
		p.Raw = raw
	}
	if fc := gp.FunctionCall; fc != nil {
		args, err := marshalArgs(fc.Args)
		if err != nil || fc.Args == nil {
			args = []byte("{}")
		}
		id := fc.ID
		if id == "" {
			id = newCallID(fc.Name)
		}
		p.FunctionCall = &FunctionCall{ID: id, Name: fc.Name, Args: args}
	}
	if b := gp.InlineData; b != nil {
		p.InlineData = &Blob{MIMEType: b.MIMEType, Data: b.Data}
	}
	return p
}

// newCallID makes up an id for a call the model sent without one, the way Gemini CLI
// does: the tool's name and a random suffix.
func newCallID(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return name + "-" + hex.EncodeToString(b[:])
}

// marshalArgs encodes a call's arguments as the model gave them, without the HTML
// escaping of json.Marshal: policy rules' argsPattern match these bytes, as Gemini
// CLI's match JSON.stringify's, so "a && b" must stay "a && b", not "a \u0026\u0026 b".
func marshalArgs(args map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
