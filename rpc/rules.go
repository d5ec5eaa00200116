package rpc

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
)

// The saved rules: agentls.listRules lists the policy rules of the user's settings file
// and the workspace's, as `agentls rules` does, and agentls.removeRule removes one.

// savedRule is one rule of agentls.listRules: whose file it is in ("user" or
// "workspace"), its index among that source's rules (what agentls.removeRule takes),
// the file, the rule as written and what it does in words.
type savedRule struct {
	Source      string       `json:"source"`
	Index       int          `json:"index"`
	File        string       `json:"file"`
	Rule        confirm.Rule `json:"rule"`
	Description string       `json:"description"`
}

// savedRules returns the saved rules with their per-source indices.
func (s *Server) savedRules(command string) ([]settings.SavedRule, []savedRule, error) {
	_, _, tb := s.state()
	if tb == nil {
		return nil, nil, invalidArgs(command, "the server is not initialized")
	}
	saved, err := settings.SavedRules(tb.ConfigDir, tb.Workspace.Roots()[0])
	if err != nil {
		return nil, nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	out := make([]savedRule, len(saved))
	next := map[confirm.Source]int{}
	for i, r := range saved {
		out[i] = savedRule{Source: r.Source.String(), Index: next[r.Source], File: r.File, Rule: r.Rule,
			Description: toolbox.DescribeRule(r.Rule)}
		next[r.Source]++
	}
	return saved, out, nil
}

func (s *Server) listRules(_ context.Context, command string, _ json.RawMessage) (any, error) {
	_, out, err := s.savedRules(command)
	if err != nil {
		return nil, err
	}
	return map[string]any{"rules": out}, nil
}

// removeRule removes the rule {source, index} of agentls.listRules and answers with
// it. The settings are read again at the next session; the sessions running keep
// what they allowed.
func (s *Server) removeRule(_ context.Context, command string, arg json.RawMessage) (any, error) {
	var a struct {
		Source string `json:"source"`
		Index  *int   `json:"index"`
	}
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	if a.Source != "user" && a.Source != "workspace" {
		return nil, invalidArgs(command, `"source" must be "user" or "workspace"`)
	}
	if a.Index == nil {
		return nil, invalidArgs(command, `"index" is required: the rule's index among its source's rules in %s`, cmdListRules)
	}
	saved, out, err := s.savedRules(command)
	if err != nil {
		return nil, err
	}
	for i, r := range out {
		if r.Source != a.Source || r.Index != *a.Index {
			continue
		}
		if _, err := settings.RemoveRule(saved[i].File, saved[i].Index); err != nil {
			return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
		}
		s.log.Info("rule removed", "file", r.File, "tool", r.Rule.ToolName)
		return r, nil
	}
	return nil, invalidArgs(command, "there is no %s rule %d (see %s)", a.Source, *a.Index, cmdListRules)
}
