package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/agentls/agentls/tools/web/redact"

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
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
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

// elicitationComplete passes a server's notifications/elicitation/complete on to a
// URLElicitor.
func (s *server) elicitationComplete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if e, ok := s.m.opts.Elicit.(URLElicitor); ok && req.Params != nil {
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
