package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/confirm"
)

// The permission options, by id; each id is its kind.
const (
	allowOnce    = sdk.PermissionOptionId(sdk.PermissionOptionKindAllowOnce)
	allowAlways  = sdk.PermissionOptionId(sdk.PermissionOptionKindAllowAlways)
	rejectOnce   = sdk.PermissionOptionId(sdk.PermissionOptionKindRejectOnce)
	rejectAlways = sdk.PermissionOptionId(sdk.PermissionOptionKindRejectAlways)
)

// Ask puts a confirmation to the user with session/request_permission (ask_user's
// questions: with elicitation/create, see askQuestions). The answers
// map onto agentls's outcomes: allow_once proceeds once; allow_always proceeds and
// is remembered for the session (the tool, the shell command's programs, or the MCP
// tool, as the policy keeps "always" answers); reject_once cancels the call;
// reject_always cancels it and every later call of the same key in the session without
// asking. A cancelled prompt cancels the request, and no answer is never consent.
func (st *sessionState) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	d := req.Details
	if d.Type == confirm.TypeAsk {
		if formClient(st.caps) {
			return st.askQuestions(ctx, req)
		}
		// session/request_permission offers only allow and reject.
		return confirm.Answer{}, errors.New("this ACP client cannot be asked questions: the Agent Client Protocol's " +
			"session/request_permission offers only allow and reject, and the client does not declare " +
			"elicitation forms (clientCapabilities.elicitation.form)")
	}
	keys := rejectKeys(req)
	st.mu.Lock()
	for _, k := range keys {
		if st.rejected[k] {
			st.mu.Unlock()
			st.c.log.Info("rejected always earlier in the session", "session", st.id, "tool", req.ToolName, "key", k)
			return confirm.Answer{Outcome: confirm.Cancel}, nil
		}
	}
	st.mu.Unlock()

	what := alwaysWhat(req)
	opts := []sdk.PermissionOption{{OptionId: allowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once"}}
	if !d.NoAlways {
		opts = append(opts, sdk.PermissionOption{OptionId: allowAlways, Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always allow " + what})
	}
	opts = append(opts,
		sdk.PermissionOption{OptionId: rejectOnce, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"},
		sdk.PermissionOption{OptionId: rejectAlways, Kind: sdk.PermissionOptionKindRejectAlways, Name: "Always reject " + what})

	call := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(req.ToolCallID), Title: sdk.Ptr(d.Title), Content: permissionContent(d)}
	if d.Path != "" {
		call.Locations = []sdk.ToolCallLocation{{Path: d.Path}}
	}
	resp, err := st.c.sdk.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(st.id), ToolCall: call, Options: opts})
	if err != nil {
		return confirm.Answer{}, fmt.Errorf("session/request_permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		return confirm.Answer{Outcome: confirm.Cancel}, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case allowOnce:
		return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
	case allowAlways:
		if d.NoAlways {
			return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
		}
		if d.Type == confirm.TypeEdit {
			// The tool, for the session; ProceedAlways would switch the workspace's
			// mode to auto_edit behind the client's back.
			return confirm.Answer{Outcome: confirm.ProceedAlwaysTool}, nil
		}
		return confirm.Answer{Outcome: confirm.ProceedAlways}, nil
	case rejectAlways:
		st.mu.Lock()
		for _, k := range keys {
			st.rejected[k] = true
		}
		st.mu.Unlock()
		return confirm.Answer{Outcome: confirm.Cancel}, nil
	case rejectOnce:
		return confirm.Answer{Outcome: confirm.Cancel}, nil
	}
	return confirm.Answer{}, fmt.Errorf("session/request_permission: the client chose option %q, which was not offered", resp.Outcome.Selected.OptionId)
}

// rejectKeys are what a "reject always" answer to req holds for: each program a shell
// command runs, an MCP server's tool, or the tool.
func rejectKeys(req confirm.Request) []string {
	d := req.Details
	switch {
	case d.Type == confirm.TypeExecute && len(d.RootCommands) > 0:
		keys := make([]string, len(d.RootCommands))
		for i, r := range d.RootCommands {
			keys[i] = "exec\x00" + r
		}
		return keys
	case d.Type == confirm.TypeMCP:
		return []string{"mcp\x00" + d.Server + "\x00" + d.Tool}
	}
	return []string{"tool\x00" + req.ToolName}
}

// alwaysWhat names what an "always" answer to req holds for, for the options' names.
func alwaysWhat(req confirm.Request) string {
	d := req.Details
	switch {
	case d.Type == confirm.TypeExecute && len(d.RootCommands) > 0:
		return strings.Join(d.RootCommands, ", ")
	case d.Type == confirm.TypeMCP:
		return d.Tool + " of " + d.Server
	}
	return req.ToolName
}

// permissionContent shows what a call would do: an edit's diff, a command line, an
// MCP call's arguments, a question's prompt and URLs.
func permissionContent(d confirm.Details) []sdk.ToolCallContent {
	var text string
	switch d.Type {
	case confirm.TypeEdit:
		return []sdk.ToolCallContent{{Diff: &sdk.ToolCallContentDiff{Path: d.Path, OldText: d.OriginalContent, NewText: d.NewContent}}}
	case confirm.TypeExecute:
		text = d.Command
		if d.Directory != "" {
			text += "\n(in " + d.Directory + ")"
		}
	case confirm.TypeMCP:
		text = fmt.Sprintf("%s of MCP server %s: %s", d.Tool, d.Server, d.Arguments)
	default:
		text = d.Prompt
		if len(d.URLs) > 0 {
			text += "\n" + strings.Join(d.URLs, "\n")
		}
	}
	if text == "" {
		return nil
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}
}
