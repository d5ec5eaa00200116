package clients

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/packages/param"
	"github.com/openai/openai-go/shared"
)

// DefaultOpenAIBaseURL is where NewOpenAI sends calls when neither the options nor
// OPENAI_BASE_URL say otherwise.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// DefaultOpenAIContextWindow is the input limit assumed for OpenAI-compatible models when
// the options give none.
const DefaultOpenAIContextWindow = 128_000

// OpenAIOptions configure a client of an OpenAI-compatible chat completions endpoint
// (OpenAI, Ollama, llama.cpp, vLLM, OpenRouter).
type OpenAIOptions struct {
	// BaseURL is the API's address including its version, e.g.
	// "http://localhost:11434/v1"; empty means OPENAI_BASE_URL, else
	// DefaultOpenAIBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty means OPENAI_API_KEY, else none (local
	// servers need none).
	APIKey string
	// Model is required: the endpoints have no common default.
	Model string
	// ContextWindow is the model's input limit; 0 means DefaultOpenAIContextWindow.
	ContextWindow int
	// Retry says how 429 and 5xx answers are retried.
	Retry RetryPolicy
	// Transport carries the HTTP requests under the retries; nil means
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives the client's warnings, such as each retry of a busy endpoint
	// (with the URL's secrets masked); nil discards them.
	Logger *slog.Logger
}

// OpenAI is a Client for OpenAI-compatible chat completions endpoints, streaming with
// usage. Reasoning that servers stream as "reasoning_content" or "reasoning" (vLLM,
// Ollama, OpenRouter, llama.cpp) arrives as thought parts; thoughts are not sent back.
type OpenAI struct {
	client openai.Client
	model  string
	window int
	ep     endpoint
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI makes a client of an OpenAI-compatible endpoint. It does not call it.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.Model == "" {
		return nil, errors.New("openai: no model given: name the model the endpoint serves")
	}
	c := &OpenAI{model: o.Model, window: cmp.Or(o.ContextWindow, DefaultOpenAIContextWindow)}
	c.ep = endpoint{name: "openai (" + o.Model + ")", keyHint: "OPENAI_API_KEY"}
	baseURL := cmp.Or(o.BaseURL, os.Getenv("OPENAI_BASE_URL"), DefaultOpenAIBaseURL)
	c.ep.url = baseURL
	key := o.APIKey
	switch {
	case key != "":
		c.ep.credential = "the configured OpenAI API key"
	case os.Getenv("OPENAI_API_KEY") != "":
		key = os.Getenv("OPENAI_API_KEY")
		c.ep.credential = "the API key in OPENAI_API_KEY"
	}
	c.ep.secret = key
	opts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(newRetryClient(o.Retry, o.Transport, o.Logger)),
		// Our transport retries, honouring Retry-After; the SDK's own retries would
		// multiply the attempts.
		option.WithMaxRetries(0),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	} else {
		// openai.NewClient reads OPENAI_API_KEY by itself; without a key no
		// Authorization header goes out.
		opts = append(opts, option.WithHeaderDel("authorization"))
	}
	c.client = openai.NewClient(opts...)
	return c, nil
}

// Model names the model in use.
func (c *OpenAI) Model() string { return c.model }

// ContextWindow is the model's input limit in tokens.
func (c *OpenAI) ContextWindow() int { return c.window }

// Stream sends req as a streamed chat completion. Text and reasoning are yielded as
// they arrive; tool calls, assembled from their pieces, come with the last chunk,
// together with the finish reason and usage.
func (c *OpenAI) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		params, err := c.params(req)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		ctx, ci := trackCall(ctx)
		stream := c.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()

		type pending struct {
			index    int64
			id, name string
			args     strings.Builder
		}
		var (
			// calls are the tool calls in the order they began; open is the call
			// each index is assembling.
			calls  []*pending
			open   = map[int64]*pending{}
			finish string
			usage  *Usage
		)
		for stream.Next() {
			chunk := stream.Current()
			if u := chunk.Usage; u.PromptTokens > 0 || u.TotalTokens > 0 || u.CompletionTokens > 0 {
				usage = &Usage{
					PromptTokens:  int(u.PromptTokens),
					OutputTokens:  int(u.CompletionTokens),
					ThoughtTokens: int(u.CompletionTokensDetails.ReasoningTokens),
					TotalTokens:   int(u.TotalTokens),
				}
			}
			var out Chunk
			for _, choice := range chunk.Choices {
				if choice.Index != 0 {
					continue
				}
				d := choice.Delta
				if r := reasoning(d); r != "" {
					out.Parts = append(out.Parts, Part{Text: r, Thought: true})
				}
				if d.Content != "" {
					out.Parts = append(out.Parts, Part{Text: d.Content})
				}
				for _, tc := range d.ToolCalls {
					p := open[tc.Index]
					// OpenAI gives a call's id with its first piece only; a new id at
					// the same index is a new call from a server that sends calls
					// whole and leaves the index out (Gemini's compatible endpoint).
					if p == nil || (tc.ID != "" && p.id != "" && tc.ID != p.id) {
						p = &pending{index: tc.Index}
						open[tc.Index] = p
						calls = append(calls, p)
					}
					if tc.ID != "" {
						p.id = tc.ID
					}
					if tc.Function.Name != "" {
						p.name += tc.Function.Name
					}
					p.args.WriteString(tc.Function.Arguments)
				}
				if choice.FinishReason != "" {
					finish = openAIFinish(choice.FinishReason)
				}
			}
			if len(out.Parts) > 0 && !yield(out, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(Chunk{}, c.ep.callError(ctx, err, ci, 0, ""))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(Chunk{}, err)
			return
		}
		last := Chunk{FinishReason: finish, Usage: usage}
		slices.SortStableFunc(calls, func(a, b *pending) int { return cmp.Compare(a.index, b.index) })
		for _, p := range calls {
			if p.name == "" {
				yield(Chunk{}, c.ep.errorf(0, nil, "the model sent a tool call without a name"))
				return
			}
			args := strings.TrimSpace(p.args.String())
			if args == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				// Send it on as a string argument the tool's validation rejects with
				// a message the model can act on.
				b, _ := json.Marshal(map[string]string{"invalid_json_arguments": args})
				args = string(b)
			}
			id := p.id
			if id == "" {
				id = newCallID(p.name)
			}
			last.Parts = append(last.Parts, Part{FunctionCall: &FunctionCall{ID: id, Name: p.name, Args: json.RawMessage(args)}})
		}
		if last.FinishReason == "" && len(last.Parts) > 0 {
			last.FinishReason = FinishStop
		}
		if len(last.Parts) > 0 || last.FinishReason != "" || last.Usage != nil {
			yield(last, nil)
		}
	}
}

// reasoning returns the reasoning text of a delta, which OpenAI's own API does not
// stream but compatible servers do under one of two names.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		// The SDK marks undeclared fields invalid; their raw JSON is what counts.
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func openAIFinish(r string) string {
	switch r {
	case "stop", "tool_calls", "function_call":
		return FinishStop
	case "length":
		return FinishMaxTokens
	case "content_filter":
		return FinishSafety
	default:
		return strings.ToUpper(r)
	}
}

func (c *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         cmp.Or(req.Model, c.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, content := range req.History {
		msgs, err := openAIMessages(content)
		if err != nil {
			return p, fmt.Errorf("history turn %d: %w", i+1, err)
		}
		p.Messages = append(p.Messages, msgs...)
	}
	for _, d := range req.Tools {
		schema, err := toolSchema(d)
		if err != nil {
			return p, err
		}
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fd := shared.FunctionDefinitionParam{Name: d.Name, Parameters: schema}
		if d.Description != "" {
			fd.Description = openai.String(d.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionToolParam{Function: fd})
	}
	if sp := req.Sampling; sp != nil {
		// OpenAI's API has no top-k.
		if sp.Temperature != nil {
			p.Temperature = openai.Float(*sp.Temperature)
		}
		if sp.TopP != nil {
			p.TopP = openai.Float(*sp.TopP)
		}
		if sp.MaxOutputTokens != nil {
			p.MaxCompletionTokens = openai.Int(int64(*sp.MaxOutputTokens))
		}
		if len(sp.StopSequences) > 0 {
			p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: sp.StopSequences}
		}
	}
	if req.ToolsRequired && len(p.Tools) > 0 {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoRequired))}
	}
	return p, nil
}

// openAIMessages maps one Content onto chat messages: a model turn is one assistant
// message (text and tool calls; thoughts stay out); a user turn is a tool message per
// function response, in order, then a user message with its text and media.
func openAIMessages(c Content) ([]openai.ChatCompletionMessageParamUnion, error) {
	if c.Role == RoleModel {
		var text strings.Builder
		var calls []openai.ChatCompletionMessageToolCallParam
		for _, p := range c.Parts {
			switch {
			case p.Thought:
			case p.FunctionCall != nil:
				args := string(p.FunctionCall.Args)
				if args == "" {
					args = "{}"
				}
				calls = append(calls, openai.ChatCompletionMessageToolCallParam{
					ID:       p.FunctionCall.ID,
					Function: openai.ChatCompletionMessageToolCallFunctionParam{Name: p.FunctionCall.Name, Arguments: args},
				})
			default:
				text.WriteString(p.Text)
			}
		}
		if text.Len() == 0 && len(calls) == 0 {
			return nil, nil
		}
		var a openai.ChatCompletionAssistantMessageParam
		if text.Len() > 0 {
			a.Content.OfString = param.NewOpt(text.String())
		}
		a.ToolCalls = calls
		return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &a}}, nil
	}

	var msgs []openai.ChatCompletionMessageParamUnion
	var user []openai.ChatCompletionContentPartUnionParam
	for _, p := range c.Parts {
		switch {
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			msgs = append(msgs, openai.ToolMessage(toolResultText(fr.Response), fr.ID))
			if len(fr.Parts) > 0 {
				// Tool messages carry text only: the media follow as the user's.
				user = append(user, openai.TextContentPart(fmt.Sprintf("Media returned by the %s tool:", fr.Name)))
				for _, b := range fr.Parts {
					user = append(user, mediaPart(b))
				}
			}
		case p.InlineData != nil:
			user = append(user, mediaPart(*p.InlineData))
		case p.Thought:
		case p.Text != "":
			user = append(user, openai.TextContentPart(p.Text))
		}
	}
	switch {
	case len(user) == 0:
	case len(user) == 1 && user[0].OfText != nil:
		msgs = append(msgs, openai.UserMessage(user[0].OfText.Text))
	default:
		msgs = append(msgs, openai.UserMessage(user))
	}
	return msgs, nil
}

// toolResultText is what the model reads of a function response: the output itself
// when it is plain text, else the response as JSON.
func toolResultText(resp map[string]any) string {
	if len(resp) == 1 {
		if s, ok := resp["output"].(string); ok {
			return s
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Sprint(resp)
	}
	return string(b)
}

func mediaPart(b Blob) openai.ChatCompletionContentPartUnionParam {
	uri := "data:" + b.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
	if strings.HasPrefix(b.MIMEType, "image/") {
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: uri})
	}
	return openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
		FileData: openai.String(uri),
		Filename: openai.String("attachment"),
	})
}
