package mcp

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentls/agentls/confirm"
)

// AskElicitor returns an Elicitor that puts a server's form through asker as ask_user
// questions (confirm.TypeAsk), the question interface every front end already answers:
// a field of choices becomes a choice question (several for an array field), a boolean
// one a yes/no question, the others free text; a field's default is offered in its
// placeholder and taken when the answer is empty.
func AskElicitor(asker confirm.Asker) Elicitor { return askElicitor{asker} }

type askElicitor struct{ asker confirm.Asker }

func (e askElicitor) Elicit(ctx context.Context, q *Question) (*Answer, error) {
	req := confirm.Request{ID: "elicit-" + rand.Text()[:12], ToolName: "mcp:" + q.Server,
		Details: confirm.Details{Type: confirm.TypeAsk, Title: fmt.Sprintf("MCP server %s asks: %s", q.Server, q.Message)}}
	if len(q.Fields) == 0 {
		req.Details.Questions = []confirm.Question{{Question: q.Message, Header: q.Server, Type: confirm.QuestionYesNo}}
	}
	for _, f := range q.Fields {
		cq := confirm.Question{Question: fieldQuestion(f), Header: f.Name, Type: confirm.QuestionText}
		switch {
		case len(f.Choices) > 0:
			cq.Type, cq.MultiSelect = confirm.QuestionChoice, f.Type == "array"
			for i := range f.Choices {
				cq.Options = append(cq.Options, confirm.Option{Label: choiceLabel(f, i)})
			}
		case f.Type == "boolean":
			cq.Type = confirm.QuestionYesNo
		}
		if f.Default != nil {
			cq.Placeholder = fmt.Sprintf("default: %v", f.Default)
		}
		req.Details.Questions = append(req.Details.Questions, cq)
	}
	a, err := e.asker.Ask(ctx, req)
	if err != nil {
		return nil, err
	}
	if !a.Outcome.Proceeds() {
		return &Answer{Action: ActionCancel}, nil
	}
	if len(q.Fields) == 0 {
		if a.Answers["0"] == confirm.AnswerYes {
			return &Answer{Action: ActionAccept}, nil
		}
		return &Answer{Action: ActionDecline}, nil
	}
	values := map[string]any{}
	for i, f := range q.Fields {
		s := strings.TrimSpace(a.Answers[strconv.Itoa(i)])
		if s == "" {
			continue // the default, if any, is applied by the manager
		}
		v, err := fieldValue(f, s)
		if err != nil {
			return nil, fmt.Errorf("the answer to %s: %w", f.Name, err)
		}
		values[f.Name] = v
	}
	return &Answer{Action: ActionAccept, Values: values}, nil
}

// fieldQuestion is the text of a field's question.
func fieldQuestion(f Field) string {
	s := f.Name
	if f.Title != "" {
		s = f.Title
	}
	if f.Description != "" {
		s += ": " + f.Description
	}
	return s
}

// choiceLabel is what the person sees of the field's i-th choice.
func choiceLabel(f Field, i int) string {
	if i < len(f.Labels) && f.Labels[i] != "" {
		return f.Labels[i]
	}
	return f.Choices[i]
}

// fieldValue turns an answer into a value of the field: chosen labels back into their
// values, Yes/No into a boolean, numbers parsed.
func fieldValue(f Field, s string) (any, error) {
	if len(f.Choices) > 0 {
		var out []string
		// Labels of several options come joined with ", ".
		for part := range strings.SplitSeq(s, ", ") {
			found := false
			for i := range f.Choices {
				if choiceLabel(f, i) == part {
					out, found = append(out, f.Choices[i]), true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("%q is not one of the choices", part)
			}
		}
		if f.Type == "array" {
			return out, nil
		}
		if len(out) != 1 {
			return nil, fmt.Errorf("want one choice, not %d", len(out))
		}
		return out[0], nil
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "yes", "y", "true":
			return true, nil
		case "no", "n", "false":
			return false, nil
		}
		return nil, fmt.Errorf("want yes or no, not %q", s)
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want a whole number, not %q", s)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, not %q", s)
		}
		return n, nil
	}
	return s, nil
}
