package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools/mcp"
)

// The editor's side of MCP servers' OAuth and questions: the server is the toolbox's
// mcp.AuthorizeFunc (authorize) and mcp.Elicitor (Elicit).

// authorize shows the authorization page of an MCP server: window/showDocument with
// external: true where the client supports it, else (or when the client could not open
// it) a message with the link.
func (s *Server) authorize(ctx context.Context, server, authURL string) error {
	if s.capabilities().ShowDocument() {
		yes := true
		var r protocol.ShowDocumentResult
		err := s.call(ctx, "window/showDocument", protocol.ShowDocumentParams{URI: uri.URI(authURL), External: &yes}, &r)
		if err == nil && r.Success {
			s.tell(protocol.MessageTypeInfo, fmt.Sprintf("agentls: MCP server %s: authorize agentls in the browser page just opened", server))
			return nil
		}
		s.log.Info("the editor did not open the authorization page", "server", server, "err", err)
	}
	s.tell(protocol.MessageTypeInfo, fmt.Sprintf("agentls: MCP server %s needs authorization; open this page to grant it: %s", server, authURL))
	return nil
}

// mcpAuthArgs are the arguments of agentls.mcpAuth.
type mcpAuthArgs struct {
	Server string `json:"server"`
}

// mcpAuth runs the OAuth flow of an MCP server (agentls.mcpAuth) and returns its status.
func (c *commandHandler) mcpAuth(ctx context.Context, d deps, a mcpAuthArgs) (toolbox.MCPStatus, error) {
	if a.Server == "" {
		return toolbox.MCPStatus{}, jsonrpc2.Errorf(jsonrpc2.InvalidParams, `%s: "server" is required`, d.callee)
	}
	if err := d.toolbox.AuthorizeMCP(ctx, a.Server); err != nil {
		return toolbox.MCPStatus{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	for _, st := range d.toolbox.MCPStatuses() {
		if st.Name == a.Server {
			return st, nil
		}
	}
	return toolbox.MCPStatus{}, jsonrpc2.Errorf(codeRequestFailed, "no MCP server is called %q", a.Server)
}

// Elicit implements mcp.Elicitor: rich clients that declare experimental.agentls.elicit
// get agentls/elicit with the form, those that declare askUser get it as ask_user
// questions (agentls/confirm); others, with window/showMessageRequest, get a question
// whose answer is one choice (no field, one yes/no field, or one field of choices);
// anything else is declined, saying so.
func (s *Server) Elicit(ctx context.Context, q *mcp.Question) (*mcp.Answer, error) {
	caps := s.capabilities()
	switch {
	case caps.RichElicit():
		var a mcp.Answer
		if err := s.call(ctx, "agentls/elicit", q, &a); err != nil {
			return nil, fmt.Errorf("agentls/elicit failed: %w", err)
		}
		switch a.Action {
		case mcp.ActionAccept, mcp.ActionDecline, mcp.ActionCancel:
			return &a, nil
		}
		return nil, fmt.Errorf("the editor answered agentls/elicit with action %q; want accept, decline or cancel", a.Action)
	case caps.RichAsk():
		// The form as ask_user questions, which the client already puts to the person.
		return mcp.AskElicitor(s).Elicit(ctx, q)
	case caps.ShowMessageRequest():
		if titles, answers, ok := simpleChoices(q); ok {
			return s.elicitMessage(ctx, q, titles, answers)
		}
	}
	s.tell(protocol.MessageTypeWarning, fmt.Sprintf("agentls declined a question of MCP server %s (%q): the editor cannot show its form", q.Server, q.Message))
	return &mcp.Answer{Action: mcp.ActionDecline}, nil
}

// simpleChoices returns the titles of a question that one choice answers, and the
// answer of each; ok is false for a form that needs more.
func simpleChoices(q *mcp.Question) (titles []string, answers map[string]*mcp.Answer, ok bool) {
	const decline = "Decline"
	answers = map[string]*mcp.Answer{decline: {Action: mcp.ActionDecline}}
	switch {
	case len(q.Fields) == 0:
		answers["Accept"] = &mcp.Answer{Action: mcp.ActionAccept}
		return []string{"Accept", decline}, answers, true
	case len(q.Fields) > 1:
		return nil, nil, false
	}
	f := q.Fields[0]
	switch {
	case f.Type == "boolean":
		answers["Yes"] = &mcp.Answer{Action: mcp.ActionAccept, Values: map[string]any{f.Name: true}}
		answers["No"] = &mcp.Answer{Action: mcp.ActionAccept, Values: map[string]any{f.Name: false}}
		return []string{"Yes", "No", decline}, answers, true
	case f.Type == "string" && len(f.Choices) > 0:
		for i, c := range f.Choices {
			title := c
			if i < len(f.Labels) && f.Labels[i] != "" {
				title = f.Labels[i]
			}
			if _, dup := answers[title]; dup {
				return nil, nil, false
			}
			answers[title] = &mcp.Answer{Action: mcp.ActionAccept, Values: map[string]any{f.Name: c}}
			titles = append(titles, title)
		}
		return append(titles, decline), answers, true
	}
	return nil, nil, false
}

// elicitMessage puts a simple question with window/showMessageRequest.
func (s *Server) elicitMessage(ctx context.Context, q *mcp.Question, titles []string, answers map[string]*mcp.Answer) (*mcp.Answer, error) {
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, t := range titles {
		actions[i] = protocol.MessageActionItem{Title: t}
	}
	msg := fmt.Sprintf("agentls: MCP server %s asks: %s", q.Server, q.Message)
	if len(q.Fields) == 1 {
		f := q.Fields[0]
		label := f.Title
		if label == "" {
			label = f.Name
		}
		msg += "\n\n" + label
		if f.Description != "" {
			msg += " — " + f.Description
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConfirmTimeout)
	defer cancel()
	var chosen *protocol.MessageActionItem
	err := s.call(ctx, "window/showMessageRequest", protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeInfo, Message: msg, Actions: actions,
	}, &chosen)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return &mcp.Answer{Action: mcp.ActionCancel}, nil
	case err != nil:
		return nil, fmt.Errorf("window/showMessageRequest failed: %w", err)
	case chosen == nil:
		return &mcp.Answer{Action: mcp.ActionCancel}, nil
	}
	a, ok := answers[chosen.Title]
	if !ok {
		return nil, fmt.Errorf("the editor answered %q, which is not one of the choices offered (%s)", chosen.Title, strings.Join(titles, ", "))
	}
	return a, nil
}
