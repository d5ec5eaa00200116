package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/web/redact"
)

// Tool is one tool of an MCP server, as agentls registers it.
type Tool struct {
	srv  *server
	raw  string // the server's name for the tool
	info tools.Info
	// claimsReadOnly is the tool's readOnlyHint: what the server says, which people
	// are shown and plan mode does not go by.
	claimsReadOnly bool
}

var _ tools.Tool = (*Tool)(nil)

// newTool makes the registered form of t, called name.
func (s *server) newTool(t *sdk.Tool, name string) *Tool {
	params, notes := inputSchema(t.InputSchema)
	if len(notes) > 0 {
		s.m.logger.Warn("MCP tool's input schema was adapted for validation",
			"server", s.name, "tool", t.Name, "changes", strings.Join(notes, "; "))
	}
	// Plan mode runs the tools whose kind is read-only. A server's readOnlyHint is no
	// ground for that (a tool may say so and write), so only the user's readOnly
	// setting for the server makes its tools reads.
	kind := tools.KindOther
	if s.cfg.ReadOnly {
		kind = tools.KindRead
	}
	idempotent, claimsReadOnly := false, false
	if a := t.Annotations; a != nil {
		idempotent, claimsReadOnly = a.IdempotentHint, a.ReadOnlyHint
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &Tool{srv: s, raw: t.Name, claimsReadOnly: claimsReadOnly, info: tools.Info{
		Name:        name,
		DisplayName: t.Name + " (" + s.name + ")",
		Description: desc,
		Kind:        kind,
		Source:      tools.SourceMCP,
		Server:      s.name,
		Parameters:  params,
		Streams:     true,
		Idempotent:  idempotent,
	}}
}

// Info describes the tool.
func (t *Tool) Info() tools.Info { return t.info }

// ServerTool returns the server's name for the tool, which Info().Name may have
// sanitised.
func (t *Tool) ServerTool() string { return t.raw }

// Build returns a call of the tool with args, a JSON object.
func (t *Tool) Build(args json.RawMessage) (tools.Invocation, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, tools.Errorf(tools.ErrInvalidParams, "the arguments of %s must be a JSON object", t.info.Name)
	}
	return &invocation{tool: t, args: args}, nil
}

type invocation struct {
	tool *Tool
	args json.RawMessage
}

func (inv *invocation) Describe() string {
	return fmt.Sprintf("%s %s", inv.tool.info.DisplayName, tools.Abbreviate(string(inv.args), 200))
}

func (inv *invocation) Locations() []tools.Location { return nil }

// Confirmation asks about every call of a server without trust: true.
func (inv *invocation) Confirmation(context.Context) (*confirm.Details, error) {
	s := inv.tool.srv
	if s.cfg.Trust {
		return nil, nil
	}
	title := fmt.Sprintf("Run %s from MCP server %s", inv.tool.raw, s.name)
	if inv.tool.claimsReadOnly && !s.cfg.ReadOnly {
		title += " (the server says it only reads)"
	}
	return &confirm.Details{
		Type:      confirm.TypeMCP,
		Title:     title,
		Server:    s.name,
		Tool:      inv.tool.raw,
		Arguments: inv.args,
	}, nil
}

// Execute calls the tool on its server, reconnecting first if needed; progress
// notifications are written to out as they arrive, one line each.
func (inv *invocation) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	t := inv.tool
	s := t.srv
	c, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err,
			Message: fmt.Sprintf("%s cannot run: %v", t.info.DisplayName, err)}
	}
	timeout := s.cfg.RequestTimeout()

	token := s.name + "/" + strconv.FormatInt(s.tokens.Add(1), 10)
	sink := &progressSink{out: out}
	s.mu.Lock()
	s.calls[token] = sink
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, token)
		s.mu.Unlock()
	}()

	params := &sdk.CallToolParams{Name: t.raw, Arguments: inv.args}
	params.SetProgressToken(token)
	// Each attempt has the whole timeout: the time a person takes between two is not
	// the server's.
	timedOut := false
	call := func() (*sdk.CallToolResult, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := c.sess.CallTool(cctx, params)
		timedOut = errors.Is(cctx.Err(), context.DeadlineExceeded)
		return res, err
	}
	res, err := call()
	var rpcErr *jsonrpc.Error
	// A server may refuse a call until the person has opened a link (-32042); the
	// call runs again once they have.
	for retries := 0; err != nil && retries < maxURLRequiredRetries && ctx.Err() == nil &&
		errors.As(err, &rpcErr) && rpcErr.Code == sdk.CodeURLElicitationRequired; retries++ {
		if uerr := s.urlRequired(ctx, t.raw, rpcErr); uerr != nil {
			sink.drain()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, uerr
		}
		res, err = call()
	}
	sink.drain()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case timedOut:
			return nil, tools.Errorf(tools.ErrTimeout, "MCP server %q did not answer the call of %s within %s (the timeout setting); the call was cancelled",
				s.name, t.raw, timeout)
		case errors.As(err, &rpcErr):
			return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err,
				Message: fmt.Sprintf("MCP server %q refused the call of %s: %s", s.name, t.raw, redact.Text(rpcErr.Message))}
		}
		reason := s.failed(c, err)
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err,
			Message: fmt.Sprintf("MCP server %q failed during the call of %s: %s. The next call will try to reconnect.", s.name, t.raw, reason)}
	}
	r, text := convertResult(res.Content, res.StructuredContent)
	if res.IsError {
		if text == "" {
			text = "(no message)"
		}
		return nil, tools.Errorf(tools.ErrExecutionFailed, "MCP tool %s of server %q reported an error:\n%s", t.raw, s.name, tools.MarkUntrusted(text))
	}
	r.Summary = fmt.Sprintf("%s: %s", t.info.DisplayName, summarize(r))
	// The scheduler marks the output as untrusted context (tools.MarkUntrusted), as
	// it does for every MCP tool.
	return r, nil
}

// convertResult turns MCP content into a tool result: text (of text content and of
// embedded text resources) becomes Output, images, audio and embedded blobs become
// Parts (each also named by a line of Output, so the model knows of it), resource links
// a line naming them. Structured content is the output when there is no other. It also
// returns the text alone, for error messages.
func convertResult(content []sdk.Content, structured any) (*tools.Result, string) {
	r := &tools.Result{}
	var lines, texts []string
	binary := func(kind, mime string, data []byte) {
		if mime == "" {
			mime = "application/octet-stream"
		}
		r.Parts = append(r.Parts, tools.Part{MIMEType: mime, Data: data})
		lines = append(lines, fmt.Sprintf("[%s %s, %d bytes, attached]", mime, kind, len(data)))
	}
	for _, c := range content {
		switch c := c.(type) {
		case *sdk.TextContent:
			lines = append(lines, c.Text)
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			binary("image", c.MIMEType, c.Data)
		case *sdk.AudioContent:
			binary("audio", c.MIMEType, c.Data)
		case *sdk.EmbeddedResource:
			res := c.Resource
			if res == nil {
				continue
			}
			if res.Blob != nil {
				binary("resource "+res.URI, res.MIMEType, res.Blob)
			} else {
				lines = append(lines, res.Text)
				texts = append(texts, res.Text)
			}
		case *sdk.ResourceLink:
			lines = append(lines, describeLink(c))
		default:
			if b, err := json.Marshal(c); err == nil {
				lines = append(lines, string(b))
			}
		}
	}
	if len(content) == 0 && structured != nil {
		if b, err := json.Marshal(structured); err == nil {
			lines = append(lines, string(b))
			texts = append(texts, string(b))
		}
	}
	r.Output = strings.Join(lines, "\n")
	return r, strings.Join(texts, "\n")
}

// describeLink names a resource link in one line.
func describeLink(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("Resource link: ")
	name := l.Title
	if name == "" {
		name = l.Name
	}
	if name != "" {
		b.WriteString(name + " ")
	}
	b.WriteString("<" + l.URI + ">")
	if l.MIMEType != "" {
		b.WriteString(" (" + l.MIMEType + ")")
	}
	if l.Description != "" {
		b.WriteString(": " + l.Description)
	}
	return b.String()
}

// summarize says in a few words what a result holds.
func summarize(r *tools.Result) string {
	first, _, _ := strings.Cut(strings.TrimSpace(r.Output), "\n")
	switch {
	case first == "" && len(r.Parts) == 0:
		return "no output"
	case first == "":
		return fmt.Sprintf("%d attachments", len(r.Parts))
	}
	return tools.Abbreviate(first, 100)
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*invocation) Capabilities() tools.Capabilities { return tools.Capabilities{} }

// Capabilities implements tools.Invocation for list_resources: it runs no command and
// takes no modified version.
func (*listResourcesCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }

// Capabilities implements tools.Invocation for read_resource: it runs no command and
// takes no modified version.
func (*readResourceCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }
