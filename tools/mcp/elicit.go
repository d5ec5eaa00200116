package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/agentls/agentls/tools"

	"github.com/agentls/agentls/tools/web/redact"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Question is a server's elicitation/create in form mode, as a front end asks it: a
// message and the fields of a flat form.
type Question struct {
	// Server names the MCP server that asks.
	Server  string  `json:"server"`
	Message string  `json:"message"`
	Fields  []Field `json:"fields"`
}

// Field is one field of a Question.
type Field struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "string", "number", "integer", "boolean", or "array" (a multiple choice
	// of Choices).
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Choices are the values a string field (or each item of an array field) may
	// take, from enum or oneOf/anyOf consts (SEP-1330); Labels, when set, has their
	// titles in the same order.
	Choices []string `json:"choices,omitempty"`
	Labels  []string `json:"labels,omitempty"`
	// Default is the schema's default (SEP-1034), to be offered and used when the
	// person gives no value.
	Default any `json:"default,omitempty"`
}

// The actions of an Answer, as the protocol names them.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Answer is the person's answer to a Question.
type Answer struct {
	Action string `json:"action"`
	// Values are the fields' values when Action is ActionAccept; a field left out
	// gets its default.
	Values map[string]any `json:"values,omitempty"`
}

// Elicitor asks a person a Question. Each front end has one: the editor server asks
// the editor, the terminal prompts. It returns an error only when it could not ask;
// a person's refusal is an Answer.
type Elicitor interface {
	Elicit(ctx context.Context, q *Question) (*Answer, error)
}

// URLQuestion is a server's elicitation/create in URL mode: the person is asked to
// open URL (in a browser, out of band) for what Message says.
type URLQuestion struct {
	// Server names the MCP server that asks.
	Server        string `json:"server"`
	Message       string `json:"message"`
	URL           string `json:"url"`
	ElicitationID string `json:"elicitationId"`
}

// URLElicitor is an Elicitor that can also ask a person to open a URL. A manager
// whose Elicitor is one declares URL mode to its servers; otherwise their URL
// questions are declined.
type URLElicitor interface {
	Elicitor
	// ElicitURL asks the person to open q.URL and returns their answer's action
	// (ActionAccept: they agreed to open it; ActionDecline; ActionCancel).
	ElicitURL(ctx context.Context, q *URLQuestion) (string, error)
	// ElicitationComplete tells the person that the server says the URL
	// elicitation id of server is complete.
	ElicitationComplete(server, id string)
}

// elicitSchema is the part of an elicitation's requested schema agentls reads.
type elicitSchema struct {
	Properties map[string]struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
		EnumNames   []string `json:"enumNames"`
		OneOf       []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
		AnyOf []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"anyOf"`
		Items *struct {
			Enum  []string `json:"enum"`
			AnyOf []struct {
				Const string `json:"const"`
				Title string `json:"title"`
			} `json:"anyOf"`
		} `json:"items"`
		Default any `json:"default"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// questionOf turns a form elicitation into a Question, fields sorted by name.
func questionOf(server string, p *sdk.ElicitParams) (*Question, error) {
	q := &Question{Server: server, Message: p.Message}
	if p.RequestedSchema == nil {
		return q, nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("the requested schema: %w", err)
	}
	var s elicitSchema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the requested schema: %w", err)
	}
	for _, name := range sortedKeys(s.Properties) {
		ps := s.Properties[name]
		f := Field{Name: name, Title: ps.Title, Description: ps.Description, Type: ps.Type,
			Required: slices.Contains(s.Required, name), Default: ps.Default}
		f.Choices, f.Labels = ps.Enum, ps.EnumNames
		for _, o := range append(ps.OneOf, ps.AnyOf...) {
			f.Choices = append(f.Choices, o.Const)
			f.Labels = append(f.Labels, o.Title)
		}
		if ps.Items != nil {
			f.Choices = append(f.Choices, ps.Items.Enum...)
			for _, o := range ps.Items.AnyOf {
				f.Choices = append(f.Choices, o.Const)
				f.Labels = append(f.Labels, o.Title)
			}
		}
		if len(f.Labels) != len(f.Choices) {
			f.Labels = nil
		}
		q.Fields = append(q.Fields, f)
	}
	return q, nil
}

// withDefaults returns values with each field the person left out set to its default.
func withDefaults(q *Question, values map[string]any) map[string]any {
	out := make(map[string]any, len(q.Fields))
	for k, v := range values {
		out[k] = v
	}
	for _, f := range q.Fields {
		if _, ok := out[f.Name]; !ok && f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

// elicit answers a server's elicitation/create through Options.Elicit: declined when
// nobody can be asked, or when it is not a form (URL mode is not offered); an answer
// whose values do not fit the form is an error to the server, saying why.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	asker := s.m.opts.Elicit
	log := s.m.logger.With("server", s.name)
	if asker == nil {
		log.Info("MCP server's question declined: nobody to ask", "message", req.Params.Message)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	if req.Params.Mode == "url" {
		return s.elicitURL(ctx, req.Params)
	}
	if req.Params.Mode != "" && req.Params.Mode != "form" {
		log.Info("MCP server's question declined: only forms and URLs are supported", "mode", req.Params.Mode)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	q, err := questionOf(s.name, req.Params)
	if err != nil {
		return nil, err
	}
	a, err := asker.Elicit(ctx, q)
	if err != nil {
		log.Info("MCP server's question declined: it could not be asked", "err", err)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	switch a.Action {
	case ActionAccept:
		values, err := q.Check(a.Values)
		if err != nil {
			// The server hears why, and so, through its tool's result, does the model.
			log.Warn("MCP server's question: the answer does not fit its form", "err", err)
			return nil, fmt.Errorf("the answer to the question does not fit its form: %w", err)
		}
		return &sdk.ElicitResult{Action: ActionAccept, Content: withDefaults(q, values)}, nil
	case ActionCancel:
		return &sdk.ElicitResult{Action: ActionCancel}, nil
	default:
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
}

// elicitURL answers a server's URL-mode elicitation through Options.Elicit when it is
// a URLElicitor: declined otherwise, and for a URL that is not http or https (a
// person is not sent to a file:, javascript: or custom-scheme link).
func (s *server) elicitURL(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	log := s.m.logger.With("server", s.name)
	asker, ok := s.m.opts.Elicit.(URLElicitor)
	if !ok {
		log.Info("MCP server's URL question declined: nobody can be sent to a URL", "message", p.Message)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	if !httpURL(p.URL) {
		log.Warn("MCP server's URL question declined: not an http(s) URL", "url", redact.Text(p.URL))
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	action, err := asker.ElicitURL(ctx, &URLQuestion{Server: s.name, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID})
	if err != nil {
		log.Info("MCP server's URL question declined: it could not be asked", "err", err)
		return &sdk.ElicitResult{Action: ActionDecline}, nil
	}
	switch action {
	case ActionAccept, ActionCancel:
		return &sdk.ElicitResult{Action: action}, nil
	}
	return &sdk.ElicitResult{Action: ActionDecline}, nil
}

// elicitationComplete ends the wait of a call refused until a link was opened
// (urlRequired) and passes a server's notifications/elicitation/complete on to a
// URLElicitor.
func (s *server) elicitationComplete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if req.Params == nil {
		return
	}
	s.mu.Lock()
	if ch, ok := s.completions[req.Params.ElicitationID]; ok {
		close(ch)
		delete(s.completions, req.Params.ElicitationID)
	}
	s.mu.Unlock()
	if e, ok := s.m.opts.Elicit.(URLElicitor); ok {
		e.ElicitationComplete(s.name, req.Params.ElicitationID)
	}
}

// elicitationCapabilities are the elicitation modes the manager's servers are told it
// takes: forms, and URLs when its Elicitor is a URLElicitor.
func (m *Manager) elicitationCapabilities() *sdk.ElicitationCapabilities {
	c := &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}
	if _, ok := m.opts.Elicit.(URLElicitor); ok {
		c.URL = &sdk.URLElicitationCapabilities{}
	}
	return c
}

// maxURLRequiredRetries bounds the retries of a call refused with
// URLElicitationRequired: a server that keeps refusing after its links were opened is
// not asked again and again.
const maxURLRequiredRetries = 2

// urlRequired handles a call of tool refused with URLElicitationRequired (-32042): the
// person is asked to open each link the error names, and once the server says each is
// complete (notifications/elicitation/complete) or the person says they are done, it
// returns nil and the caller retries the call. Otherwise it returns the error the model
// is told: nobody can be sent to a link, a link that is not http(s), the person
// declined, or the wait ended.
func (s *server) urlRequired(ctx context.Context, tool string, rpcErr *jsonrpc.Error) error {
	log := s.m.logger.With("server", s.name, "tool", tool)
	var data struct {
		Elicitations []*sdk.ElicitParams `json:"elicitations"`
	}
	if len(rpcErr.Data) > 0 {
		if err := json.Unmarshal(rpcErr.Data, &data); err != nil {
			return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q refused the call of %s until a link is opened, but its error's data cannot be read: %v", s.name, tool, err)
		}
	}
	if len(data.Elicitations) == 0 {
		return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q refused the call of %s until a link is opened, but named no link", s.name, tool)
	}
	for _, e := range data.Elicitations {
		if e.Mode != "url" {
			return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q refused the call of %s until a link is opened, but one of its questions is a %q, not a link", s.name, tool, cmp.Or(e.Mode, "form"))
		}
		if !httpURL(e.URL) {
			log.Warn("MCP server's URL requirement refused: not an http(s) URL", "url", redact.Text(e.URL))
			return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q refused the call of %s until a link is opened, and the link is not an http or https URL; nobody is sent to it", s.name, tool)
		}
	}
	asker, ok := s.m.opts.Elicit.(URLElicitor)
	if !ok {
		return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q needs the person to open a link in a browser before %s can run (%s), and this front end cannot show links (an ACP client that takes URL questions can)",
			s.name, tool, redact.Text(data.Elicitations[0].Message))
	}

	// Waiters are in place before anyone is asked: a server may say "complete" as
	// soon as the link is opened.
	done := make([]chan struct{}, len(data.Elicitations))
	for i, e := range data.Elicitations {
		done[i] = s.awaitCompletion(e.ElicitationID)
	}
	defer func() {
		for _, e := range data.Elicitations {
			s.forgetCompletion(e.ElicitationID)
		}
	}()
	for _, e := range data.Elicitations {
		action, err := asker.ElicitURL(ctx, &URLQuestion{Server: s.name, Message: e.Message, URL: e.URL, ElicitationID: e.ElicitationID})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q needs the person to open a link before %s can run, and they could not be asked: %v", s.name, tool, err)
		}
		if action != ActionAccept {
			log.Info("MCP server's URL requirement not met: the person did not open the link", "action", action)
			return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q needs the person to open a link before %s can run (%s); they chose not to (%s)",
				s.name, tool, redact.Text(e.Message), action)
		}
	}

	// The person may finish before the server says so, or the server may never
	// say so: they are asked too, and whichever answers first ends the wait.
	all := make(chan struct{})
	go func() {
		for _, d := range done {
			<-d
		}
		close(all)
	}()
	qctx, cancel := context.WithCancel(ctx)
	asked := make(chan struct{})
	defer func() {
		// The question is withdrawn before the call runs again.
		cancel()
		<-asked
	}()
	answered := make(chan *Answer, 1)
	go func() {
		defer close(asked)
		a, err := asker.Elicit(qctx, &Question{Server: s.name,
			Message: fmt.Sprintf("When you have finished on the page you opened, accept to run %s again.", tool)})
		if err != nil {
			if qctx.Err() == nil {
				log.Info("MCP server's URL requirement: the person cannot be asked whether they are done; waiting for the server", "err", err)
			}
			return
		}
		answered <- a
	}()
	timeout := s.cfg.RequestTimeout()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-all:
		log.Info("MCP server says the links were opened; the call is run again")
		return nil
	case a := <-answered:
		if a.Action == ActionAccept {
			log.Info("the person says they are done with the links; the call is run again")
			return nil
		}
		return tools.Errorf(tools.ErrExecutionFailed, "MCP server %q needs the person to finish on a page before %s can run; they chose not to run it again (%s)", s.name, tool, a.Action)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return tools.Errorf(tools.ErrTimeout, "MCP server %q did not say within %s that the person finished on the page it needs before %s can run; call it again once they have", s.name, timeout, tool)
	}
}

// httpURL reports whether raw is an http or https URL with a host: the only links a
// person is sent to (not file:, javascript: or a custom scheme).
func httpURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// awaitCompletion returns a channel closed when the server says that URL elicitation
// id is complete.
func (s *server) awaitCompletion(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completions == nil {
		s.completions = map[string]chan struct{}{}
	}
	ch, ok := s.completions[id]
	if !ok {
		ch = make(chan struct{})
		s.completions[id] = ch
	}
	return ch
}

// forgetCompletion stops waiting for id.
func (s *server) forgetCompletion(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.completions, id)
}
