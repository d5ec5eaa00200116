package rpc

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/workspace"
)

// ClientCapabilities is what the client advertised in initialize. agentls sends a
// feature only where the client advertised it: every such check goes through one of
// these methods, so that the decision is made the same way everywhere.
//
// The capabilities are kept as the generic JSON the client sent rather than decoded
// into protocol.ClientCapabilities: a client with one oddly typed capability (they
// exist) must still get a working server, and a capability agentls does not know is
// simply absent. Lookup reaches any of them.
type ClientCapabilities struct {
	raw map[string]any
}

// ParseClientCapabilities reads the capabilities object of initialize params. Anything
// that is not a JSON object advertises nothing.
func ParseClientCapabilities(data []byte) ClientCapabilities {
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return ClientCapabilities{}
	}
	return ClientCapabilities{raw: raw}
}

// Lookup returns the value at path (object keys, outermost first), or nil.
func (c ClientCapabilities) Lookup(path ...string) any {
	var v any = c.raw
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Bool reports whether the value at path is true.
func (c ClientCapabilities) Bool(path ...string) bool {
	b, _ := c.Lookup(path...).(bool)
	return b
}

// Object reports whether the value at path is a JSON object: how LSP advertises a
// capability whose details are optional, such as window.showMessage.
func (c ClientCapabilities) Object(path ...string) bool {
	_, ok := c.Lookup(path...).(map[string]any)
	return ok
}

// Strings returns the strings of the array at path.
func (c ClientCapabilities) Strings(path ...string) []string {
	arr, _ := c.Lookup(path...).([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// ApplyEdit reports workspace/applyEdit support.
func (c ClientCapabilities) ApplyEdit() bool { return c.Bool("workspace", "applyEdit") }

// DocumentChanges reports versioned TextDocumentEdits in workspace edits (and so edits
// with a null version, for files the editor has not opened).
func (c ClientCapabilities) DocumentChanges() bool {
	return c.ApplyEdit() && c.Bool("workspace", "workspaceEdit", "documentChanges")
}

// ResourceOperation reports whether workspace edits may carry the resource operation
// kind ("create", "rename", "delete").
func (c ClientCapabilities) ResourceOperation(kind string) bool {
	return c.DocumentChanges() && slices.Contains(c.Strings("workspace", "workspaceEdit", "resourceOperations"), kind)
}

// ChangeAnnotations reports change annotation support in workspace edits.
func (c ClientCapabilities) ChangeAnnotations() bool {
	return c.DocumentChanges() && c.Object("workspace", "workspaceEdit", "changeAnnotationSupport")
}

// WorkDoneProgress reports server-initiated progress (window/workDoneProgress/create
// and $/progress).
func (c ClientCapabilities) WorkDoneProgress() bool { return c.Bool("window", "workDoneProgress") }

// Diagnostics reports textDocument/publishDiagnostics support.
func (c ClientCapabilities) Diagnostics() bool { return c.Object("textDocument", "publishDiagnostics") }

// CodeActionLiterals reports a client that takes CodeAction objects in answer to
// textDocument/codeAction; others take Command objects only.
func (c ClientCapabilities) CodeActionLiterals() bool {
	return c.Object("textDocument", "codeAction", "codeActionLiteralSupport")
}

// ShowMessageRequest reports window/showMessageRequest support.
func (c ClientCapabilities) ShowMessageRequest() bool { return c.Object("window", "showMessage") }

// ShowDocument reports window/showDocument support.
func (c ClientCapabilities) ShowDocument() bool { return c.Bool("window", "showDocument", "support") }

// Rich reports a client that declared the experimental.agentls capability: one of the
// agentls plugins.
func (c ClientCapabilities) Rich() bool { return c.Object("experimental", "agentls") }

// RichConfirm reports a client that answers agentls/confirm.
func (c ClientCapabilities) RichConfirm() bool { return c.Bool("experimental", "agentls", "confirm") }

// RichElicit reports a client that answers agentls/elicit (MCP servers' questions).
func (c ClientCapabilities) RichElicit() bool { return c.Bool("experimental", "agentls", "elicit") }

// RichAsk reports a client that answers agentls/confirm of type ask_user (an optional
// extension): it puts ask_user's questions to the person and answers with their
// answers.
func (c ClientCapabilities) RichAsk() bool { return c.Bool("experimental", "agentls", "askUser") }

// RichUpdates reports a client that wants agentls/update notifications.
func (c ClientCapabilities) RichUpdates() bool { return c.Bool("experimental", "agentls", "updates") }

// PositionEncoding returns the position encoding to use with this client: UTF-8 or
// UTF-32 when the client offers one (agentls holds text as UTF-8, so UTF-8 is
// cheapest), else UTF-16, which every client supports.
func (c ClientCapabilities) PositionEncoding() workspace.PositionEncoding {
	offered := c.Strings("general", "positionEncodings")
	for _, enc := range []workspace.PositionEncoding{workspace.PositionUTF8, workspace.PositionUTF32} {
		if slices.Contains(offered, string(enc)) {
			return enc
		}
	}
	return workspace.PositionUTF16
}

// The commands of workspace/executeCommand (see commandHandler.table).
const (
	cmdRunTool         = "agentls.runTool"
	cmdListTools       = "agentls.listTools"
	cmdPrompt          = "agentls.prompt"
	cmdCancel          = "agentls.cancel"
	cmdSetApprovalMode = "agentls.setApprovalMode"
	cmdDiscoverTools   = "agentls.discoverTools"
	cmdConfirm         = "agentls.confirm"
	cmdListSessions    = "agentls.listSessions"
	cmdMCPStatus       = "agentls.mcpStatus"
	cmdMCPAuth         = "agentls.mcpAuth"
	cmdListPrompts     = "agentls.listPrompts"
	cmdRunPrompt       = "agentls.runPrompt"
	cmdTrust           = "agentls.trust"
	cmdUndoTurn        = "agentls.undoTurn"
	cmdRedoTurn        = "agentls.redoTurn"
	cmdTurnDiff        = "agentls.turnDiff"
	cmdListRules       = "agentls.listRules"
	cmdRemoveRule      = "agentls.removeRule"
	cmdSessionHistory  = "agentls.sessionHistory"
	cmdStatus          = "agentls.status"
	cmdMetrics         = "agentls.metrics"
)

// ProtocolVersion is the version of the agentls editor protocol (docs/protocol.md) this
// server speaks, reported in capabilities.experimental.agentls.protocolVersion.
const ProtocolVersion = 1

// serverCapabilities are the capabilities of the initialize result, exactly as
// docs/protocol.md lists them.
func serverCapabilities(enc workspace.PositionEncoding, commands []string) protocol.ServerCapabilities {
	yes, no := true, false
	incremental := protocol.TextDocumentSyncKindIncremental
	return protocol.ServerCapabilities{
		PositionEncoding: protocol.PositionEncodingKind(enc),
		TextDocumentSync: &protocol.TextDocumentSyncOptions{
			OpenClose: &yes,
			Change:    &incremental,
			Save:      &protocol.SaveOptions{IncludeText: &no},
		},
		ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: slices.Clone(commands)},
		CodeActionProvider: &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{
			protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactorRewrite, "source.agentls",
		}},
		Workspace: &protocol.WorkspaceOptions{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
			Supported:           &yes,
			ChangeNotifications: protocol.Boolean(true),
		}},
		Experimental: jsontext.Value(`{"agentls":{"protocolVersion":` + strconv.Itoa(ProtocolVersion) + `}}`),
	}
}
