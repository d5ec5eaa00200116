package rpc

import (
	"cmp"
	"context"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/sandbox"
)

// What a rich client shows of the server's state besides the tool calls: the approval
// mode in force and the model serving a session. Both are agentls/update kinds (see
// docs/protocol.md), so that a client shows what the server decides with rather than
// what it configured: a settings file, a trust decision or another command may change
// the mode, and the model is the one the session's client was made for.

// updateSessionInfo is the kind of a session_info update. The mode is announced as a
// current_mode_update (updates.go), with session "" for the workspace's.
const updateSessionInfo = "session_info"

// sessionInfoNotice is a session_info update: the model a session's prompts go to.
type sessionInfoNotice struct {
	Kind     string `json:"kind"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
}

// modeAnnouncer remembers the workspace mode last sent, so that each change is sent
// once and in order.
type modeAnnouncer struct {
	mu   sync.Mutex // held while sending
	sent confirm.Mode
}

// announceMode sends the workspace's approval mode to a rich client when it differs
// from the one last sent (at first: after initialized).
func (s *Server) announceMode() {
	if !s.capabilities().RichUpdates() {
		return
	}
	p := s.policy()
	if p == nil {
		return
	}
	a := &s.modes
	a.mu.Lock()
	defer a.mu.Unlock()
	m := cmp.Or(p.Mode(), confirm.ModeDefault)
	if m == a.sent {
		return
	}
	a.sent = m
	s.send("agentls/update", updateParams{Session: "", Update: modeNotice{Kind: updateMode, Mode: m}})
}

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
	// Sandbox is how the workspace's commands are contained.
	Sandbox sandbox.Status `json:"sandbox"`
}

// status serves agentls.status.
func (c *commandHandler) status(ctx context.Context, d deps, _ struct{}) (statusResult, error) {
	s, tb := c.s, d.toolbox
	cfg := tb.Config()
	res := statusResult{
		Root:         tb.Workspace.Roots()[0],
		Trusted:      cfg.Trust.Trusted,
		TrustSource:  cfg.Trust.Source,
		ApprovalMode: string(cfg.Policy.Mode()),
		Provider:     cmp.Or(cfg.Settings.Provider.Type, "gemini"),
		Model:        cfg.Settings.Model.Name,
		Sandbox:      cfg.Sandbox.Status(),
	}
	if s.opts.NewClient == nil {
		res.ModelError = "this server has no model client"
		return res, nil
	}
	client, err := s.opts.NewClient(ctx, cfg.Settings)
	if err != nil {
		res.ModelError = err.Error()
		return res, nil
	}
	res.ModelReady = true
	res.Model = client.Model()
	return res, nil
}
