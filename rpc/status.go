package rpc

import (
	"cmp"
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// statusResult is the result of agentls.status: what an editor's health check shows
// of the server's configuration. The model fields come from making the model client
// the next session would get (no request is sent to the model), so a missing key is
// reported as the prompt would report it.
type statusResult struct {
	Root         string `json:"root"`
	Trusted      bool   `json:"trusted"`
	TrustSource  string `json:"trustSource,omitempty"`
	ApprovalMode string `json:"approvalMode"`
	Provider     string `json:"provider"`
	Model        string `json:"model,omitempty"`
	ModelReady   bool   `json:"modelReady"`
	ModelError   string `json:"modelError,omitempty"`
}

// status serves agentls.status.
func (s *Server) status(ctx context.Context, command string, arg json.RawMessage) (any, error) {
	if err := decodeArg(command, arg, &struct{}{}); err != nil {
		return nil, err
	}
	_, _, tb := s.state()
	if tb == nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "no workspace yet")
	}
	cfg := tb.Config()
	res := statusResult{
		Root:         tb.Workspace.Roots()[0],
		Trusted:      cfg.Trust.Trusted,
		TrustSource:  cfg.Trust.Source,
		ApprovalMode: string(cfg.Policy.Mode()),
		Provider:     cmp.Or(cfg.Settings.Provider.Type, "gemini"),
		Model:        cfg.Settings.Model.Name,
	}
	if s.opts.NewClient == nil {
		res.ModelError = "this server has no model client"
		return res, nil
	}
	c, err := s.opts.NewClient(ctx, cfg.Settings)
	if err != nil {
		res.ModelError = err.Error()
		return res, nil
	}
	res.ModelReady = true
	res.Model = c.Model()
	return res, nil
}
