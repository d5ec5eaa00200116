package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
)

// cmdRules lists the policy rules saved in the user's settings file and the
// workspace's (an "always, and save" answer adds one there), or removes one by the
// number the list gives it.
func cmdRules(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	remove := 0
	switch {
	case len(pos) == 0:
	case len(pos) == 2 && pos[0] == "remove":
		if remove, err = strconv.Atoi(pos[1]); err != nil || remove < 1 {
			fmt.Fprintf(stderr, "agentls rules remove: %q is not a rule's number (see agentls rules)\n", pos[1])
			return exitBadUsage
		}
	default:
		fmt.Fprintf(stderr, "agentls rules: want no arguments, or remove N\n\n%s", usage)
		return exitBadUsage
	}
	dir, err := filepath.Abs(workspaceRoots([]string{*root})[0])
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	config, err := settings.ConfigDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	saved, err := settings.SavedRules(config, dir)
	if err != nil {
		fmt.Fprintf(stderr, "agentls rules: %v\n", err)
		return exitFailure
	}
	if remove > 0 {
		if remove > len(saved) {
			fmt.Fprintf(stderr, "agentls rules remove: there is no rule %d: the settings hold %d (see agentls rules)\n", remove, len(saved))
			return exitFailure
		}
		r := saved[remove-1]
		if _, err := settings.RemoveRule(r.File, r.Index); err != nil {
			fmt.Fprintf(stderr, "agentls rules remove: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "removed rule %d (%s) from %s\n", remove, toolbox.DescribeRule(r.Rule), r.File)
		return exitOK
	}
	if len(saved) == 0 {
		fmt.Fprintf(stdout, "no policy rules in %s or the workspace's settings\n", settings.UserFile(config))
		return exitOK
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for i, r := range saved {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", i+1, r.Source, r.File, visible(toolbox.DescribeRule(r.Rule)))
	}
	w.Flush()
	return exitOK
}
