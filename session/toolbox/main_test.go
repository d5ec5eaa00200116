package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as an MCP server over stdio: run with mcpServerEnv set to a
// directory, it leaves a file named after its pid there and serves one tool, echo,
// instead of running the tests. The tests get a real process over a real pipe.
const mcpServerEnv = "AGENTLS_TOOLBOX_TEST_MCP"

func TestMain(m *testing.M) {
	if dir := os.Getenv(mcpServerEnv); dir != "" {
		os.Exit(serveMCP(dir))
	}
	os.Exit(m.Run())
}

// serveMCP notes its start in dir and serves the echo tool over stdio.
func serveMCP(dir string) int {
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "kit", Version: "1"}, &sdk.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo"}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// kitServer returns the settings' mcpServers entry that names the test binary as the
// MCP server kit, which notes each start in dir.
func kitServer(dir string) string {
	// GORACE: a race-enabled process otherwise sleeps a second when it exits.
	return fmt.Sprintf(`"mcpServers": {"kit": {"command": %q, "trust": true, "env": {%q: %q, "GORACE": "atexit_sleep_ms=0"}}}`,
		os.Args[0], mcpServerEnv, dir)
}
