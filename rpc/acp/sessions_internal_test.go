package acp

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestMCPSettings: the client's MCP servers become settings in the files' format:
// stdio as command/args/env, http as httpUrl, sse as url with type sse, headers kept.
func TestMCPSettings(t *testing.T) {
	s, err := mcpSettings([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "local", Command: "node", Args: []string{"srv.js"}, Env: []sdk.EnvVariable{{Name: "K", Value: "v"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "remote", Type: "http", Url: "http://127.0.0.1:1/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer t"}}}},
		{Sse: &sdk.McpServerSseInline{Name: "events", Type: "sse", Url: "http://127.0.0.1:1/sse", Headers: []sdk.HttpHeader{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.MCPServers)
	want := `{"events":{"url":"http://127.0.0.1:1/sse","type":"sse"},` +
		`"local":{"command":"node","args":["srv.js"],"env":{"K":"v"}},` +
		`"remote":{"httpUrl":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer t"}}}`
	if string(got) != want {
		t.Errorf("mcpServers =\n %s\nwant\n %s", got, want)
	}
	for _, bad := range [][]sdk.McpServer{
		{{Stdio: &sdk.McpServerStdio{Command: "x"}}}, // no name
		{{Acp: &sdk.McpServerAcpInline{Name: "a"}}},  // a transport agentls has not
	} {
		if _, err := mcpSettings(bad); err == nil {
			t.Errorf("mcpSettings(%+v) succeeded", bad)
		}
	}
}
