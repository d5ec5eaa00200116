package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/confirm"
)

// Ask puts a confirmation to the user with session/request_permission (ask_user's
// questions: with elicitation/create, see askQuestions). The options are the
// question's choices (confirm.Details.Choices), the same as every front end offers,
// each with the ACP kind of its outcome; the id of the one chosen is the answer, which
// the scheduler applies ("always" and "reject always" for this session, saving a
// rule). A cancelled prompt cancels the request, and no answer is never consent.
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
	opts := permissionOptions(d.Choices)
	call := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(req.ToolCallID), Title: sdk.Ptr(d.Title), Content: permissionContent(d)}
	if title, kind, ok := st.shownCall(req.ToolCallID); ok {
		// The request's tool call updates the call the client shows: it keeps its own
		// title (a command's is the command line) and kind. A client that shows only
		// the title when it asks (CodeCompanion) would otherwise ask "Confirm Shell
		// Command" without the command. The question's own title, when it says more
		// (why a command would run outside the sandbox), comes first in the text.
		call.Title, call.Kind = sdk.Ptr(title), sdk.Ptr(kind)
		if d.Title != title && d.Type != confirm.TypeEdit {
			call.Content = append([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(d.Title))}, call.Content...)
		}
	}
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
	chosen := string(resp.Outcome.Selected.OptionId)
	if !slices.ContainsFunc(d.Choices, func(c confirm.Choice) bool { return c.ID == chosen }) {
		return confirm.Answer{}, fmt.Errorf("session/request_permission: the client chose option %q, which was not offered", chosen)
	}
	return confirm.Answer{Choice: chosen}, nil
}

// shownCall returns the title and kind the client was shown for the call id, if it
// was shown one.
func (st *sessionState) shownCall(id string) (string, sdk.ToolKind, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	v, ok := st.calls[id]
	if !ok {
		return "", "", false
	}
	return v.title, v.kind, true
}

// optionKind is the ACP kind of a choice's outcome.
func optionKind(o confirm.Outcome) sdk.PermissionOptionKind {
	switch {
	case o == confirm.RejectAlways:
		return sdk.PermissionOptionKindRejectAlways
	case !o.Proceeds():
		return sdk.PermissionOptionKindRejectOnce
	case o.Always():
		return sdk.PermissionOptionKindAllowAlways
	}
	return sdk.PermissionOptionKindAllowOnce
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

// permissionOptions are the choices as ACP's options, each with the kind of its
// outcome. The "always" choices, which share the kind allow_always, come widest first
// (the one saved in the settings, every tool of a server, then this session's), so that
// a client that keeps one option of a kind, the last (CodeCompanion's one key for
// "always"), keeps the narrowest: an answer for this session, never a saved rule.
func permissionOptions(choices []confirm.Choice) []sdk.PermissionOption {
	opts := make([]sdk.PermissionOption, len(choices))
	var always []int
	for i, c := range choices {
		opts[i] = sdk.PermissionOption{OptionId: sdk.PermissionOptionId(c.ID), Kind: optionKind(c.Outcome), Name: c.Label}
		if opts[i].Kind == sdk.PermissionOptionKindAllowAlways {
			always = append(always, i)
		}
	}
	// The policy offers them narrowest first.
	for i, j := 0, len(always)-1; i < j; i, j = i+1, j-1 {
		opts[always[i]], opts[always[j]] = opts[always[j]], opts[always[i]]
	}
	return opts
}
