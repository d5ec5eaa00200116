package interact

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// ThinkName is the name of the think tool.
const ThinkName = "think"

var thinkArgsSchema = tools.ParametersOnce[thinkArgs](false)

// thinkTool is think, as in Kode: a place for the model to reason step by step. It
// changes nothing; the thought is shown to people as one (Session.Thought) and the
// model is told it was noted.
type thinkTool struct{}

type thinkArgs struct {
	Thought string `json:"thought" jsonschema:"Your reasoning."`
}

func (thinkTool) Info() tools.Info {
	return tools.Info{
		Name:        ThinkName,
		DisplayName: "Think",
		Description: "Reason through a problem, weigh options or plan the next steps, when the way forward is not obvious. " +
			"It changes and fetches nothing; the user sees the thought.",
		Kind:       tools.KindThink,
		Source:     tools.SourceBuiltin,
		Parameters: thinkArgsSchema(),
		Idempotent: true,
	}
}

func (thinkTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a thinkArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Thought) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "thought must not be empty")
	}
	return &thinkCall{thought: a.Thought}, nil
}

type thinkCall struct {
	tools.NoCapabilities
	thought string
}

func (c *thinkCall) Describe() string { return "Think" }

func (c *thinkCall) Locations() []tools.Location { return nil }

// Confirmation returns nil: a thought changes nothing.
func (c *thinkCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *thinkCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s := sessionOf(ctx); s != nil {
		s.Thought(c.thought)
	}
	return &tools.Result{Summary: "Thought noted", Output: "Your thought has been noted.", Display: c.thought}, nil
}
