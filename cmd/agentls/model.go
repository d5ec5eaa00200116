package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/settings"
)

// modelClients returns the function that makes the model clients of a process: Gemini
// unless settings.provider says otherwise, configured from the settings and the
// environment. The scripted provider is only ever used when the settings ask for it by
// name. The clients log their warnings (each retry of a busy endpoint) to log; nil
// discards them.
func modelClients(log *slog.Logger) func(context.Context, settings.Settings) (clients.Client, error) {
	return func(ctx context.Context, s settings.Settings) (clients.Client, error) {
		return newClientLog(ctx, s, log)
	}
}

func newClientLog(ctx context.Context, s settings.Settings, log *slog.Logger) (clients.Client, error) {
	p := s.Provider
	var (
		c   clients.Client
		err error
	)
	switch p.Type {
	case "", "gemini":
		c, err = clients.NewGemini(ctx, clients.GeminiOptions{
			APIKey:        p.APIKey,
			BaseURL:       p.BaseURL,
			Model:         s.Model.Name,
			ContextWindow: p.ContextWindow,
			Logger:        log,
		})
	case "openai":
		c, err = clients.NewOpenAI(clients.OpenAIOptions{
			APIKey:        p.APIKey,
			BaseURL:       p.BaseURL,
			Model:         s.Model.Name,
			ContextWindow: p.ContextWindow,
			Logger:        log,
		})
	case "scripted":
		if p.Script == "" {
			return nil, fmt.Errorf(`settings: provider "scripted" needs "script", the path of a script file`)
		}
		script, err := clients.LoadScript(os.ExpandEnv(p.Script))
		if err != nil {
			return nil, err
		}
		c = clients.NewScripted(script)
	default:
		return nil, fmt.Errorf("settings: provider.type %q: want gemini, openai or scripted", p.Type)
	}
	if err != nil {
		return nil, err
	}
	if p.TextOnly {
		c = clients.NewTextMode(c)
	}
	return c, nil
}
