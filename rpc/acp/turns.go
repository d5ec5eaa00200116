package acp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/session"
)

// agentls's own slash commands, offered beside the MCP prompts: /undo and /redo take
// back what a prompt changed (edits and shell commands alike) and bring it back;
// /diff shows it. ACP has no method for them, so they are commands a client shows as
// any other, answered with an agent message and no model call.

// builtinCommands are agentls's own slash commands.
func builtinCommands() []sdk.AvailableCommand {
	hint := func(h string) *sdk.AvailableCommandInput {
		return &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: h}}
	}
	return []sdk.AvailableCommand{
		{Name: "undo", Description: "Take back what the last prompt changed: its edits and its shell commands' changes", Input: hint("[prompt number] [--force]")},
		{Name: "redo", Description: "Bring back what the last undo took back", Input: hint("[prompt number] [--force]")},
		{Name: "diff", Description: "Show what the last prompt changed, each file with the calls that changed it", Input: hint("[prompt number]")},
	}
}

// runBuiltin runs the builtin command text starts with, if it starts with one, and
// returns its answer.
func (st *sessionState) runBuiltin(ctx context.Context, text string) (answer string, ok bool, err error) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \t\n"), "/")
	if !ok {
		return "", false, nil
	}
	name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if name != "undo" && name != "redo" && name != "diff" {
		return "", false, nil
	}
	turn, force := 0, false
	for _, w := range strings.Fields(args) {
		n, nerr := strconv.Atoi(w)
		switch {
		case w == "--force" && name != "diff":
			force = true
		case nerr == nil && n >= 1:
			turn = n
		default:
			return "", true, invalidParams("/%s: %q is neither a prompt's number (from 1) nor --force", name, w)
		}
	}
	h := st.host
	if name == "diff" {
		t, err := h.Turn(st.id, turn)
		if err != nil {
			return fmt.Sprintf("Nothing to show: %v", err), true, nil
		}
		return fmt.Sprintf("Prompt %d changed:\n\n```diff\n%s```", t.Turn, h.Diff(t)), true, nil
	}
	redo := name == "redo"
	turnBack := h.UndoTurn
	verb := "Undid"
	if redo {
		turnBack, verb = h.RedoTurn, "Redid"
	}
	res, err := turnBack(ctx, st.id, turn, force)
	lines := strings.Join(res.Lines(h.Toolbox().Workspace, redo), "\n")
	switch {
	case errors.Is(err, session.ErrChangedSince):
		return fmt.Sprintf("Nothing done: files changed since, which are left alone (`/%s --force` does the others):\n%s", name, lines), true, nil
	case err != nil:
		return fmt.Sprintf("Nothing done: %v", err), true, nil
	}
	return fmt.Sprintf("%s prompt %d:\n%s", verb, res.Turn, lines), true, nil
}
