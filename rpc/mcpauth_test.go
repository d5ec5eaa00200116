package rpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/internal/testutil"
)

// oauthMCPServer serves, behind OAuth, an MCP server with the tools "hello" and "pick"
// (which asks the client to choose a size).
func oauthMCPServer(t *testing.T) *testutil.OAuthServers {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from behind OAuth"}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "pick", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Which size?", RequestedSchema: json.RawMessage(
			`{"type":"object","properties":{"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}}}`)})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
	})
	return testutil.NewOAuthServers(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
}

// TestMCPAuthInTheEditor: a server that answers 401 says "needs authorization" until
// agentls.mcpAuth, whose browser step opens the page with window/showDocument
// (external); the token lands in $XDG_STATE_HOME/agentls/mcp-tokens, mode 0600; the
// server's question comes as window/showMessageRequest with its choices.
func TestMCPAuthInTheEditor(t *testing.T) {
	t.Parallel()
	o := oauthMCPServer(t)
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	cfg, state := t.TempDir(), t.TempDir()
	settings := `{"mcpServers": {"remote": {"url": ` + strconvQuote(o.Endpoint) + `, "trust": true}}}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startEnv(t, root, []string{"XDG_CONFIG_HOME=" + cfg, "XDG_STATE_HOME=" + state})
	browser := &testutil.Browser{}
	shown := make(chan map[string]any, 4)
	c.Handle("window/showDocument", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p map[string]any
		_ = json.Unmarshal(params, &p)
		shown <- p
		uri, _ := p["uri"].(string)
		go func() { _ = browser.Open(context.Background(), "remote", uri) }()
		return map[string]any{"success": true}, nil
	})
	asked := make(chan json.RawMessage, 4)
	c.Handle("window/showMessageRequest", func(_ context.Context, params json.RawMessage) (any, error) {
		asked <- params
		return map[string]any{"title": "Large"}, nil
	})
	caps := withCaps(capsRich, "window", map[string]any{
		"showDocument": map[string]any{"support": true},
		"showMessage":  map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
	})
	if _, err := c.Initialize(ctx, initParams(root, caps, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, "agentls/update", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), `"mcp_status"`) && strings.Contains(string(m.Params), "needs authorization: run `agentls mcp auth remote`")
	}); err != nil {
		t.Fatalf("no needs-authorization status: %v", err)
	}
	if len(shown) != 0 {
		t.Fatal("the authorization page opened before the user asked")
	}

	var st struct{ Name, State, Error string }
	if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.mcpAuth",
		"arguments": []any{map[string]any{"server": "remote"}}}, &st); err != nil || st.State != "connected" {
		t.Fatalf("agentls.mcpAuth = %+v, %v", st, err)
	}
	p := <-shown
	if p["external"] != true || !strings.HasPrefix(p["uri"].(string), o.AS.URL+"/authorize?") {
		t.Errorf("showDocument %v", p)
	}
	if res := runTool(ctx, t, c, "remote__hello", map[string]any{}); res.Status != "success" || !strings.Contains(res.Output, "hello from behind OAuth") {
		t.Fatalf("hello: %+v", res)
	}
	files, _ := filepath.Glob(filepath.Join(state, "agentls", "mcp-tokens", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", fi.Mode(), err)
	}
	if refused := o.Stats().Refused; len(refused) > 0 {
		t.Errorf("the OAuth servers refused: %v", refused)
	}

	res := runTool(ctx, t, c, "remote__pick", map[string]any{})
	if res.Status != "success" || !strings.Contains(res.Output, `"action":"accept"`) || !strings.Contains(res.Output, `"size":"l"`) {
		t.Fatalf("pick: %+v", res)
	}
	var q struct {
		Message string
		Actions []struct{ Title string }
	}
	_ = json.Unmarshal(<-asked, &q)
	if !strings.Contains(q.Message, "Which size?") || len(q.Actions) != 3 || q.Actions[0].Title != "Small" || q.Actions[2].Title != "Decline" {
		t.Errorf("question %+v", q)
	}
}

// TestElicitInTheEditor: server-everything's form goes to a client that declared
// experimental.agentls.elicit as agentls/elicit, and its answer (defaults applied)
// reaches the server; a client without it, for which one choice cannot answer the form,
// sees the question declined with a message saying why.
func TestElicitInTheEditor(t *testing.T) {
	t.Parallel()
	entry := testutil.NPMServer(t, "server-everything")
	for _, kind := range []string{"rich", "askUser", "plain"} {
		rich := kind == "rich"
		t.Run(kind, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			cfg := t.TempDir()
			settings := `{"mcpServers": {"everything": {"command": "node", "args": [` + strconvQuote(entry) + `, "stdio"], "trust": true}}}`
			if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			c := startEnv(t, root, []string{"XDG_CONFIG_HOME=" + cfg})
			asked := make(chan json.RawMessage, 2)
			c.Handle("agentls/elicit", func(_ context.Context, params json.RawMessage) (any, error) {
				asked <- params
				return map[string]any{"action": "accept", "values": map[string]any{"name": "Ada"}}, nil
			})
			caps := capsEditor
			switch kind {
			case "rich":
				caps = withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"elicit": true}})
			case "askUser":
				caps = withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true, "askUser": true}})
			}
			questions := make(chan json.RawMessage, 2)
			c.Handle("agentls/confirm", func(_ context.Context, params json.RawMessage) (any, error) {
				questions <- params
				var d struct {
					Type      string
					Questions []struct{ Header string }
				}
				_ = json.Unmarshal(params, &d)
				answers := map[string]string{}
				for i, q := range d.Questions {
					switch q.Header {
					case "name":
						answers[strconv.Itoa(i)] = "Ada"
					case "legacyTitledEnum":
						answers[strconv.Itoa(i)] = "Dogs"
					}
				}
				return map[string]any{"outcome": "proceed_once", "answers": answers}, nil
			})
			if _, err := c.Initialize(ctx, initParams(root, caps, nil)); err != nil {
				t.Fatal(err)
			}
			var names []struct{ Name string }
			for {
				if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.listTools"}, &names); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(toolNames(names), "everything__trigger-elicitation-request") {
					break
				}
				waitALittle(ctx)
			}
			res := runTool(ctx, t, c, "everything__trigger-elicitation-request", map[string]any{})
			if kind == "askUser" {
				if res.Status != "success" || !strings.Contains(res.Output, "- Name: Ada") || !strings.Contains(res.Output, `"legacyTitledEnum": "pet-2"`) ||
					!strings.Contains(res.Output, "- Favorite Integer: 42") {
					t.Fatalf("result %+v", res)
				}
				var d struct{ Type, Title string }
				_ = json.Unmarshal(<-questions, &d)
				if d.Type != "ask_user" || !strings.Contains(d.Title, "MCP server everything asks") {
					t.Errorf("confirmation %+v", d)
				}
				return
			}
			if rich {
				if res.Status != "success" || !strings.Contains(res.Output, "- Name: Ada") || !strings.Contains(res.Output, "- Favorite Integer: 42") {
					t.Fatalf("result %+v", res)
				}
				var q struct {
					Server, Message string
					Fields          []struct{ Name string }
				}
				_ = json.Unmarshal(<-asked, &q)
				if q.Server != "everything" || len(q.Fields) < 10 {
					t.Errorf("question %+v", q)
				}
				return
			}
			if !strings.Contains(res.Output, "User declined") {
				t.Fatalf("result %+v", res)
			}
			if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool {
				return strings.Contains(string(m.Params), "the editor cannot show its form")
			}); err != nil {
				t.Errorf("no message saying the question was declined: %v", err)
			}
			if len(asked) != 0 {
				t.Errorf("a plain client got agentls/elicit")
			}
		})
	}
}
