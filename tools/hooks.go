package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sourcegraph/conc/panics"
)

// ToolHooks are the user's hooks around the calls of a scheduler (Options.Hooks), as
// Gemini CLI's BeforeTool and AfterTool hooks: package session runs package hooks
// through it.
type ToolHooks interface {
	// BeforeTool is asked about a call once its tool is found, before its arguments
	// are validated and before anyone is asked to consent, so that what the person
	// approves is the call as the hooks left it.
	BeforeTool(ctx context.Context, c HookedCall) BeforeVerdict
	// AfterTool is told the result of a call that ran (successfully or not) before
	// the result is final.
	AfterTool(ctx context.Context, c HookedCall, r CallResult) AfterVerdict
}

// HookedCall is the call hooks are told of.
type HookedCall struct {
	CallID string
	Name   string
	Args   json.RawMessage
	// Server is the MCP server of an MCP tool.
	Server string
}

// BeforeVerdict is what BeforeTool hooks decided about a call.
type BeforeVerdict struct {
	// Deny refuses the call, for Reason (which the model is told).
	Deny   bool
	Reason string
	// Stop refuses the call and ends the agent's turn, for StopReason.
	Stop       bool
	StopReason string
	// Args, when not empty, are fields that replace the call's arguments' own.
	Args map[string]json.RawMessage
	// Context is added to the call's result for the model.
	Context string
	// Notes are what the person is shown on the call: what each hook decided.
	Notes []string
}

// AfterVerdict is what AfterTool hooks decided about a call's result.
type AfterVerdict struct {
	// Deny hides the call's result from the model, which is told Reason instead.
	Deny   bool
	Reason string
	// Stop ends the agent's turn after this call, for StopReason.
	Stop       bool
	StopReason string
	// Context is added to the result for the model.
	Context string
	// Tail, when set, is a call to run after the call's batch, whose result replaces
	// the call's for the model (Gemini CLI's tailToolCallRequest).
	Tail *TailCall
	// Notes are what the person is shown on the call.
	Notes []string
}

// TailCall is a tool call an AfterTool hook chains to a call. It is judged, asked
// about and contained as any call is; its own hooks run, but chain nothing further.
type TailCall struct {
	Name string
	Args json.RawMessage
}

// hookContext wraps the context hooks added, as Gemini CLI does, for the model.
func hookContext(text string) string {
	return "\n\n<hook_context>" + text + "</hook_context>"
}

// beforeHooks runs the BeforeTool hooks of c, whose tool is found; it reports false if
// they ended c.
func (s *Scheduler) beforeHooks(ctx context.Context, c *call) bool {
	if s.hooks == nil {
		return true
	}
	hc := HookedCall{CallID: c.req.CallID, Name: c.req.Name, Args: c.req.Args, Server: c.info.Server}
	var v BeforeVerdict
	if r := panics.Try(func() { v = s.hooks.BeforeTool(ctx, hc) }); r != nil {
		s.logger.Error("BeforeTool hooks panicked", "call", c.req.CallID, "panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
		c.hookNotes = append(c.hookNotes, fmt.Sprintf("BeforeTool hooks: agentls failed running them (%v)", r.Value))
		return true
	}
	c.hookNotes = append(c.hookNotes, v.Notes...)
	c.hookContext = v.Context
	switch {
	case v.Stop:
		c.stop = v.StopReason
		s.finishError(c, &Error{Type: ErrPolicyViolation, Message: "Agent execution stopped by hook: " + v.StopReason})
		return false
	case v.Deny:
		s.finishError(c, &Error{Type: ErrPolicyViolation, Message: "Tool execution blocked by a hook: " + v.Reason})
		return false
	case len(v.Args) > 0:
		var args map[string]json.RawMessage
		if err := json.Unmarshal(c.req.Args, &args); err != nil || args == nil {
			args = map[string]json.RawMessage{}
		}
		maps.Copy(args, v.Args)
		data, err := json.Marshal(args)
		if err != nil {
			s.finishError(c, Errorf(ErrInvalidParams, "the arguments a hook rewrote cannot be used: %v", err))
			return false
		}
		c.req.Args = data
		c.rewritten = slices.Sorted(maps.Keys(v.Args))
	}
	return true
}

// afterHooks runs the AfterTool hooks of c, which ran, on its result r, and applies
// what they decided to r.
func (s *Scheduler) afterHooks(c *call, r *CallResult) {
	if len(c.rewritten) > 0 {
		forModel(r, fmt.Sprintf("\n\n[System] Tool input parameters (%s) were modified by a hook before execution.", strings.Join(c.rewritten, ", ")))
	}
	if c.hookContext != "" {
		forModel(r, hookContext(c.hookContext))
	}
	if s.hooks == nil || c.ctx == nil || r.Status == StatusCancelled {
		return
	}
	hc := HookedCall{CallID: c.req.CallID, Name: c.req.Name, Args: c.req.Args, Server: c.info.Server}
	var v AfterVerdict
	if p := panics.Try(func() { v = s.hooks.AfterTool(c.ctx, hc, *r) }); p != nil {
		s.logger.Error("AfterTool hooks panicked", "call", c.req.CallID, "panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
		c.hookNotes = append(c.hookNotes, fmt.Sprintf("AfterTool hooks: agentls failed running them (%v)", p.Value))
		return
	}
	c.hookNotes = append(c.hookNotes, v.Notes...)
	if v.Deny {
		if r.Display == "" {
			r.Display = r.Output
		}
		msg := "Tool result blocked by a hook: " + v.Reason
		r.Status, r.Output, r.Error = StatusError, msg, &ErrorInfo{Type: ErrPolicyViolation, Message: msg}
		r.Parts = nil
	}
	if v.Context != "" {
		forModel(r, hookContext(v.Context))
	}
	if v.Stop {
		c.stop = v.StopReason
	}
	switch {
	case v.Tail == nil || v.Deny || v.Stop:
	case c.chained:
		c.hookNotes = append(c.hookNotes, fmt.Sprintf("AfterTool hooks: %s was not chained to a chained call (one link at a time)", v.Tail.Name))
	default:
		c.tail = v.Tail
		c.hookNotes = append(c.hookNotes, fmt.Sprintf("AfterTool hooks: chained %s, whose result the model gets instead of this one", v.Tail.Name))
	}
}

// forModel adds text to what the model is told of r: its output, or its error.
func forModel(r *CallResult, text string) {
	if r.Status != StatusSuccess && r.Error != nil {
		r.Error.Message += text
		return
	}
	if r.Display == "" && r.Output != "" {
		// People see the result as it was, not agentls's note to the model.
		r.Display = r.Output
	}
	r.Output += text
}
