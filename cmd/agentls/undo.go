package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
)

// cmdUndo takes back what one prompt of a stored session changed, on disk; with --redo
// it brings back what an undo took back, and with --diff shows what the prompt changed.
func cmdUndo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls undo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.String("session", "", "the session (default: the newest session of the workspace)")
	turn := fs.Int("turn", 0, "the prompt's number, from 1 (default: the last prompt that changed files and was not undone)")
	force := fs.Bool("force", false, "undo the files not changed since, when others were")
	diff := fs.Bool("diff", false, "show what the prompt changed, and undo nothing")
	redo := fs.Bool("redo", false, "bring back what the undo of the prompt took back (default: the prompt undone last)")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 || *turn < 0 {
		fmt.Fprintf(stderr, "agentls undo: want only flags, and a turn from 1\n\n%s", usage)
		return exitBadUsage
	}
	stateDir, err := session.StateDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	store := session.NewStore(stateDir)
	host, err := session.NewHost(session.HostOptions{
		Toolbox: toolbox.Options{Roots: workspaceRoots([]string{*root}), Logger: newLogger(stderr)},
		Store:   store,
		Logger:  newLogger(stderr),
	})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer host.Close()
	ws := host.Toolbox().Workspace
	if *id == "" {
		if *id, err = newestSession(store, ws.Roots()[0]); err != nil {
			fmt.Fprintf(stderr, "agentls undo: %v\n", err)
			return exitFailure
		}
	}
	if *diff {
		t, err := host.Turn(*id, *turn)
		if err != nil {
			fmt.Fprintf(stderr, "agentls undo: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stderr, "agentls: prompt %d of session %s\n", t.Turn, t.Session)
		io.WriteString(stdout, host.Diff(t))
		return exitOK
	}
	verb, did := "undo", "undid"
	turnBack := host.UndoTurn
	if *redo {
		verb, did, turnBack = "redo", "redid", host.RedoTurn
	}
	res, err := turnBack(ctx, *id, *turn, *force)
	for _, line := range res.Lines(ws, *redo) {
		fmt.Fprintln(stdout, line)
	}
	switch {
	case errors.Is(err, session.ErrChangedSince):
		fmt.Fprintf(stderr, "agentls undo: nothing done: files changed since prompt %d of session %s; --force %ss the others\n", res.Turn, *id, verb)
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "agentls undo: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "agentls: %s prompt %d of session %s\n", did, res.Turn, *id)
	return exitOK
}

// newestSession returns the most recently updated stored session started in root.
func newestSession(store *session.Store, root string) (string, error) {
	infos, err := store.List()
	if err != nil {
		return "", err
	}
	for _, in := range infos {
		if roots, err := store.Roots(in.ID); err == nil && slices.Contains(roots, root) {
			return in.ID, nil
		}
	}
	return "", fmt.Errorf("no stored session was started in %s (name one with --session)", root)
}
