package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// protocolVersion is the ACP version agentls speaks.
const protocolVersion = sdk.ProtocolVersion(sdk.ProtocolVersionNumber)

// keyVars are the environment variables that give agentls a model, the first the one
// to set.
var keyVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY"}

// authMethodID is the id of the one authentication method: an API key in the
// environment agentls is started with.
const authMethodID = "gemini-api-key"

// Initialize answers with the protocol version (1, the only one; a client asking for
// another decides whether to go on), agentls's capabilities and, when no API key is
// in the environment, the method that says which variable to set.
func (c *conn) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	c.mu.Lock()
	c.caps = p.ClientCapabilities
	c.mu.Unlock()
	client := "unknown"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	c.log.Info("initialize", "client", client, "protocolVersion", p.ProtocolVersion,
		"fs.read", p.ClientCapabilities.Fs.ReadTextFile, "fs.write", p.ClientCapabilities.Fs.WriteTextFile,
		"terminal", p.ClientCapabilities.Terminal, "elicitation.form", formClient(p.ClientCapabilities))
	res := sdk.InitializeResponse{
		ProtocolVersion: protocolVersion,
		AgentInfo:       &sdk.Implementation{Name: "agentls", Title: sdk.Ptr("agentls"), Version: c.srv.o.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}
	if !c.hasKey() {
		res.AuthMethods = []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{
			Id:          authMethodID,
			Name:        "Set GEMINI_API_KEY",
			Description: sdk.Ptr(keyHint),
		}}}
	}
	return res, nil
}

// keyHint tells the user how to give agentls a model.
const keyHint = "agentls found no API key in its environment. Set GEMINI_API_KEY (or GOOGLE_API_KEY) " +
	"in the environment the editor starts `agentls acp` with (Zed: \"env\" of the agent server in settings.json), " +
	"or name another provider in ~/.config/agentls/settings.json, then restart the agent."

// hasKey reports whether the environment names a model's key.
func (c *conn) hasKey() bool {
	for _, v := range keyVars {
		if c.srv.o.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// Authenticate succeeds when the environment has a key, whichever method the client
// names (clients configured for Gemini CLI send its ids: gemini-api-key,
// oauth-personal, vertex-ai); agentls cannot take a key through the protocol, so
// otherwise it says which variable to set.
func (c *conn) Authenticate(_ context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	c.log.Info("authenticate", "method", p.MethodId, "key", c.hasKey())
	if !c.hasKey() {
		return sdk.AuthenticateResponse{}, &sdk.RequestError{Code: codeAuthRequired, Message: keyHint}
	}
	return sdk.AuthenticateResponse{}, nil
}

// JSON-RPC error codes.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeAuthRequired   = -32000
	codeNotFound       = -32002
)

// invalidParams is an Invalid params error with a message saying what is wrong.
func invalidParams(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// failed is an error of a request that could not be carried out.
func failed(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInternal, Message: fmt.Sprintf(format, args...)}
}
