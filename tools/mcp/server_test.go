package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as an MCP server over stdio: run with serverModeEnv set, it
// serves that mode instead of running the tests. This gives the tests a real process,
// a real pipe and a real crash.
const (
	serverModeEnv = "AGENTLS_MCP_TEST_SERVER"
	// markDirEnv names a directory where the server leaves marker files (such as
	// "cancelled") for the test to find.
	markDirEnv = "AGENTLS_MCP_TEST_MARKS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		os.Exit(serveTestServer(mode))
	}
	os.Exit(m.Run())
}

// serveTestServer runs the test server of mode over stdio and returns the exit code.
func serveTestServer(mode string) int {
	switch mode {
	case "silent":
		// Reads requests and never answers, not even initialize.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: missing configuration file")
		return 2
	case "linger":
		// Like many Node servers with open handles: it keeps running after its stdin
		// ends, and leaves its pid for the test to find.
		if dir := os.Getenv(markDirEnv); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		_ = newKitServer().Run(context.Background(), &sdk.StdioTransport{})
		select {}
	case "kit", "kit-delay":
		if mode == "kit-delay" {
			// A slow start, for the parallel-start benchmark.
			d, _ := time.ParseDuration(os.Getenv("AGENTLS_MCP_TEST_DELAY"))
			time.Sleep(d)
		}
		fmt.Fprintln(os.Stderr, "kit server starting")
		err := newKitServer().Run(context.Background(), &sdk.StdioTransport{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "kit server:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown test server mode", mode)
	return 1
}

// schema is a JSON Schema for a test tool.
func schema(s string) json.RawMessage { return json.RawMessage(s) }

var objectSchema = schema(`{"type":"object"}`)

// text returns a result of one text content.
func text(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// argsOf decodes a call's arguments.
func argsOf(req *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

// mark leaves a marker file for the test.
func mark(name string) {
	if dir := os.Getenv(markDirEnv); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644)
	}
}

// newKitServer returns the test server with a tool for each edge case.
func newKitServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "kit", Version: "1"},
		&sdk.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes message.", Annotations: readOnly,
		InputSchema: schema(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("echo: %v", argsOf(req)["message"]), nil
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Exits mid-call.", InputSchema: objectSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: deliberate crash")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "hang", Description: "Never answers.", InputSchema: objectSchema},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			mark("cancelled")
			return nil, ctx.Err()
		})
	s.AddTool(&sdk.Tool{Name: "steps", Description: "Reports progress, then waits to be cancelled if asked.",
		InputSchema: schema(`{"type":"object","properties":{"n":{"type":"integer"},"wait":{"type":"boolean"}}}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a := argsOf(req)
			n, _ := a["n"].(float64)
			for i := 1; i <= int(n); i++ {
				err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: n,
					Message: fmt.Sprintf("step %d", i)})
				if err != nil {
					return nil, err
				}
			}
			if wait, _ := a["wait"].(bool); wait {
				<-ctx.Done()
				mark("cancelled")
				return nil, ctx.Err()
			}
			return text("%d steps done", int(n)), nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Reports an error.", InputSchema: objectSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the disk is on fire"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "media", Description: "Returns every kind of content.", InputSchema: objectSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("PNGDATA")},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("WAVDATA")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://doc", MIMEType: "text/plain", Text: "embedded text"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://bin", MIMEType: "application/zip", Blob: []byte("ZIPDATA")}},
				&sdk.ResourceLink{URI: "test://linked", Name: "linked", MIMEType: "text/markdown", Description: "a linked page"},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "getenv", Description: "Returns an environment variable.",
		InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			name, _ := argsOf(req)["name"].(string)
			return text("%s=%s", name, os.Getenv(name)), nil
		})
	s.AddTool(&sdk.Tool{Name: "cwd", Description: "Returns the working directory.", InputSchema: objectSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			wd, _ := os.Getwd()
			return text("%s", wd), nil
		})
	// A draft-07 schema with the forms servers written for older drafts send.
	s.AddTool(&sdk.Tool{Name: "draft07", Description: "Has a draft-07 schema.",
		InputSchema: schema(`{
			"$schema": "http://json-schema.org/draft-07/schema#",
			"type": "object",
			"definitions": {"color": {"type": "string", "enum": ["red", "green"]}},
			"properties": {
				"color": {"$ref": "#/definitions/color"},
				"pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false},
				"size": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
				"weird": {"type": "strin", "description": "a typo in the type"},
				"remote": {"$ref": "https://example.com/schemas/thing.json"}
			},
			"dependencies": {"pair": ["color"]},
			"required": ["color"]
		}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("draft07 got %s", req.Params.Arguments), nil
		})
	// Two names that sanitise alike. (The SDK logs that "x y" is not a valid name
	// but serves it.)
	for _, name := range []string{"x y", "x_y"} {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: objectSchema},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return text("I am %q", name), nil
			})
	}
	s.AddTool(&sdk.Tool{Name: "add_tool", Description: "Adds the tool \"added\".", InputSchema: objectSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.AddTool(&sdk.Tool{Name: "added", InputSchema: objectSchema},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return text("added works"), nil
				})
			return text("added"), nil
		})
	s.AddResource(&sdk.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain", Description: "A greeting."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello resource"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets someone.",
		Arguments: []*sdk.PromptArgument{{Name: "name", Description: "who", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "."}},
				{Role: "assistant", Content: &sdk.TextContent{Text: "How can I help?"}},
			}}, nil
		})
	return s
}

// kitConfig is the configuration of the test binary serving mode over stdio.
func kitConfig(mode string, env map[string]string) ServerConfig {
	// GORACE: a race-enabled process otherwise sleeps a second when it exits.
	e := map[string]string{serverModeEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return ServerConfig{Command: os.Args[0], Env: e, Trust: true}
}

// httpKit serves the kit server over streamable HTTP (or SSE) on loopback and records
// the headers of the requests it receives.
type httpKit struct {
	URL string
	mu  sync.Mutex
	hdr []http.Header
}

func newHTTPKit(t *testing.T, sse bool) *httpKit {
	k := &httpKit{}
	srv := newKitServer()
	get := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler
	if sse {
		h = sdk.NewSSEHandler(get, nil)
	} else {
		h = sdk.NewStreamableHTTPHandler(get, nil)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.hdr = append(k.hdr, r.Header.Clone())
		k.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	k.URL = ts.URL
	return k
}

func (k *httpKit) headers() []http.Header {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]http.Header(nil), k.hdr...)
}
