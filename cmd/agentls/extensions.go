package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
)

// cmdExtensions lists the Gemini CLI extensions agentls reads (~/.gemini/extensions,
// its own configuration folder's extensions, a trusted workspace's) with what each
// brings, the disabled ones marked.
func cmdExtensions(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls extensions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the extensions as JSON")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) != 1 || pos[0] != "list" {
		fmt.Fprintf(stderr, "agentls extensions: want list\n\n%s", usage)
		return exitBadUsage
	}
	tb, err := newToolbox(toolbox.Options{Roots: []string{*root}, Logger: newLogger(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer tb.Close()
	tb.WaitAddons()
	exts := tb.Config().Settings.Extensions
	if *asJSON {
		if exts == nil {
			exts = []settings.Extension{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(exts); err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	if len(exts) == 0 {
		fmt.Fprintln(stdout, "no extensions (agentls reads ~/.gemini/extensions and its configuration folder's extensions)")
	}
	for i, e := range exts {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeExtension(stdout, e)
	}
	if u := tb.Untrusted(); u != nil {
		for _, why := range u.Ignored {
			if strings.Contains(why, "extensions ignored") {
				fmt.Fprintf(stderr, "agentls: %s\n", why)
			}
		}
	}
	return exitOK
}

// writeExtension writes one extension and what it brings.
func writeExtension(w io.Writer, e settings.Extension) {
	state := "enabled"
	switch {
	case e.Error != "":
		state = "not loaded: " + e.Error
	case e.Disabled:
		state = "disabled (Gemini CLI's extension-enablement.json)"
	}
	head := e.Name
	if e.Version != "" {
		head += " " + e.Version
	}
	fmt.Fprintf(w, "%s  %s\n  folder: %s\n", head, state, e.Dir)
	if e.Description != "" {
		fmt.Fprintf(w, "  %s\n", e.Description)
	}
	list := func(label string, items []string, note string) {
		if len(items) > 0 {
			fmt.Fprintf(w, "  %s: %s%s\n", label, strings.Join(items, ", "), note)
		}
	}
	list("MCP servers", e.MCPServers, "")
	list("context files", e.ContextFiles, "")
	list("excluded tools", e.ExcludeTools, "")
	cmds := make([]string, len(e.Commands))
	for i, c := range e.Commands {
		cmds[i] = "/" + c
	}
	list("commands", cmds, "")
	list("skills", e.Skills, "")
	list("agents", e.Agents, "")
	list("settings", e.Settings, " (from its .env)")
	if e.Hooks != "" {
		note := ""
		if len(e.HookEvents) > 0 {
			note = " (" + strings.Join(e.HookEvents, ", ") + ")"
		}
		list("hooks", []string{e.Hooks}, note)
	}
	if len(e.Policies) > 0 {
		list("policies", e.Policies, fmt.Sprintf(" (rules applied: %d, ranked below the user's)", e.PolicyRules))
	}
	for _, warning := range e.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}
}
