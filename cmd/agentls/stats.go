package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// cmdStats prints the tool metrics of the workspace's stored sessions, or of one.
func cmdStats(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.String("session", "", "only this session (default: every stored session of the workspace)")
	asJSON := fs.Bool("json", false, "print { sessions, tools: ToolStats[] }")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentls stats: want only flags\n\n%s", usage)
		return exitBadUsage
	}
	stateDir, err := session.StateDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	store := session.NewStore(stateDir)
	ids := []string{*id}
	if *id == "" {
		ws, err := workspace.New(workspaceRoots([]string{*root})...)
		if err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
		if ids, err = workspaceSessions(store, ws.Roots()[0]); err != nil {
			fmt.Fprintf(stderr, "agentls stats: %v\n", err)
			return exitFailure
		}
	}
	var runs []session.ToolRun
	for _, sid := range ids {
		r, err := store.ToolRuns(sid)
		if err != nil {
			fmt.Fprintf(stderr, "agentls stats: %v\n", err)
			return exitFailure
		}
		runs = append(runs, r...)
	}
	stats := session.MetricsOf(runs)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Sessions int               `json:"sessions"`
			Tools    []tools.ToolStats `json:"tools"`
		}{len(ids), nonNilStats(stats)})
		return exitOK
	}
	if len(stats) == 0 {
		fmt.Fprintf(stdout, "no tool calls in %d %s\n", len(ids), plural(len(ids), "session", "sessions"))
		return exitOK
	}
	fmt.Fprintf(stdout, "tool calls of %d %s\n", len(ids), plural(len(ids), "session", "sessions"))
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "tool\tcalls\terrors\tcancelled\tp50 ms\tp95 ms\t")
	for _, s := range stats {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f\t%.1f\t\n", s.Name, s.Calls, s.Errors, s.Cancelled, s.P50MS, s.P95MS)
	}
	w.Flush()
	return exitOK
}

// workspaceSessions returns the ids of the stored sessions started in root.
func workspaceSessions(store *session.Store, root string) ([]string, error) {
	infos, err := store.List()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, in := range infos {
		if roots, err := store.Roots(in.ID); err == nil && slices.Contains(roots, root) {
			ids = append(ids, in.ID)
		}
	}
	return ids, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
