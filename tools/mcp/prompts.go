package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/tools/web/redact"
)

// PromptInfo describes a prompt of a server.
type PromptInfo struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompts lists the prompts of every connected server that offers prompts, by server
// and then in the server's order. A server that fails to list them is left out, and
// its error is returned alongside the others' prompts.
func (m *Manager) Prompts(ctx context.Context) ([]PromptInfo, error) {
	var (
		out  []PromptInfo
		errs []error
	)
	for _, name := range m.order {
		s := m.servers[name]
		s.mu.Lock()
		c, ok := s.conn, s.prompts
		s.mu.Unlock()
		if c == nil || !ok {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
		for p, err := range c.sess.Prompts(rctx, nil) {
			if err != nil {
				errs = append(errs, fmt.Errorf("listing the prompts of MCP server %q: %w", name, redact.Error(err)))
				break
			}
			info := PromptInfo{Server: name, Name: p.Name, Description: p.Description}
			for _, a := range p.Arguments {
				if a == nil {
					continue
				}
				info.Arguments = append(info.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, info)
		}
		cancel()
	}
	return out, errors.Join(errs...)
}

// GetPrompt renders the prompt of the server with args as text: the text of each of
// its messages, separated by blank lines, with embedded text resources inlined and
// other content named in brackets.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	s, err := m.server(server)
	if err != nil {
		return "", err
	}
	c, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	res, err := c.sess.GetPrompt(rctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("getting prompt %q of MCP server %q: %w", name, server, redact.Error(err))
	}
	var parts []string
	for _, msg := range res.Messages {
		if msg == nil || msg.Content == nil {
			continue
		}
		r, _ := convertResult([]sdk.Content{msg.Content}, nil)
		if text := strings.TrimSpace(r.Output); text != "" {
			parts = append(parts, r.Output)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
