package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/web/redact"
)

// listResourcesArgsSchema is the parameter schema of listResourcesArgs, generated once, when first asked for.
var listResourcesArgsSchema = tools.ParametersOnce[listResourcesArgs](false)

// readResourceArgsSchema is the parameter schema of readResourceArgs, generated once, when first asked for.
var readResourceArgsSchema = tools.ParametersOnce[readResourceArgs](false)

// The names of the resource tools.
const (
	ListResourcesName = "list_mcp_resources"
	ReadResourceName  = "read_mcp_resource"
)

// listResourcesTool lists the resources of the connected servers.
type listResourcesTool struct{ m *Manager }

func (t *listResourcesTool) Info() tools.Info {
	return tools.Info{
		Name:        ListResourcesName,
		DisplayName: "List MCP resources",
		Description: "Lists the resources (and resource templates) that the connected MCP servers offer, " +
			"with their URIs, names and MIME types. Read one with " + ReadResourceName + ".",
		Kind:       tools.KindRead,
		Source:     tools.SourceMCP,
		Parameters: listResourcesArgsSchema(),
		Idempotent: true,
	}
}

// listResourcesArgs are list_mcp_resources's parameters.
type listResourcesArgs struct {
	Server string `json:"server,omitempty" jsonschema:"Only list the resources of this MCP server."`
}

func (t *listResourcesTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p listResourcesArgs
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	if p.Server != "" {
		if _, err := t.m.server(p.Server); err != nil {
			return nil, err
		}
	}
	return &listResourcesCall{m: t.m, server: p.Server}, nil
}

type listResourcesCall struct {
	m      *Manager
	server string
}

func (c *listResourcesCall) Describe() string {
	if c.server == "" {
		return "List the resources of all MCP servers"
	}
	return "List the resources of MCP server " + c.server
}

func (c *listResourcesCall) Locations() []tools.Location { return nil }

// Confirmation is nil: listing resources changes nothing.
func (c *listResourcesCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *listResourcesCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	names := c.m.order
	if c.server != "" {
		names = []string{c.server}
	}
	var (
		b      strings.Builder
		n      int
		failed []string
	)
	for _, name := range names {
		s := c.m.servers[name]
		s.mu.Lock()
		has := s.resources
		s.mu.Unlock()
		if !has {
			if c.server != "" {
				return nil, tools.Errorf(tools.ErrExecutionFailed, "MCP server %q offers no resources", name)
			}
			continue
		}
		conn, err := s.session(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failed = append(failed, err.Error())
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
		err = func() error {
			for r, err := range conn.sess.Resources(rctx, nil) {
				if err != nil {
					return err
				}
				n++
				writeResource(&b, name, r.URI, r.Name, r.MIMEType, r.Description)
			}
			for r, err := range conn.sess.ResourceTemplates(rctx, nil) {
				if err != nil {
					return err
				}
				n++
				writeResource(&b, name, "template "+r.URITemplate, r.Name, r.MIMEType, r.Description)
			}
			return nil
		}()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failed = append(failed, fmt.Sprintf("MCP server %q: %v", name, redact.Error(err)))
		}
	}
	if n == 0 && len(failed) > 0 {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "listing resources failed: %s", strings.Join(failed, "; "))
	}
	out := b.String()
	if n == 0 {
		out = "No MCP server offers resources.\n"
	}
	for _, f := range failed {
		out += "(not listed: " + f + ")\n"
	}
	return &tools.Result{Summary: fmt.Sprintf("%d resources", n), Output: strings.TrimSuffix(out, "\n")}, nil
}

// readResourceTool reads one resource of a server.
type readResourceTool struct{ m *Manager }

func (t *readResourceTool) Info() tools.Info {
	return tools.Info{
		Name:        ReadResourceName,
		DisplayName: "Read MCP resource",
		Description: "Reads a resource of an MCP server by its URI (see " + ListResourcesName + "). " +
			"Text comes back as text, binary content as an attachment.",
		Kind:       tools.KindRead,
		Source:     tools.SourceMCP,
		Parameters: readResourceArgsSchema(),
		Idempotent: true,
	}
}

// readResourceArgs are read_mcp_resource's parameters.
type readResourceArgs struct {
	Server string `json:"server" jsonschema:"The MCP server that offers the resource."`
	URI    string `json:"uri" jsonschema:"The resource's URI."`
}

func (t *readResourceTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p readResourceArgs
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.URI) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "uri must not be empty")
	}
	s, err := t.m.server(p.Server)
	if err != nil {
		return nil, err
	}
	return &readResourceCall{s: s, uri: p.URI}, nil
}

type readResourceCall struct {
	s   *server
	uri string
}

func (c *readResourceCall) Describe() string {
	return fmt.Sprintf("Read %s from MCP server %s", c.uri, c.s.name)
}

func (c *readResourceCall) Locations() []tools.Location { return nil }

// Confirmation is nil: reading a resource changes nothing.
func (c *readResourceCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *readResourceCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	conn, err := c.s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err, Message: err.Error()}
	}
	rctx, cancel := context.WithTimeout(ctx, c.s.cfg.RequestTimeout())
	defer cancel()
	res, err := conn.sess.ReadResource(rctx, &sdk.ReadResourceParams{URI: c.uri})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return nil, tools.Errorf(tools.ErrTimeout, "MCP server %q did not answer within %s", c.s.name, c.s.cfg.RequestTimeout())
		}
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err,
			Message: fmt.Sprintf("MCP server %q could not read %s: %v", c.s.name, redact.Text(c.uri), redact.Error(err))}
	}
	content := make([]sdk.Content, 0, len(res.Contents))
	for _, rc := range res.Contents {
		if rc != nil {
			content = append(content, &sdk.EmbeddedResource{Resource: rc})
		}
	}
	r, _ := convertResult(content, nil)
	r.Summary = fmt.Sprintf("%s: %s", c.uri, summarize(r))
	return r, nil
}

// writeResource writes the line of list_mcp_resources that names one resource (or
// template, whose where reads "template URI") of server.
func writeResource(b *strings.Builder, server, where, name, mime, desc string) {
	fmt.Fprintf(b, "%s: %s", server, where)
	if name != "" {
		fmt.Fprintf(b, " — %s", name)
	}
	if mime != "" {
		fmt.Fprintf(b, " (%s)", mime)
	}
	if desc != "" {
		fmt.Fprintf(b, ": %s", firstLine(desc))
	}
	b.WriteByte('\n')
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
