package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/settings"
)

// newClient returns the model client the settings and the environment name: Gemini
// unless settings.provider says otherwise. The scripted provider is only ever used when
// the settings ask for it by name.
func newClient(ctx context.Context, s settings.Settings) (clients.Client, error) {
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
		})
	case "openai":
		c, err = clients.NewOpenAI(clients.OpenAIOptions{
			APIKey:        p.APIKey,
			BaseURL:       p.BaseURL,
			Model:         s.Model.Name,
			ContextWindow: p.ContextWindow,
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
