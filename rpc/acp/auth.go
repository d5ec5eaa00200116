package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/settings"
)

// Authentication. agentls needs the API key of its model's provider (Gemini, or an
// OpenAI-compatible endpoint). It finds one in the settings (provider.apiKey), the
// environment (GEMINI_API_KEY, GOOGLE_API_KEY, OPENAI_API_KEY, Vertex AI's
// variables), or the user's key store (settings.KeysFile), which `agentls login`
// writes. initialize offers two methods, whether or not a key is found:
//
//   - an agent method (apiKeyMethod): authenticate succeeds when a key is found; else,
//     when the client answers elicitation/create forms, it asks the user for the key in
//     a form tied to the authenticate request (the schema's request scope, "during auth
//     phases before any session is started") and stores it; else it fails with
//     auth_required and says how to give one;
//   - terminal authentication (loginMethod), for the clients that declare it
//     (clientCapabilities.auth.terminal, or the _meta "terminal-auth" flag Zed and the
//     ACP registry's validator send): the client runs `agentls login` in a terminal,
//     which asks for the key without echo and stores it.
//
// logout removes the stored keys. session/new without a key fails with auth_required
// (-32000), whose data lists the methods. The key is never logged.

// The ids of the authentication methods. apiKeyMethod keeps the id of Gemini CLI's API
// key method, which clients set up for Gemini CLI send.
const (
	apiKeyMethod = "gemini-api-key"
	loginMethod  = "agentls-login"
)

// keyVars are the environment variables that give agentls a model.
var keyVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY"}

// keyHint tells the user how to give agentls a model.
const keyHint = "agentls found no API key. Log in: run `agentls login` in a terminal (or the login your editor offers), " +
	"which stores the key readable by you alone; or set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment the editor " +
	"starts `agentls acp` with (Zed: \"env\" of the agent server in settings.json); or name another provider in " +
	"~/.config/agentls/settings.json (OPENAI_API_KEY, or `agentls login --provider openai`)."

// terminalAuthClient reports whether the client runs terminal authentication methods.
func terminalAuthClient(caps sdk.ClientCapabilities) bool {
	flag, _ := caps.Meta["terminal-auth"].(bool)
	return caps.Auth.Terminal || flag
}

// authMethods returns the methods initialize offers a client with caps.
func (c *conn) authMethods(caps sdk.ClientCapabilities) []sdk.AuthMethod {
	desc := "Uses the API key agentls finds (the settings, GEMINI_API_KEY or OPENAI_API_KEY, or the key `agentls login` stored); " +
		"without one, asks for it in a form and stores it readable by you alone."
	if !formClient(caps) {
		desc = "Uses the API key agentls finds (the settings, GEMINI_API_KEY or OPENAI_API_KEY, or the key `agentls login` stored). " + keyHint
	}
	methods := []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{Id: apiKeyMethod, Name: "API key", Description: sdk.Ptr(desc)}}}
	if !terminalAuthClient(caps) {
		return methods
	}
	login := &sdk.AuthMethodTerminalInline{
		Type:        "terminal",
		Id:          loginMethod,
		Name:        "Log in with an API key",
		Description: sdk.Ptr("Runs `agentls login`, which asks for the model's API key without showing it and stores it readable by you alone."),
		Args:        []string{"login"},
	}
	if flag, _ := caps.Meta["terminal-auth"].(bool); flag {
		// The launch hint of the clients that predate the terminal method type.
		exe, err := os.Executable()
		if err == nil {
			login.Meta = map[string]any{"terminal-auth": map[string]any{"command": exe, "args": []string{"login"}, "label": "agentls login"}}
		}
	}
	return append(methods, sdk.AuthMethod{Terminal: login})
}

// configDir is the user's configuration directory.
func (c *conn) configDir() (string, error) {
	if c.srv.o.ConfigDir != "" {
		return c.srv.o.ConfigDir, nil
	}
	return settings.ConfigDir()
}

// provider returns the type of the user's provider ("" for Gemini) and the key the
// user's settings give it.
func (c *conn) provider() (typ, key string) {
	dir, err := c.configDir()
	if err != nil {
		return "", ""
	}
	l, err := settings.LoadWith(dir, "", settings.Options{GeminiDir: c.srv.o.GeminiDir})
	if err != nil {
		return "", ""
	}
	return l.Settings.Provider.Type, l.Settings.Provider.APIKey
}

// hasKey reports whether agentls finds a model's key: in the environment, the user's
// settings or the key store.
func (c *conn) hasKey() bool {
	for _, v := range keyVars {
		if c.srv.o.Getenv(v) != "" {
			return true
		}
	}
	typ, key := c.provider()
	if key != "" || typ == "scripted" {
		return true
	}
	dir, err := c.configDir()
	if err != nil {
		return false
	}
	keys, err := settings.LoadKeys(dir)
	if err != nil {
		c.log.Warn("the stored API keys", "error", err)
		return false
	}
	return keys.For(typ) != ""
}

// authRequired is the auth_required error of a request that needs a key, with the
// methods in its data. (The schema defines the code, -32000, but no data; the methods
// are those of initialize.)
func (c *conn) authRequired(msg string) *sdk.RequestError {
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	return &sdk.RequestError{Code: codeAuthRequired, Message: msg, Data: map[string]any{"authMethods": c.authMethods(caps)}}
}

// Authenticate succeeds when agentls finds a key, whichever method the client names
// (clients set up for Gemini CLI send its ids: gemini-api-key, oauth-personal,
// vertex-ai). Otherwise, for the API key method, a client that answers forms is asked
// for the key, which is stored; else it fails with auth_required, saying how to give
// one. (The terminal method is the client's to run: it does not call authenticate.)
func (c *conn) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	id := c.authIDs.take()
	found := c.hasKey()
	c.log.Info("authenticate", "method", p.MethodId, "key", found)
	if found {
		return sdk.AuthenticateResponse{}, nil
	}
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	if p.MethodId != apiKeyMethod || !formClient(caps) || id == nil {
		return sdk.AuthenticateResponse{}, c.authRequired(keyHint)
	}
	if err := c.askKey(ctx, id); err != nil {
		return sdk.AuthenticateResponse{}, err
	}
	return sdk.AuthenticateResponse{}, nil
}

// keyField is the field of the form that asks for the key.
const keyField = "apiKey"

// askKey asks the user for the provider's key in a form tied to the request id and
// stores it.
func (c *conn) askKey(ctx context.Context, id json.RawMessage) error {
	typ, _ := c.provider()
	name, page := "Gemini", "https://aistudio.google.com/apikey"
	if typ == settings.ProviderOpenAI {
		name, page = "OpenAI-compatible", "the provider's console"
	}
	dir, err := c.configDir()
	if err != nil {
		return failed("%v", err)
	}
	form := &sdk.UnstableCreateElicitationForm{
		Message: fmt.Sprintf("agentls needs a %s API key (from %s). It is stored in %s, readable by you alone; `agentls logout` removes it.",
			name, page, filepath.Join(dir, settings.KeysFile)),
		RequestedSchema: sdk.UnstableElicitationSchema{
			Type:       sdk.UnstableElicitationSchemaTypeObject,
			Properties: map[string]any{keyField: map[string]any{"type": "string", "title": name + " API key"}},
			Required:   []string{keyField},
		},
		Meta: map[string]any{scopeMeta: map[string]any{"requestId": id}},
	}
	c.log.Info("elicitation/create", "for", "authenticate", "provider", name)
	resp, err := c.sdk.UnstableCreateElicitation(ctx, sdk.UnstableCreateElicitationRequest{Form: form})
	switch {
	case err != nil:
		return c.authRequired(fmt.Sprintf("the form for the API key failed: %v. %s", err, keyHint))
	case resp.Accept == nil || resp.Accept.Action != "accept":
		return c.authRequired("no API key was given. " + keyHint)
	}
	key, _ := resp.Accept.Content[keyField].(string)
	if strings.TrimSpace(key) == "" {
		return c.authRequired("the form's API key is empty. " + keyHint)
	}
	if err := settings.SaveKey(dir, typ, key); err != nil {
		return invalidParams("%v", err)
	}
	c.log.Info("authenticate: the API key is stored", "file", filepath.Join(dir, settings.KeysFile))
	return nil
}

// UnstableLogout removes the keys agentls login or authenticate stored. Keys in the
// environment or the settings are not agentls's to remove; live sessions keep the
// model client they have.
func (c *conn) UnstableLogout(_ context.Context, _ sdk.UnstableLogoutRequest) (sdk.UnstableLogoutResponse, error) {
	dir, err := c.configDir()
	if err != nil {
		return sdk.UnstableLogoutResponse{}, failed("%v", err)
	}
	had, err := settings.RemoveKeys(dir)
	if err != nil {
		return sdk.UnstableLogoutResponse{}, failed("%v", err)
	}
	c.log.Info("logout", "removed", had)
	return sdk.UnstableLogoutResponse{}, nil
}

// authIDs are the ids of the authenticate requests read and not yet answered, in
// order: the SDK does not hand a request's id to its handler, which needs it to scope
// the form it asks the key with.
type authIDs struct {
	mu  sync.Mutex
	ids []json.RawMessage
}

// see records the id of line, a JSON-RPC message, when it is an authenticate request.
func (a *authIDs) see(line []byte) {
	if !bytes.Contains(line, []byte(`"authenticate"`)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "authenticate" || len(m.ID) == 0 {
		return
	}
	a.mu.Lock()
	a.ids = append(a.ids, m.ID)
	a.mu.Unlock()
}

// take returns the id of the oldest authenticate request not yet taken, or nil.
func (a *authIDs) take() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ids) == 0 {
		return nil
	}
	id := a.ids[0]
	a.ids = a.ids[1:]
	return id
}

// watchAuth is the input on its way to the SDK's connection: whole lines, whose
// authenticate requests' ids it records in ids.
type watchAuth struct {
	w   io.Writer
	ids *authIDs
}

func (w watchAuth) Write(p []byte) (int, error) {
	w.ids.see(p)
	return w.w.Write(p)
}
