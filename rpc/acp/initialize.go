package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// protocolVersion is the ACP version agentls speaks.
const protocolVersion = sdk.ProtocolVersion(sdk.ProtocolVersionNumber)

// Initialize answers with the protocol version (1, the only one; a client asking for
// another decides whether to go on), agentls's capabilities and its authentication
// methods (auth.go).
func (c *conn) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	c.mu.Lock()
	c.caps = p.ClientCapabilities
	c.mu.Unlock()
	methods := c.authMethods(p.ClientCapabilities)
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
				List:                  &sdk.SessionListCapabilities{},
				Close:                 &sdk.SessionCloseCapabilities{},
				Resume:                &sdk.SessionResumeCapabilities{},
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{},
				// session/delete, which the Go SDK's types do not have yet.
				Meta: map[string]any{fieldsMeta: map[string]any{"delete": map[string]any{}}},
			},
			Auth: sdk.AgentAuthCapabilities{Logout: &sdk.LogoutCapabilities{}},
		},
		AuthMethods: methods,
	}
	return res, nil
}

// JSON-RPC error codes.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeAuthRequired   = -32000
	codeNotFound       = -32002
	codeCancelled      = -32800
)

// cancelled is the answer to a request the client withdrew with $/cancel_request.
func cancelled() *sdk.RequestError {
	return &sdk.RequestError{Code: codeCancelled, Message: "Request cancelled: the client withdrew it ($/cancel_request)"}
}

// withdrawn reports whether the client withdrew the request of ctx with
// $/cancel_request (the SDK cancels its context with context.Canceled; the end of
// the connection cancels it with another cause).
func withdrawn(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// invalidParams is an Invalid params error with a message saying what is wrong.
func invalidParams(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// failed is an error of a request that could not be carried out.
func failed(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInternal, Message: fmt.Sprintf(format, args...)}
}
