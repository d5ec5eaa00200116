package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
)

// cmdMCP is `agentls mcp auth|logout SERVER` and the hidden `agentls mcp
// conformance-client URL` that the MCP conformance suite runs (test/mcp-conformance).
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "agentls mcp: want auth SERVER or logout SERVER\n")
		return exitBadUsage
	}
	switch args[0] {
	case "auth", "logout":
		return cmdMCPAuth(ctx, args[0], args[1:], stdout, stderr)
	case "conformance-client":
		return cmdConformanceClient(ctx, args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "agentls mcp: unknown command %q; want auth SERVER or logout SERVER\n", args[0])
	return exitBadUsage
}

// terminalAuthorize is the browser step on a terminal: the URL is printed on stderr
// and, when $BROWSER is set, opened with it (as gh does). $BROWSER runs in the
// background: the flow waits for the redirect, not for the browser.
func terminalAuthorize(stderr io.Writer) mcp.AuthorizeFunc {
	return func(ctx context.Context, server, authURL string) error {
		fmt.Fprintf(stderr, "agentls: MCP server %s needs authorization; open this page to grant it:\n  %s\n", server, authURL)
		browser := os.Getenv("BROWSER")
		if browser == "" {
			return nil
		}
		fields := strings.Fields(browser)
		cmd := exec.Command(fields[0], append(fields[1:], authURL)...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("running $BROWSER: %w", err)
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}

// cmdMCPAuth authorizes a server of the settings, or forgets its token.
// The workspace (--root, else the current directory) counts: its settings may name the
// server, in a trusted folder.
func cmdMCPAuth(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls mcp "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "agentls mcp %s: want the name of one MCP server\n", verb)
		return exitBadUsage
	}
	name := pos[0]
	tb, err := newToolbox(toolbox.Options{Roots: workspaceRoots([]string{*root}), Logger: newLogger(stderr), MCPAuthorize: terminalAuthorize(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer tb.Close()
	m, err := tb.NewMCPManager(name)
	if err != nil {
		fmt.Fprintf(stderr, "agentls mcp %s: %v\n", verb, err)
		return exitFailure
	}
	defer m.Close()
	if verb == "logout" {
		had, err := m.Logout(name)
		if err != nil {
			fmt.Fprintf(stderr, "agentls mcp logout: %v\n", err)
			return exitFailure
		}
		if had {
			fmt.Fprintf(stdout, "agentls: the OAuth token of MCP server %s is removed\n", name)
		} else {
			fmt.Fprintf(stdout, "agentls: no OAuth token of MCP server %s was stored\n", name)
		}
		return exitOK
	}
	if err := m.Authorize(ctx, name); err != nil {
		fmt.Fprintf(stderr, "agentls mcp auth: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "agentls: MCP server %s is authorized\n", name)
	return exitOK
}

// defaultsElicitor answers every question by accepting the schema's defaults: the
// conformance client's person, who checks that defaults are applied (SEP-1034).
type defaultsElicitor struct{}

func (defaultsElicitor) Elicit(_ context.Context, q *mcp.Question) (*mcp.Answer, error) {
	return &mcp.Answer{Action: mcp.ActionAccept}, nil
}

// conformanceCalls are the tool calls each client scenario of the conformance suite
// waits for, after connecting and listing the tools.
var conformanceCalls = map[string]struct {
	tool string
	args string
}{
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

// cmdConformanceClient is the client of the MCP conformance suite: it connects agentls's
// MCP manager to the scenario's server (argument URL; the scenario in
// $MCP_CONFORMANCE_SCENARIO, its data in $MCP_CONFORMANCE_CONTEXT), with OAuth's browser
// step done by $BROWSER, and makes the scenario's call through the tool as the agent
// would. Tokens go to a temporary directory.
func cmdConformanceClient(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "agentls mcp conformance-client: want the server's URL\n")
		return exitBadUsage
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	// The scenario's context: its client, and for client-credentials-jwt its key, for
	// cross-app-access its identity provider and the person's ID token there.
	var cc struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		SigningAlgorithm string `json:"signing_algorithm"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPIssuer        string `json:"idp_issuer"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
	}
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			fmt.Fprintf(stderr, "agentls: $MCP_CONFORMANCE_CONTEXT: %v\n", err)
			return exitBadUsage
		}
	}
	dir, err := os.MkdirTemp("", "agentls-conformance-tokens-")
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(dir)
	cfg := mcp.ServerConfig{URL: args[0], Trust: true, Timeout: 20000}
	var idToken mcp.IDTokenFunc
	if strings.HasPrefix(scenario, "auth/") {
		oc := &mcp.OAuthConfig{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret,
			// The suite's authorization server accepts this client ID metadata
			// document URL where it advertises them.
			ClientMetadataURL: "https://conformance-test.local/client-metadata.json"}
		if strings.HasPrefix(scenario, "auth/client-credentials-") {
			oc.GrantType = "client_credentials"
		}
		if cc.PrivateKeyPEM != "" {
			// The key goes to a file as a person's settings would name it.
			key := filepath.Join(dir, "client-key.pem")
			if err := os.WriteFile(key, []byte(cc.PrivateKeyPEM), 0o600); err != nil {
				fmt.Fprintf(stderr, "agentls: %v\n", err)
				return exitFailure
			}
			oc.ClientSecret, oc.PrivateKeyFile, oc.SigningAlgorithm = "", key, cc.SigningAlgorithm
		}
		if cc.IdPIssuer != "" {
			oc.Enterprise = &mcp.EnterpriseConfig{Issuer: cc.IdPIssuer, TokenURL: cc.IdPTokenEndpoint, ClientID: cc.IdPClientID}
			idToken = func(context.Context, string) (string, error) { return cc.IdPIDToken, nil }
		}
		cfg.OAuth = oc
	}
	logger := leveledLogger(stderr, 0)
	m := mcp.NewManager(mcp.Options{
		Servers:       map[string]mcp.ServerConfig{"conformance": cfg},
		Logger:        logger,
		TokenDir:      dir,
		Authorize:     terminalAuthorize(stderr),
		AutoAuthorize: true,
		Elicit:        defaultsElicitor{},

		EnterpriseIDToken: idToken,
	})
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	st := m.Statuses()[0]
	if !st.Connected() {
		fmt.Fprintf(stderr, "agentls: %s\n", st.Error)
		return exitFailure
	}
	call, ok := conformanceCalls[scenario]
	if strings.HasPrefix(scenario, "auth/") {
		call.tool, call.args, ok = "test-tool", `{}`, true
	}
	if !ok {
		fmt.Fprintf(stdout, "connected; %d tools\n", st.Tools)
		return exitOK
	}
	var tool tools.Tool
	for _, t := range m.Tools() {
		if t.Info().Name == "conformance__"+call.tool {
			tool = t
		}
	}
	if tool == nil {
		fmt.Fprintf(stderr, "agentls: the server offers no tool %q\n", call.tool)
		return exitFailure
	}
	inv, err := tool.Build(json.RawMessage(call.args))
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	res, err := inv.Execute(ctx, io.Discard)
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) {
			fmt.Fprintf(stderr, "agentls: %s: %v\n", call.tool, te)
		} else {
			fmt.Fprintf(stderr, "agentls: %s: %v\n", call.tool, err)
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s: %s\n", call.tool, res.Output)
	return exitOK
}
