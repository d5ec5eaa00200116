package interact

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// AskName is the name of the ask_user tool.
const AskName = "ask_user"

// askSchema is Gemini CLI's ask_user schema, its descriptions shortened. It is written
// out rather than generated because the generator has no maxItems and no defaults on
// nested fields.
const askSchema = `{
  "type": "object",
  "required": ["questions"],
  "properties": {
    "questions": {
      "type": "array",
      "minItems": 1,
      "maxItems": 4,
      "items": {
        "type": "object",
        "required": ["question", "header", "type"],
        "properties": {
          "question": {"type": "string", "description": "The question, ending with a question mark."},
          "header": {"type": "string", "description": "A label of one or two short words, e.g. \"Auth method\"."},
          "type": {"type": "string", "enum": ["choice", "text", "yesno"], "default": "choice", "description": "choice and yesno add an Other answer."},
          "options": {
            "type": "array",
            "description": "2-4 options, for type choice.",
            "items": {
              "type": "object",
              "required": ["label", "description"],
              "properties": {
                "label": {"type": "string", "description": "1-5 words."},
                "description": {"type": "string", "description": "What it means, briefly."}
              }
            }
          },
          "multiSelect": {"type": "boolean", "description": "Let several options be chosen (type choice)."},
          "placeholder": {"type": "string", "description": "Hint shown where the user types an answer."}
        }
      }
    }
  }
}`

// askTool is ask_user: questions put to the person through the front end. The
// questions travel as a confirm.TypeAsk confirmation, so every front end's Asker gets
// them the way it gets every other question, and the policy decides as for any call
// (the questions say PersonOnly, so they are put in every approval mode, whatever the
// rules say).
type askTool struct{}

type askArgs struct {
	Questions []confirm.Question `json:"questions"`
}

func (askTool) Info() tools.Info {
	return tools.Info{
		Name:        AskName,
		DisplayName: "Ask User",
		Description: "Asks the user questions to clarify requirements or make decisions, and returns the answers. " +
			"Prefer choices with descriptions, and multiSelect where several may apply.",
		// think: it changes nothing, so plan mode lets it run.
		Kind:       tools.KindThink,
		Source:     tools.SourceBuiltin,
		Parameters: json.RawMessage(askSchema),
		Markdown:   true,
	}
}

// Offered reports whether a person can be asked: without one, every call would be
// refused (the questions are PersonOnly).
func (askTool) Offered(s tools.Situation) bool { return s.CanAsk }

func (askTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a askArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if len(a.Questions) == 0 {
		return nil, tools.Errorf(tools.ErrInvalidParams, "at least one question is required")
	}
	qs := make([]confirm.Question, len(a.Questions))
	for i, q := range a.Questions {
		if q.Type == "" {
			q.Type = confirm.QuestionChoice
		}
		if strings.TrimSpace(q.Question) == "" {
			return nil, tools.Errorf(tools.ErrInvalidParams, "question %d: 'question' must not be empty", i+1)
		}
		if q.Type == confirm.QuestionChoice && (len(q.Options) < 2 || len(q.Options) > 4) {
			return nil, tools.Errorf(tools.ErrInvalidParams, "question %d: type='choice' requires an 'options' array with 2-4 items, not %d", i+1, len(q.Options))
		}
		// Models escape line breaks in these strings now and then, as Gemini CLI notes.
		q.Question, q.Header, q.Placeholder = unescape(q.Question), unescape(q.Header), unescape(q.Placeholder)
		opts := make([]confirm.Option, len(q.Options))
		for j, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" {
				return nil, tools.Errorf(tools.ErrInvalidParams, "question %d, option %d: 'label' must not be empty", i+1, j+1)
			}
			opts[j] = confirm.Option{Label: unescape(o.Label), Description: unescape(strings.TrimSpace(o.Description))}
		}
		q.Options = opts
		if len(opts) == 0 {
			q.Options = nil
		}
		qs[i] = q
	}
	return &askCall{questions: qs}, nil
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\r\n`, "\n"), `\n`, "\n")
}

type askCall struct {
	questions []confirm.Question
	// answered is set, with answers, once a person answered (Capabilities.Answered).
	answered bool
	answers  map[string]string
}

func (c *askCall) Describe() string {
	qs := make([]string, len(c.questions))
	for i, q := range c.questions {
		qs[i] = q.Question
	}
	return "Asking user: " + strings.Join(qs, ", ")
}

func (c *askCall) Locations() []tools.Location { return nil }

func (c *askCall) Confirmation(context.Context) (*confirm.Details, error) {
	return &confirm.Details{Type: confirm.TypeAsk, Title: "Ask User", Questions: c.questions, NoAlways: true, PersonOnly: true}, nil
}

func (c *askCall) Capabilities() tools.Capabilities {
	return tools.Capabilities{Answered: func(a confirm.Answer) {
		c.answered = true
		c.answers = map[string]string{}
		for k, v := range a.Answers {
			// Only answers to questions that were asked.
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(c.questions) && strconv.Itoa(i) == k {
				c.answers[k] = v
			}
		}
	}}
}

func (c *askCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !c.answered {
		// Nobody was asked (the scheduler asks whatever the rules say, so this is a
		// runner that does not): there is nothing to report.
		return nil, tools.Errorf(tools.ErrExecutionFailed,
			"ask_user's questions were not put to the user, so nobody answered; decide without asking, and say what you assumed")
	}
	out, err := json.Marshal(map[string]any{"answers": c.answers})
	if err != nil {
		return nil, fmt.Errorf("encode the answers: %w", err)
	}
	display := "User submitted without answering questions."
	if len(c.answers) > 0 {
		var b strings.Builder
		b.WriteString("**User answered:**")
		keys := slices.SortedFunc(maps.Keys(c.answers), func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			return x - y
		})
		for _, k := range keys {
			i, _ := strconv.Atoi(k)
			label := c.questions[i].Header
			if label == "" {
				label = "Q" + k
			}
			prefix := "  " + label + " → "
			fmt.Fprintf(&b, "\n%s%s", prefix, strings.ReplaceAll(c.answers[k], "\n", "\n"+strings.Repeat(" ", len([]rune(prefix)))))
		}
		display = b.String()
	}
	return &tools.Result{Summary: fmt.Sprintf("The user answered %d of %d questions", len(c.answers), len(c.questions)),
		Output: string(out), Display: display}, nil
}
