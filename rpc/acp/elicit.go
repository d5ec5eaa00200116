package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
)

// Questions for the user (ask_user's, and MCP servers' forms) go to a client that
// declares clientCapabilities.elicitation.form as ACP's elicitation/create in form
// mode, scoped to the session and, when there is one, to the tool call that asks.
// That method is UNSTABLE in ACP (not in the spec yet); agentls follows the schema of
// github.com/coder/acp-go-sdk v0.13.0 (schema.unstable.json) and uses it only behind
// the client's capability.

// formClient reports whether the client answers elicitation/create forms.
func formClient(caps sdk.ClientCapabilities) bool {
	return caps.Elicitation != nil && caps.Elicitation.Form != nil
}

// askQuestions puts ask_user's questions to the user as one form (mcp.AskForm) and
// returns their answers. Declining or dismissing the form refuses the call; an answer
// that does not fit the form is an error the model reads.
func (st *sessionState) askQuestions(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	qs := req.Details.Questions
	msg := fmt.Sprintf("The agent has %d questions for you", len(qs))
	if len(qs) == 1 {
		msg = qs[0].Question
	}
	form := mcp.NewAskForm(msg, qs)
	a, err := st.elicit(ctx, req.ToolCallID, question{Question: form.Question})
	if err != nil {
		return confirm.Answer{}, err
	}
	if a.Action != mcp.ActionAccept {
		st.c.log.Info("ask_user's questions not answered", "session", st.id, "action", a.Action)
		return confirm.Answer{Outcome: confirm.Cancel}, nil
	}
	answers, err := form.Answers(a.Values)
	if err != nil {
		return confirm.Answer{}, fmt.Errorf("the ACP client's answer does not fit the questions: %w", err)
	}
	return confirm.Answer{Outcome: confirm.ProceedOnce, Answers: answers}, nil
}

// hostElicitor is the elicitor of a workspace's host, whose MCP servers serve all its
// sessions: a server's question goes to the session it asks for (elicitFor).
type hostElicitor struct{ wh *workspaceHost }

// Elicit implements mcp.Elicitor.
func (e hostElicitor) Elicit(ctx context.Context, q *mcp.Question) (*mcp.Answer, error) {
	st := e.wh.elicitFor(ctx, q.Server)
	if st == nil {
		return nil, fmt.Errorf("MCP server %s asks a question while several sessions of the workspace run its tools, or none is open: it cannot be told whom to ask", q.Server)
	}
	return st.Elicit(ctx, q)
}

// elicitFor returns the session an MCP server's question is for: that of the call
// asking, when ctx tells it; else the one session running a tool of the server, or
// the workspace's one session; else nil.
func (wh *workspaceHost) elicitFor(ctx context.Context, server string) *sessionState {
	if st := wh.c.stateOf(ctx); st != nil && st.wh == wh {
		return st
	}
	wh.c.mu.Lock()
	var all []*sessionState
	for _, st := range wh.c.sessions {
		if st.wh == wh {
			all = append(all, st)
		}
	}
	wh.c.mu.Unlock()
	var running []*sessionState
	for _, st := range all {
		if st.mcpCall(server) != "" {
			running = append(running, st)
		}
	}
	switch {
	case len(running) == 1:
		return running[0]
	case len(running) == 0 && len(all) == 1:
		return all[0]
	}
	return nil
}

// Elicit implements mcp.Elicitor: an MCP server's form, put to the user with
// elicitation/create, tied to the server's tool call that runs in the session if there
// is exactly one. The MCP manager checks the values and applies the defaults.
func (st *sessionState) Elicit(ctx context.Context, q *mcp.Question) (*mcp.Answer, error) {
	form := *q
	form.Message = fmt.Sprintf("MCP server %s asks: %s", q.Server, q.Message)
	return st.elicit(ctx, st.mcpCall(q.Server), question{Question: form})
}

// ElicitURL asks the user to open an MCP server's URL with elicitation/create in URL
// mode, tied to the server's tool call as Elicit ties a form.
func (st *sessionState) ElicitURL(ctx context.Context, q *mcp.URLQuestion) (string, error) {
	a, err := st.elicit(ctx, st.mcpCall(q.Server), question{
		Question: mcp.Question{Server: q.Server, Message: fmt.Sprintf("MCP server %s asks you to open a link: %s", q.Server, q.Message)},
		url:      q})
	if err != nil {
		return "", err
	}
	return a.Action, nil
}

// urlClient reports whether the client takes URL-mode elicitation/create.
func urlClient(caps sdk.ClientCapabilities) bool {
	return caps.Elicitation != nil && caps.Elicitation.Url != nil
}

// hostURLElicitor is the elicitor of a workspace's host for a client that takes URL
// questions: a server's URL question goes to the session it asks for, as its forms do
// (forms only to a client that takes those too).
type hostURLElicitor struct {
	hostElicitor
	// forms says that the client takes forms too.
	forms bool
}

// Elicit implements mcp.Elicitor.
func (e hostURLElicitor) Elicit(ctx context.Context, q *mcp.Question) (*mcp.Answer, error) {
	if !e.forms {
		return nil, errors.New("the ACP client takes no forms")
	}
	return e.hostElicitor.Elicit(ctx, q)
}

// ElicitURL implements mcp.URLElicitor.
func (e hostURLElicitor) ElicitURL(ctx context.Context, q *mcp.URLQuestion) (string, error) {
	st := e.wh.elicitFor(ctx, q.Server)
	if st == nil {
		return "", fmt.Errorf("MCP server %s asks to open a link while several sessions of the workspace run its tools, or none is open: it cannot be told whom to ask", q.Server)
	}
	return st.ElicitURL(ctx, q)
}

// ElicitationComplete implements mcp.URLElicitor: the client hears that the URL
// question id is complete (elicitation/complete).
func (e hostURLElicitor) ElicitationComplete(server, id string) {
	err := e.wh.c.sdk.UnstableCompleteElicitation(context.Background(), sdk.UnstableCompleteElicitationNotification{
		ElicitationId: sdk.UnstableElicitationId(id)})
	e.wh.c.log.Info("elicitation/complete", "server", server, "elicitation", id, "error", err)
}

// question is a form, or with url a URL to open.
type question struct {
	mcp.Question
	url *mcp.URLQuestion
}

// elicit puts the form or URL q to the user, tied to the tool call callID (none when empty),
// and returns their answer: the values of an accepted form as the client sent them,
// or a decline or cancel. session/cancel and the session's end cancel it (the SDK then
// sends $/cancel_request).
func (st *sessionState) elicit(ctx context.Context, callID string, q question) (*mcp.Answer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.mu.Lock()
	st.elicitSeq++
	key := st.elicitSeq
	st.elicits[key] = cancel
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.elicits, key)
		st.mu.Unlock()
	}()

	scope := map[string]any{"sessionId": st.id}
	if callID != "" {
		scope["toolCallId"] = callID
	}
	var req sdk.UnstableCreateElicitationRequest
	if u := q.url; u != nil {
		req.Url = &sdk.UnstableCreateElicitationUrl{ElicitationId: sdk.UnstableElicitationId(u.ElicitationID), Mode: "url",
			Message: q.Message, Url: u.URL, Meta: map[string]any{scopeMeta: scope}}
		st.c.log.Info("elicitation/create", "session", st.id, "toolCall", callID, "mode", "url")
	} else {
		req.Form = &sdk.UnstableCreateElicitationForm{
			Message:         q.Message,
			RequestedSchema: formSchema(&q.Question),
			Meta:            map[string]any{scopeMeta: scope},
		}
		st.c.log.Info("elicitation/create", "session", st.id, "toolCall", callID, "fields", len(q.Fields))
	}
	resp, err := st.c.sdk.UnstableCreateElicitation(ctx, req)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the question was withdrawn: %w", context.Cause(ctx))
	case err != nil:
		return nil, fmt.Errorf("elicitation/create: %w", err)
	case resp.Accept != nil && resp.Accept.Action != mcp.ActionAccept:
		// The SDK takes an answer whose action it does not know for an accept.
		return nil, fmt.Errorf("elicitation/create: the client answered with action %q; want accept, decline or cancel", resp.Accept.Action)
	case resp.Accept != nil:
		return &mcp.Answer{Action: mcp.ActionAccept, Values: resp.Accept.Content}, nil
	case resp.Decline != nil:
		return &mcp.Answer{Action: mcp.ActionDecline}, nil
	case resp.Cancel != nil:
		return &mcp.Answer{Action: mcp.ActionCancel}, nil
	}
	return nil, errors.New("elicitation/create: the client's answer has no action (want accept, decline or cancel)")
}

// cancelElicits withdraws the session's open questions.
func (st *sessionState) cancelElicits() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, cancel := range st.elicits {
		cancel()
	}
	return len(st.elicits)
}

// mcpCall returns the id of the one call of an MCP tool of server that runs in the
// session, or "" when none or several do: a server's question cannot say which of its
// calls asks.
func (st *sessionState) mcpCall(server string) string {
	reg := st.host.Toolbox().Config().Registry
	st.mu.Lock()
	defer st.mu.Unlock()
	var found string
	for id, v := range st.calls {
		if !v.executing {
			continue
		}
		t, ok := reg.Get(v.name)
		if !ok || t.Info().Source != tools.SourceMCP || t.Info().Server != server {
			continue
		}
		if found != "" {
			return ""
		}
		found = id
	}
	return found
}

// formSchema is q's form as ACP's elicitation schema: each field a property of its
// type, with its title, description and default (SEP-1034); a field of choices a
// string with oneOf (each choice's const and title), or an array whose items have
// anyOf (SEP-1330).
func formSchema(q *mcp.Question) sdk.UnstableElicitationSchema {
	s := sdk.UnstableElicitationSchema{Type: sdk.UnstableElicitationSchemaTypeObject, Properties: map[string]any{}}
	for _, f := range q.Fields {
		p := map[string]any{"type": f.Type}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if len(f.Choices) > 0 {
			opts := make([]map[string]string, len(f.Choices))
			for i, c := range f.Choices {
				title := c
				if i < len(f.Labels) && f.Labels[i] != "" {
					title = f.Labels[i]
				}
				opts[i] = map[string]string{"const": c, "title": title}
			}
			if f.Type == "array" {
				p["items"] = map[string]any{"anyOf": opts}
			} else {
				p["type"], p["oneOf"] = "string", opts
			}
		}
		switch f.Type {
		case "string", "number", "integer", "boolean", "array":
		default:
			// Not a type of the form: asked as text.
			p["type"] = "string"
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
		s.Properties[f.Name] = p
	}
	return s
}

// scopeMeta is the _meta key that carries an elicitation/create request's scope
// (sessionId, toolCallId) to the line writer, which moves it to the params
// (liftScope): the SDK's request type (acp-go-sdk v0.13.0) has no fields for them,
// which the schema requires.
const scopeMeta = "agentls/elicitationScope"

// fieldsMeta is the _meta key under which agentls puts fields the Go SDK's types lack
// (the schema's newer ones: sessionCapabilities.delete, …); liftFields moves them into
// the object whose _meta holds them.
const fieldsMeta = "agentls/fields"

// liftFields returns line, a JSON-RPC message, with the fields under
// _meta[fieldsMeta] of each of its objects moved into that object; other lines are
// returned as they are.
func liftFields(line []byte) []byte {
	if !bytes.Contains(line, []byte(fieldsMeta)) {
		return line
	}
	var msg any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if d.Decode(&msg) != nil {
		return line
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if meta, ok := v["_meta"].(map[string]any); ok {
				if fields, ok := meta[fieldsMeta].(map[string]any); ok {
					for k, f := range fields {
						v[k] = f
					}
					delete(meta, fieldsMeta)
					if len(meta) == 0 {
						delete(v, "_meta")
					}
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(msg)
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	if bytes.HasSuffix(line, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// liftScope returns line, a JSON-RPC message, with an elicitation/create request's
// scope moved from _meta[scopeMeta] to its params; other lines are returned as they
// are.
func liftScope(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"elicitation/create"`)) || !bytes.Contains(line, []byte(scopeMeta)) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil || string(msg["method"]) != strconv.Quote("elicitation/create") {
		return line
	}
	var params, meta, scope map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["_meta"], &meta) != nil ||
		json.Unmarshal(meta[scopeMeta], &scope) != nil {
		return line
	}
	for k, v := range scope {
		params[k] = v
	}
	delete(meta, scopeMeta)
	if len(meta) == 0 {
		delete(params, "_meta")
	} else {
		params["_meta"], _ = json.Marshal(meta)
	}
	var err error
	if msg["params"], err = json.Marshal(params); err != nil {
		return line
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	if strings.HasSuffix(string(line), "\n") {
		out = append(out, '\n')
	}
	return out
}

// authorize is the mcp.AuthorizeFunc of a workspace's host: an MCP server's
// authorization page (a step-up: a 403 insufficient_scope in the middle of a session,
// after the user authorized the server) goes to the session the server's call runs in. A client that takes
// URL questions is asked to open it (elicitation/create in URL mode, like a server's
// own link; declining ends the authorization); to any other the page is told as a line
// of the agent's message. The redirect comes back to the MCP manager's loopback
// listener either way.
func (wh *workspaceHost) authorize(urls bool) mcp.AuthorizeFunc {
	return func(ctx context.Context, server, authURL string) error {
		st := wh.elicitFor(ctx, server)
		if st == nil {
			return fmt.Errorf("MCP server %s needs authorization while several sessions of the workspace run its tools, or none is open: run `agentls mcp auth %s`", server, server)
		}
		const msg = "asks for a wider authorization: open the page to grant agentls the access it needs"
		if !urls {
			st.c.log.Info("MCP authorization page told as a message", "session", st.id, "server", server)
			st.c.notify(st.id, sdk.UpdateAgentMessageText(fmt.Sprintf("\n\nMCP server %s %s: %s\n\n", server, msg, authURL)))
			return nil
		}
		wh.c.mu.Lock()
		wh.c.oauthSeq++
		id := fmt.Sprintf("agentls-oauth-%s-%d", server, wh.c.oauthSeq)
		wh.c.mu.Unlock()
		a, err := st.elicit(ctx, st.mcpCall(server), question{
			Question: mcp.Question{Server: server, Message: fmt.Sprintf("MCP server %s %s", server, msg)},
			url:      &mcp.URLQuestion{Server: server, URL: authURL, ElicitationID: id}})
		if err != nil {
			return err
		}
		if a.Action != mcp.ActionAccept {
			return fmt.Errorf("the authorization page of MCP server %s was not opened (%s)", server, a.Action)
		}
		return nil
	}
}
