package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	sdk "github.com/coder/acp-go-sdk"
)

// Methods of the ACP schema that the Go SDK's connection does not route yet
// (github.com/coder/acp-go-sdk v0.13.0 predates them). filterInput renames their
// requests into the extension namespace, which the SDK hands to
// HandleExtensionMethod, and the answer goes back under the request's id as any
// other.
var newMethods = map[string]string{
	"session/delete": "_agentls/session/delete",
}

// renameNew returns line with its method renamed when it is one of newMethods.
func renameNew(line []byte) []byte {
	if !bytes.Contains(line, []byte("session/delete")) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil {
		return line
	}
	to, ok := newMethods[method]
	if !ok {
		return line
	}
	msg["method"] = json.RawMessage(strconv.Quote(to))
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return out
}

// HandleExtensionMethod serves the methods of newMethods.
func (c *conn) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case newMethods["session/delete"]:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("session/delete: %v", err)
		}
		if err := c.DeleteSession(ctx, p.SessionID); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	}
	return nil, sdk.NewMethodNotFound(method)
}
