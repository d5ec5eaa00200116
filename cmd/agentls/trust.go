package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/trust"
)

// cmdTrust edits and shows the user's trusted folders.
func cmdTrust(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls trust", flag.ContinueOnError)
	fs.SetOutput(stderr)
	parent := fs.Bool("parent", false, "trust DIR and every folder under it")
	distrust := fs.Bool("distrust", false, "record that DIR and every folder under it must not be trusted")
	revoke := fs.Bool("revoke", false, "remove the entry for DIR")
	list := fs.Bool("list", false, "show the entries")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	switch n := count(*parent, *distrust, *revoke, *list); {
	case n > 1:
		fmt.Fprintf(stderr, "agentls trust: --parent, --distrust, --revoke and --list exclude each other\n")
		return exitBadUsage
	case *list && len(pos) > 0, len(pos) > 1:
		fmt.Fprintf(stderr, "agentls trust: unexpected argument %q\n", pos[len(pos)-1])
		return exitBadUsage
	}
	configDir, err := settings.ConfigDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	store, err := trust.Load(configDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, e := range store.List() {
			fmt.Fprintf(tw, "%s\t%s\n", e.Kind, e.Path)
		}
		tw.Flush()
		return exitOK
	}
	dir := "."
	if len(pos) == 1 {
		dir = pos[0]
	} else if wd, err := os.Getwd(); err == nil {
		dir = wd
	}
	if *revoke {
		removed, err := store.Revoke(dir)
		if err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
		if !removed {
			fmt.Fprintf(stderr, "agentls trust: no entry for %s in %s\n", dir, store.File())
			return exitFailure
		}
	} else {
		kind := trust.Folder
		switch {
		case *parent:
			kind = trust.Parent
		case *distrust:
			kind = trust.DoNotTrust
		}
		if err := store.Set(dir, kind); err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
	}
	if err := store.Save(); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	// Say what holds now: after a revoke a parent's entry may still decide.
	d := store.Decide(dir)
	state := "not trusted"
	if d.Trusted {
		state = "trusted"
	}
	source := d.Source
	if source == "" {
		source = "no entry applies"
	}
	fmt.Fprintf(stdout, "%s is %s (%s)\n", dir, state, source)
	return exitOK
}

func count(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}
