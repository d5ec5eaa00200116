package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/session"
)

// The turn commands: agentls.turnDiff shows what one prompt of a session changed, and
// agentls.undoTurn takes it back in one workspace/applyEdit (session.Host.UndoTurn).

// turnArgs are the arguments of agentls.undoTurn and agentls.turnDiff.
type turnArgs struct {
	Session string `json:"session"`
	// Turn is the prompt's number, from 1; 0 or absent means the session's last prompt
	// that changed files and was not undone.
	Turn int `json:"turn"`
	// Force undoes the files not changed since, when others were.
	Force bool `json:"force"`
}

func (s *Server) decodeTurnArgs(command string, arg json.RawMessage) (turnArgs, error) {
	var a turnArgs
	if err := decodeArg(command, arg, &a); err != nil {
		return a, err
	}
	if a.Session == "" {
		return a, invalidArgs(command, `"session" must name a session (see %s)`, cmdListSessions)
	}
	if a.Turn < 0 {
		return a, invalidArgs(command, `"turn" is a prompt's number, from 1`)
	}
	return a, nil
}

// turnDiffResult is the result of agentls.turnDiff.
type turnDiffResult struct {
	Session string   `json:"session"`
	Turn    int      `json:"turn"`
	Files   []string `json:"files"`
	Diff    string   `json:"diff"`
	Undone  bool     `json:"undone,omitzero"`
}

func (s *Server) turnDiff(_ context.Context, command string, arg json.RawMessage) (any, error) {
	a, err := s.decodeTurnArgs(command, arg)
	if err != nil {
		return nil, err
	}
	t, err := s.host.Turn(a.Session, a.Turn)
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	res := turnDiffResult{Session: t.Session, Turn: t.Turn, Files: []string{}, Diff: t.Diff(s.host.Toolbox().Workspace), Undone: t.Undone}
	for _, c := range t.Changes {
		res.Files = append(res.Files, c.Path)
	}
	return res, nil
}

// undoTurn answers with what was undone; files changed since the prompt are listed in
// "changed", and without force nothing is undone then. That is an answer, not an error.
func (s *Server) undoTurn(ctx context.Context, command string, arg json.RawMessage) (any, error) {
	a, err := s.decodeTurnArgs(command, arg)
	if err != nil {
		return nil, err
	}
	res, err := s.host.UndoTurn(ctx, a.Session, a.Turn, a.Force)
	if err != nil && !errors.Is(err, session.ErrChangedSince) {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return res, nil
}
