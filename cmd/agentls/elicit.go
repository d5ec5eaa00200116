package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentls/agentls/tools/mcp"
)

// Elicit implements mcp.Elicitor on the terminal: the server's message, then one prompt
// a field, its default in brackets (an empty line takes it) and its choices numbered.
// An answer that does not fit the field's type asks again, up to three times; "!" at any
// prompt declines the whole question.
func (a *terminalAsker) Elicit(ctx context.Context, q *mcp.Question) (*mcp.Answer, error) {
	a.once.Do(a.init)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case a.turn <- struct{}{}:
	}
	defer func() { <-a.turn }()

	fmt.Fprintf(a.out, "\nMCP server %s asks: %s\n", visible(q.Server), visible(q.Message))
	if len(q.Fields) == 0 {
		io.WriteString(a.out, "Accept? [y] yes  [n] no: ")
		s, err := a.readLine(ctx)
		if err != nil {
			return nil, err
		}
		if v := strings.ToLower(strings.TrimSpace(s)); v == "y" || v == "yes" {
			return &mcp.Answer{Action: mcp.ActionAccept}, nil
		}
		return &mcp.Answer{Action: mcp.ActionDecline}, nil
	}
	io.WriteString(a.out, "(an empty answer takes the default; ! declines)\n")
	values := map[string]any{}
	for _, f := range q.Fields {
		for try := 0; ; try++ {
			a.promptField(f)
			s, err := a.readLine(ctx)
			if err != nil {
				return nil, err
			}
			s = strings.TrimSpace(s)
			if s == "!" {
				return &mcp.Answer{Action: mcp.ActionDecline}, nil
			}
			if s == "" && (f.Default != nil || !f.Required) {
				break // the default, if any, is applied by the manager
			}
			v, err := parseField(f, s)
			if err == nil {
				values[f.Name] = v
				break
			}
			fmt.Fprintf(a.out, "  %v\n", err)
			if try == 2 {
				return &mcp.Answer{Action: mcp.ActionCancel}, nil
			}
		}
	}
	return &mcp.Answer{Action: mcp.ActionAccept, Values: values}, nil
}

// promptField prints the prompt of one field.
func (a *terminalAsker) promptField(f mcp.Field) {
	var b strings.Builder
	label := f.Name
	if f.Title != "" {
		label = f.Title
	}
	b.WriteString("  " + visible(label))
	if f.Description != "" {
		b.WriteString(" (" + visible(f.Description) + ")")
	}
	if len(f.Choices) > 0 {
		b.WriteString("\n")
		for i, c := range f.Choices {
			name := c
			if i < len(f.Labels) && f.Labels[i] != "" {
				name = f.Labels[i]
			}
			fmt.Fprintf(&b, "    [%d] %s\n", i+1, visible(name))
		}
		b.WriteString("  ")
		if f.Type == "array" {
			b.WriteString("numbers, separated by commas")
		} else {
			b.WriteString("number")
		}
	} else if f.Type == "boolean" {
		b.WriteString(" [y/n]")
	}
	if f.Default != nil {
		fmt.Fprintf(&b, " [%s]", visible(fmt.Sprint(f.Default)))
	}
	b.WriteString(": ")
	io.WriteString(a.out, b.String())
}

// parseField reads s as a value of the field f.
func parseField(f mcp.Field, s string) (any, error) {
	choice := func(s string) (string, error) {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 1 && n <= len(f.Choices) {
			return f.Choices[n-1], nil
		}
		return "", fmt.Errorf("want a number from 1 to %d", len(f.Choices))
	}
	switch {
	case f.Type == "array":
		var out []string
		for part := range strings.SplitSeq(s, ",") {
			c, err := choice(part)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	case len(f.Choices) > 0:
		return choice(s)
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("want y or n")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want a whole number")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number")
		}
		return n, nil
	}
	return s, nil
}
