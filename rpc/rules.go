package rpc

import (
	"context"

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

// savedRules returns the saved rules of tb's settings files with their per-source
// indices.
func savedRules(tb *toolbox.Toolbox) ([]settings.SavedRule, []savedRule, error) {
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

// listRulesResult is the result of agentls.listRules.
type listRulesResult struct {
	Rules []savedRule `json:"rules"`
}

func (c *commandHandler) listRules(_ context.Context, d deps, _ struct{}) (listRulesResult, error) {
	_, out, err := savedRules(d.toolbox)
	if err != nil {
		return listRulesResult{}, err
	}
	return listRulesResult{Rules: out}, nil
}

// removeRule removes the rule {source, index} of agentls.listRules and answers with
// it. The settings are read again at the next session; the sessions running keep
// what they allowed.
// removeRuleArgs are the arguments of agentls.removeRule.
type removeRuleArgs struct {
	Source string `json:"source"`
	Index  *int   `json:"index"`
}

func (c *commandHandler) removeRule(_ context.Context, d deps, a removeRuleArgs) (any, error) {
	if a.Source != "user" && a.Source != "workspace" {
		return nil, invalidArgs(d.callee, `"source" must be "user" or "workspace"`)
	}
	if a.Index == nil {
		return nil, invalidArgs(d.callee, `"index" is required: the rule's index among its source's rules in %s`, cmdListRules)
	}
	saved, out, err := savedRules(d.toolbox)
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
		c.s.log.Info("rule removed", "file", r.File, "tool", r.Rule.ToolName)
		return r, nil
	}
	return nil, invalidArgs(d.callee, "there is no %s rule %d (see %s)", a.Source, *a.Index, cmdListRules)
}
