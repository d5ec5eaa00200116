package rpc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/settings"
)

// TestStatus: agentls.status reports the root, trust, approval mode, provider and the
// model the next session gets, or why it would get none (a missing key), without a
// request to the model.
func TestStatus(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
	type status struct {
		Root, ApprovalMode, Provider, Model, ModelError string
		Trusted, ModelReady                             bool
	}
	cases := []struct {
		name      string
		init      any
		newClient func(context.Context, settings.Settings) (clients.Client, error)
		want      status
	}{
		{"ready", map[string]any{"approvalMode": "auto_edit"}, nil,
			status{Root: root, ApprovalMode: "auto_edit", Provider: "gemini", Model: clients.DefaultGeminiModel, ModelReady: true}},
		{"no key", nil, func(context.Context, settings.Settings) (clients.Client, error) {
			return nil, errors.New("set GEMINI_API_KEY")
		}, status{Root: root, ApprovalMode: "default", Provider: "gemini", ModelError: "set GEMINI_API_KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, root, "")
			c := a.serve(capsRich, tc.init, rpc.Options{NewClient: tc.newClient})
			var got status
			if err := command(ctx, c, "agentls.status", nil, &got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("agentls.status = %+v, want %+v", got, tc.want)
			}
			if reqs, err := a.fake.GenerateRequests(); err != nil || len(reqs) != 0 {
				t.Errorf("requests reached the model: %d, %v", len(reqs), err)
			}
		})
	}
}
