package mcp

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// otherSuffix ends the name of a question's "Other" field: the answer in the person's
// own words that ask_user offers besides a choice or yes/no question's answers.
const otherSuffix = "-other"

// AskForm is ask_user's questions as a form (the inverse of AskElicitor), for a front
// end whose way to ask is a form, such as an ACP client's elicitation/create: question
// i is the field named "i" (a choice question a field of choices, several for
// multiSelect; a yes/no question a boolean field; a free-form one a string field), and
// a choice or yes/no question also has an optional string field "i-other" for an
// answer in the person's own words, as Gemini CLI adds "Other". No field is required:
// a question may be left unanswered.
type AskForm struct {
	// Question is the form; its Server is empty.
	Question
	questions []confirm.Question
}

// NewAskForm returns the form of questions, with message.
func NewAskForm(message string, questions []confirm.Question) *AskForm {
	f := &AskForm{Question: Question{Message: message}, questions: questions}
	for i, q := range questions {
		name := strconv.Itoa(i)
		field := Field{Name: name, Title: q.Header, Description: q.Question, Type: "string"}
		if field.Title == "" {
			field.Title = "Question " + strconv.Itoa(i+1)
		}
		other := true
		switch q.Type {
		case confirm.QuestionYesNo:
			field.Type = "boolean"
		case confirm.QuestionText:
			other = false
			if q.Placeholder != "" {
				field.Description += "\n(" + q.Placeholder + ")"
			}
		default:
			if q.MultiSelect {
				field.Type = "array"
			}
			var desc strings.Builder
			for _, o := range q.Options {
				field.Choices = append(field.Choices, o.Label)
				if o.Description != "" {
					fmt.Fprintf(&desc, "\n- %s: %s", o.Label, o.Description)
				}
			}
			field.Description += desc.String()
		}
		f.Fields = append(f.Fields, field)
		if other {
			desc := "Your own answer, instead of or besides the choices above"
			if q.Placeholder != "" {
				desc += " (" + q.Placeholder + ")"
			}
			f.Fields = append(f.Fields, Field{Name: name + otherSuffix, Title: field.Title + ": other", Description: desc, Type: "string"})
		}
	}
	return f
}

// Answers turns the values of an accepted form into ask_user's answers (see
// confirm.Answer.Answers): the chosen labels, "Yes" or "No", or the text, followed by
// the words given in the question's "Other" field, joined with ", "; a question left
// unanswered has no entry. Values that do not fit the form are an error saying why.
func (f *AskForm) Answers(values map[string]any) (map[string]string, error) {
	values, err := f.Check(values)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range f.questions {
		name := strconv.Itoa(i)
		var parts []string
		switch v := values[name].(type) {
		case string:
			parts = append(parts, v)
		case bool:
			parts = append(parts, map[bool]string{true: confirm.AnswerYes, false: confirm.AnswerNo}[v])
		case []string:
			parts = append(parts, v...)
		}
		if other, _ := values[name+otherSuffix].(string); other != "" {
			parts = append(parts, other)
		}
		parts = slices.DeleteFunc(parts, func(s string) bool { return strings.TrimSpace(s) == "" })
		if len(parts) > 0 {
			out[name] = strings.Join(parts, ", ")
		}
	}
	return out, nil
}

// Check returns the values of an accepted answer to q, as its fields' types want them
// (an integer field's value int64, also when decoded from JSON as a float64; a number
// field's float64; an array field's []string), or an error naming the first value that does not fit: a
// name that is not a field, a value of the wrong type, one outside a field's choices,
// or a required field without a value or a default.
func (q *Question) Check(values map[string]any) (map[string]any, error) {
	fields := make(map[string]Field, len(q.Fields))
	for _, f := range q.Fields {
		fields[f.Name] = f
	}
	out := make(map[string]any, len(values))
	for _, name := range sortedKeys(values) {
		f, ok := fields[name]
		if !ok {
			return nil, fmt.Errorf("the form has no field %q", name)
		}
		v, err := f.check(values[name])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		out[name] = v
	}
	for _, f := range q.Fields {
		if _, ok := out[f.Name]; !ok && f.Required && f.Default == nil {
			return nil, fmt.Errorf("field %q is required and has no value", f.Name)
		}
	}
	return out, nil
}

// check returns v as the field's type wants it, or what is wrong with it.
func (f Field) check(v any) (any, error) {
	switch f.Type {
	case "boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, not %s", describe(v))
	case "integer":
		switch n := v.(type) {
		case int64:
			return n, nil
		case float64:
			if n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
				return int64(n), nil
			}
		}
		return nil, fmt.Errorf("want a whole number, not %s", describe(v))
	case "number":
		switch n := v.(type) {
		case float64:
			return n, nil
		case int64:
			return float64(n), nil
		}
		return nil, fmt.Errorf("want a number, not %s", describe(v))
	case "array":
		var items []any
		switch v := v.(type) {
		case []any:
			items = v
		case []string:
			for _, s := range v {
				items = append(items, s)
			}
		default:
			return nil, fmt.Errorf("want a list of choices, not %s", describe(v))
		}
		out := make([]string, 0, len(items))
		for _, item := range items {
			s, err := f.choice(item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return f.choice(v)
}

// choice returns v when it is a string the field allows: one of its choices, if it
// has any.
func (f Field) choice(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want text, not %s", describe(v))
	}
	if len(f.Choices) > 0 && !slices.Contains(f.Choices, s) {
		return "", fmt.Errorf("%q is not one of the choices (%s)", s, strings.Join(f.Choices, ", "))
	}
	return s, nil
}

// describe names a JSON value's type and, when short, the value, for an error.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(tools.Abbreviate(v, 40))
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
