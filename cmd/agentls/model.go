package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

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
	p, err := withStoredKey(s.Provider, os.Getenv)
	if err != nil {
		return nil, err
	}
	var c clients.Client
	switch p.Type {
	case "", "gemini":
		c, err = clients.NewGemini(ctx, clients.GeminiOptions{
			APIKey:          p.APIKey,
			BaseURL:         p.BaseURL,
			Model:           s.Model.Name,
			ContextWindow:   p.ContextWindow,
			IncludeThoughts: s.Model.IncludeThoughts,
			Logger:          log,
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

// withStoredKey returns p with the API key `agentls login` stored for its provider,
// when neither the settings (provider.apiKey) nor the environment (getenv) give one:
// the settings come first, then the environment, then the stored key.
func withStoredKey(p settings.ProviderSettings, getenv func(string) string) (settings.ProviderSettings, error) {
	if p.APIKey != "" || keyInEnv(p.Type, getenv) {
		return p, nil
	}
	if p.Type != "" && p.Type != settings.ProviderGemini && p.Type != settings.ProviderOpenAI {
		return p, nil
	}
	dir, err := settings.ConfigDir()
	if err != nil {
		return p, err
	}
	keys, err := settings.LoadKeys(dir)
	if err != nil {
		return p, err
	}
	p.APIKey = keys.For(p.Type)
	return p, nil
}

// keyInEnv reports whether the environment gives provider a credential.
func keyInEnv(provider string, getenv func(string) string) bool {
	if provider == settings.ProviderOpenAI {
		return getenv("OPENAI_API_KEY") != ""
	}
	if getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "" {
		return true
	}
	for _, v := range []string{"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"} {
		if b := strings.ToLower(getenv(v)); b == "1" || b == "true" {
			return true
		}
	}
	return false
}
