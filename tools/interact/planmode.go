package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// The names of the plan mode tools.
const (
	EnterPlanName = "enter_plan_mode"
	ExitPlanName  = "exit_plan_mode"
)

// maxPlanBytes bounds the plan file exit_plan_mode shows the person.
const maxPlanBytes = 256 << 10

var (
	enterPlanSchema = tools.ParametersOnce[enterPlanArgs](false)
	exitPlanSchema  = tools.ParametersOnce[exitPlanArgs](false)
)

// enterPlanTool is enter_plan_mode: it asks the person to switch the session to plan
// mode (read-only tools only), and switches it when they agree.
type enterPlanTool struct{}

type enterPlanArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"Why, in short."`
}

func (enterPlanTool) Info() tools.Info {
	return tools.Info{
		Name:        EnterPlanName,
		DisplayName: "Enter Plan Mode",
		Description: "Asks the user to switch to plan mode, where only read-only tools run, to research and plan a complex change.",
		// think: switching to plan mode changes no file, and the policy refuses in
		// plan mode only what is not read-only.
		Kind:       tools.KindThink,
		Source:     tools.SourceBuiltin,
		Parameters: enterPlanSchema(),
	}
}

// Offered reports whether the switch can be of use: outside plan mode (as in Gemini
// CLI), with a person to agree to it (it is PersonOnly).
func (enterPlanTool) Offered(s tools.Situation) bool { return s.CanAsk && s.Mode != confirm.ModePlan }

func (enterPlanTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a enterPlanArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	return &modeCall{to: confirm.ModePlan, reason: strings.TrimSpace(a.Reason)}, nil
}

// exitPlanTool is exit_plan_mode: it presents the plan and asks the person to leave
// plan mode for the default mode, in which edits and commands are asked about again.
type exitPlanTool struct {
	ws *workspace.Workspace
}

// exitPlanArgs differ from Gemini CLI's in that plan_filename is optional: agentls's
// plan mode writes no file, so the plan may well be in the conversation only.
type exitPlanArgs struct {
	PlanFilename string `json:"plan_filename,omitempty" jsonschema:"The workspace file holding the plan, shown to the user; omit it when the plan is in the conversation."`
}

func (t exitPlanTool) Info() tools.Info {
	return tools.Info{
		Name:        ExitPlanName,
		DisplayName: "Exit Plan Mode",
		Description: "Presents the plan for the user's approval; once approved, plan mode ends and edits can be made. " +
			"Agree on the approach with the user in the chat first.",
		Kind:       tools.KindThink,
		Source:     tools.SourceBuiltin,
		Parameters: exitPlanSchema(),
	}
}

// Offered reports whether the switch can be of use: in plan mode (as in Gemini CLI),
// with a person to approve the plan (it is PersonOnly).
func (exitPlanTool) Offered(s tools.Situation) bool { return s.CanAsk && s.Mode == confirm.ModePlan }

func (t exitPlanTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a exitPlanArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	c := &modeCall{to: confirm.ModeDefault}
	if a.PlanFilename != "" {
		abs, err := t.ws.Resolve(a.PlanFilename)
		if err != nil {
			return nil, tools.AsError(err, tools.ErrPathNotInWorkspace)
		}
		c.planFile, c.ws = abs, t.ws
	}
	return c, nil
}

// modeCall switches the session's approval mode to `to`, once the person agreed.
type modeCall struct {
	to confirm.Mode
	// answered is set once a person agreed (Capabilities.Answered): Execute switches
	// nothing without it, whatever ran the call.
	answered bool
	reason   string
	planFile string
	ws       *workspace.Workspace
}

func (c *modeCall) Describe() string {
	if c.to == confirm.ModePlan {
		return "Switch to plan mode"
	}
	return "Leave plan mode"
}

func (c *modeCall) Locations() []tools.Location {
	if c.planFile != "" {
		return []tools.Location{{Path: c.planFile}}
	}
	return nil
}

// Capabilities records the person's answer, without which Execute switches nothing.
func (c *modeCall) Capabilities() tools.Capabilities {
	return tools.Capabilities{Answered: func(confirm.Answer) { c.answered = true }}
}

// Confirmation is the question put to the person: switching modes is theirs to decide,
// in every approval mode, and no rule decides it for them (PersonOnly).
func (c *modeCall) Confirmation(ctx context.Context) (*confirm.Details, error) {
	s := sessionOf(ctx)
	if s == nil {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "%s switches the approval mode of a model's session; this call belongs to none", c.name())
	}
	cur := s.Mode()
	switch {
	case c.to == confirm.ModePlan && cur == confirm.ModePlan:
		return nil, tools.Errorf(tools.ErrExecutionFailed, "the session is already in plan mode")
	case c.to != confirm.ModePlan && cur != confirm.ModePlan:
		return nil, tools.Errorf(tools.ErrExecutionFailed, "the session is not in plan mode (it is in %s mode)", cur)
	}
	d := &confirm.Details{Type: confirm.TypeInfo, Title: c.Describe(), NoAlways: true, PersonOnly: true}
	if c.to == confirm.ModePlan {
		d.Prompt = "The agent asks to switch this session to plan mode, where it runs only read-only tools until you approve its plan."
		if c.reason != "" {
			d.Prompt += "\nReason: " + c.reason
		}
		return d, nil
	}
	d.Prompt = "The agent has finished planning and asks to leave plan mode for the default mode, where edits and commands are asked about again. Approve the plan?"
	if c.planFile != "" {
		f, err := c.ws.ReadText(c.planFile, maxPlanBytes)
		if err != nil {
			if errors.Is(err, workspace.ErrNotExist) {
				return nil, tools.Errorf(tools.ErrFileNotFound, "plan file %s does not exist", c.planFile)
			}
			return nil, tools.FileError(err)
		}
		d.Prompt += fmt.Sprintf("\n\nPlan (%s):\n%s", c.ws.Rel(c.planFile), f.Text)
	}
	return d, nil
}

func (c *modeCall) name() string {
	if c.to == confirm.ModePlan {
		return EnterPlanName
	}
	return ExitPlanName
}

func (c *modeCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := sessionOf(ctx)
	if s == nil {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "%s switches the approval mode of a model's session; this call belongs to none", c.name())
	}
	if !c.answered {
		return nil, tools.Errorf(tools.ErrPolicyViolation, "%s switches the approval mode only on the user's answer, and nobody answered", c.name())
	}
	s.SetMode(c.to)
	if c.to == confirm.ModePlan {
		return &tools.Result{Summary: "Switched to plan mode",
			Output: "Switched to plan mode. Only read-only tools run now: research and write up your plan, agree on it with the user, then call exit_plan_mode."}, nil
	}
	return &tools.Result{Summary: "Left plan mode",
		Output: "The user approved the plan and the session left plan mode for the default approval mode: you may now edit files and run commands (the user is asked about them). Implement the plan."}, nil
}
