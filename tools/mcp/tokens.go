package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// DefaultTokenDir returns where OAuth tokens of MCP servers are kept:
// $XDG_STATE_HOME/agentls/mcp-tokens (~/.local/state/agentls/mcp-tokens), outside every
// workspace.
func DefaultTokenDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "agentls", "mcp-tokens"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the MCP token directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "agentls", "mcp-tokens"), nil
}

// storedToken is one server's token file. The server's URL is part of the file's key and
// is checked again on load, so that settings naming the same server with another URL
// never get its token.
type storedToken struct {
	Server       string   `json:"server"`
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	TokenURL     string   `json:"tokenUrl"`
	AuthStyle    int      `json:"authStyle,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// Resource is the resource parameter of the token requests (RFC 8707).
	Resource string `json:"resource,omitempty"`
	// Audience is the audience parameter of the settings' audiences (Gemini CLI's).
	Audience string        `json:"audience,omitempty"`
	Token    *oauth2.Token `json:"token"`
}

// tokenStore keeps tokens, one file per server name and URL, mode 0600. A nil store, or
// one without a directory, keeps nothing.
type tokenStore struct {
	dir string
}

// path returns the file of the server called name at serverURL.
func (t *tokenStore) path(name, serverURL string) string {
	sum := sha256.Sum256([]byte(name + "\x00" + serverURL))
	return filepath.Join(t.dir, hex.EncodeToString(sum[:12])+".json")
}

// load returns the stored token of the server, or nil when there is none.
func (t *tokenStore) load(name, serverURL string) (*storedToken, error) {
	if t == nil || t.dir == "" {
		return nil, nil
	}
	b, err := os.ReadFile(t.path(name, serverURL))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the stored token: %w", err)
	}
	var rec storedToken
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("reading the stored token: %w", err)
	}
	if rec.Server != serverURL || rec.Token == nil {
		return nil, nil
	}
	return &rec, nil
}

// save writes the token of the server called name, replacing the file atomically.
func (t *tokenStore) save(name string, rec storedToken) error {
	if t == nil || t.dir == "" {
		return nil
	}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	f, err := os.CreateTemp(t.dir, ".token-*")
	if err != nil {
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	if err := os.Rename(f.Name(), t.path(name, rec.Server)); err != nil {
		return fmt.Errorf("storing the MCP OAuth token: %w", err)
	}
	return nil
}

// remove deletes the stored token of the server; it reports whether there was one.
func (t *tokenStore) remove(name, serverURL string) (bool, error) {
	if t == nil || t.dir == "" {
		return false, nil
	}
	err := os.Remove(t.path(name, serverURL))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing the MCP OAuth token: %w", err)
	}
	return true, nil
}

// refresher gets new tokens with a refresh token, sending the resource parameter (RFC
// 8707) as the MCP authorization spec asks of every token request; oauth2's own
// refresh cannot add it.
type refresher struct {
	cfg      *oauth2.Config
	resource string
	audience string
	client   *http.Client

	mu      sync.Mutex
	refresh string
}

func (r *refresher) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refresh == "" {
		return nil, errors.New("the token expired and there is no refresh token")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.refresh}}
	if r.resource != "" {
		form.Set("resource", r.resource)
	}
	if r.audience != "" {
		form.Set("audience", r.audience)
	}
	basic := r.cfg.Endpoint.AuthStyle == oauth2.AuthStyleInHeader && r.cfg.ClientSecret != ""
	if !basic {
		form.Set("client_id", r.cfg.ClientID)
		if r.cfg.ClientSecret != "" {
			form.Set("client_secret", r.cfg.ClientSecret)
		}
	}
	var secret *[2]string
	if basic {
		secret = &[2]string{r.cfg.ClientID, r.cfg.ClientSecret}
	}
	tok, err := tokenRequest(context.Background(), r.client, r.cfg.Endpoint.TokenURL, form, secret)
	if err != nil {
		return nil, fmt.Errorf("refreshing the token: %w", err)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = r.refresh // the server keeps the one it gave
	}
	r.refresh = tok.RefreshToken
	return tok, nil
}
