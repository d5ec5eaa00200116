package rpc

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/session"
)

// The turn commands: agentls.turnDiff shows what one prompt of a session changed, its
// edits and its shell commands' changes; agentls.undoTurn takes it back, text files in
// one workspace/applyEdit (session.Host.UndoTurn), and agentls.redoTurn brings back
// what an undo took back.

// turnArgs are the arguments of agentls.undoTurn, agentls.redoTurn and agentls.turnDiff.
type turnArgs struct {
	Session string `json:"session"`
	// Turn is the prompt's number, from 1; 0 or absent means the session's last prompt
	// that changed files and was not undone (for a redo: the prompt undone last).
	Turn int `json:"turn"`
	// Force undoes the files not changed since, when others were.
	Force bool `json:"force"`
}

// check says what is wrong with the arguments of command, if anything.
func (a turnArgs) check(command string) error {
	if a.Session == "" {
		return invalidArgs(command, `"session" must name a session (see %s)`, cmdListSessions)
	}
	if a.Turn < 0 {
		return invalidArgs(command, `"turn" is a prompt's number, from 1`)
	}
	return nil
}

// turnDiffResult is the result of agentls.turnDiff.
type turnDiffResult struct {
	Session string   `json:"session"`
	Turn    int      `json:"turn"`
	Files   []string `json:"files"`
	Diff    string   `json:"diff"`
	Undone  bool     `json:"undone,omitzero"`
	// Changes say, per file, what changed it (By) and how (the states before and
	// after), for clients that show more than the diff.
	Changes    []session.TurnChange `json:"changes"`
	Unrecorded []string             `json:"unrecorded,omitempty"`
	LeftOut    int                  `json:"leftOut,omitempty"`
}

func (c *commandHandler) turnDiff(_ context.Context, d deps, a turnArgs) (turnDiffResult, error) {
	if err := a.check(d.callee); err != nil {
		return turnDiffResult{}, err
	}
	t, err := d.host.Turn(a.Session, a.Turn)
	if err != nil {
		return turnDiffResult{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	res := turnDiffResult{Session: t.Session, Turn: t.Turn, Files: []string{}, Diff: d.host.Diff(t), Undone: t.Undone,
		Changes: t.Changes, Unrecorded: t.Unrecorded, LeftOut: t.LeftOut}
	for _, c := range t.Changes {
		res.Files = append(res.Files, c.Path)
	}
	return res, nil
}

// undoTurn answers with what was undone; files changed since the prompt are listed in
// "changed", and without force nothing is undone then. That is an answer, not an error.
func (c *commandHandler) undoTurn(ctx context.Context, d deps, a turnArgs) (session.UndoResult, error) {
	if err := a.check(d.callee); err != nil {
		return session.UndoResult{}, err
	}
	res, err := d.host.UndoTurn(ctx, a.Session, a.Turn, a.Force)
	if err != nil && !errors.Is(err, session.ErrChangedSince) {
		return session.UndoResult{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return res, nil
}

// redoTurn answers as undoTurn does, for bringing back what an undo took back.
func (c *commandHandler) redoTurn(ctx context.Context, d deps, a turnArgs) (session.UndoResult, error) {
	if err := a.check(d.callee); err != nil {
		return session.UndoResult{}, err
	}
	res, err := d.host.RedoTurn(ctx, a.Session, a.Turn, a.Force)
	if err != nil && !errors.Is(err, session.ErrChangedSince) {
		return session.UndoResult{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return res, nil
}
