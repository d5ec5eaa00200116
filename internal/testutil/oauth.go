package testutil

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// OAuthServers are an MCP server that wants a bearer token, and its OAuth
// authorization server, on two loopback origins: discovery from the 401's
// WWW-Authenticate, dynamic registration, PKCE with S256, the resource parameter and
// refresh are checked as the MCP authorization spec has them.
type OAuthServers struct {
	// AS is the authorization server, RS the MCP server; Endpoint is RS's MCP URL.
	AS, RS   *httptest.Server
	Endpoint string

	mu          sync.Mutex
	wrongState  bool
	expiresIn   int
	codes       map[string]codeGrant
	access      map[string]bool
	refresh     map[string]bool
	n           int
	refreshes   int
	authorizes  int
	redirects   []string
	badRequests []string // what the servers refused, and why
	bearers     []string // the Authorization headers the MCP server saw
}

type codeGrant struct{ challenge, resource, redirect string }

// NewOAuthServers starts the servers, which serve mcp (an MCP server's HTTP handler) to
// requests with a token they issued; the test's end stops them.
func NewOAuthServers(t *testing.T, mcp http.Handler) *OAuthServers {
	o := &OAuthServers{codes: map[string]codeGrant{}, access: map[string]bool{}, refresh: map[string]bool{}}
	o.AS = httptest.NewServer(http.HandlerFunc(o.serveAS))
	t.Cleanup(o.AS.Close)
	o.RS = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			writeJSON(w, map[string]any{"resource": o.Endpoint, "authorization_servers": []string{o.AS.URL}})
			return
		}
		o.mu.Lock()
		authz := r.Header.Get("Authorization")
		o.bearers = append(o.bearers, authz)
		ok := o.access[strings.TrimPrefix(authz, "Bearer ")]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, o.RS.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcp.ServeHTTP(w, r)
	}))
	t.Cleanup(o.RS.Close)
	o.Endpoint = o.RS.URL + "/mcp"
	return o
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (o *OAuthServers) refuse(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.badRequests = append(o.badRequests, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": msg})
}

func (o *OAuthServers) serveAS(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": o.AS.URL, "authorization_endpoint": o.AS.URL + "/authorize",
			"token_endpoint": o.AS.URL + "/token", "registration_endpoint": o.AS.URL + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"}})
	case "/register":
		var meta struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&meta)
		o.redirects = append(o.redirects, meta.RedirectURIs...)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "client-1", "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		o.authorizes++
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || redirect.Scheme != "http" || net.ParseIP(redirect.Hostname()) == nil || !net.ParseIP(redirect.Hostname()).IsLoopback() {
			o.refuse(w, "redirect_uri %q is not a loopback address", q.Get("redirect_uri"))
			return
		}
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			o.refuse(w, "no S256 code challenge")
			return
		}
		if q.Get("resource") != o.Endpoint {
			o.refuse(w, "resource %q, want %q", q.Get("resource"), o.Endpoint)
			return
		}
		o.n++
		code := fmt.Sprintf("code-%d", o.n)
		o.codes[code] = codeGrant{q.Get("code_challenge"), q.Get("resource"), q.Get("redirect_uri")}
		state := q.Get("state")
		if o.wrongState {
			state = "forged"
		}
		v := redirect.Query()
		v.Set("code", code)
		v.Set("state", state)
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		f := r.PostForm
		switch f.Get("grant_type") {
		case "authorization_code":
			g, ok := o.codes[f.Get("code")]
			delete(o.codes, f.Get("code"))
			sum := sha256.Sum256([]byte(f.Get("code_verifier")))
			switch {
			case !ok:
				o.refuse(w, "unknown code")
				return
			case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
				o.refuse(w, "code_verifier does not match the challenge")
				return
			case f.Get("resource") != g.resource:
				o.refuse(w, "token request resource %q, want %q", f.Get("resource"), g.resource)
				return
			case f.Get("redirect_uri") != g.redirect:
				o.refuse(w, "redirect_uri differs from the authorization request's")
				return
			}
		case "refresh_token":
			if !o.refresh[f.Get("refresh_token")] {
				o.refuse(w, "unknown refresh token")
				return
			}
			if f.Get("resource") != o.Endpoint {
				o.refuse(w, "refresh request resource %q, want %q", f.Get("resource"), o.Endpoint)
				return
			}
			o.refreshes++
		default:
			o.refuse(w, "grant_type %q", f.Get("grant_type"))
			return
		}
		o.n++
		at, rt := fmt.Sprintf("access-token-%d-secret", o.n), fmt.Sprintf("refresh-token-%d-secret", o.n)
		o.access[at], o.refresh[rt] = true, true
		exp := o.expiresIn
		if exp == 0 {
			exp = 3600
		}
		writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": exp})
	default:
		http.NotFound(w, r)
	}
}

// Browser does what a person's browser does once they
// consent: it follows the authorization URL's redirects, the last to agentls's loopback
// listener. Its Open is an mcp.AuthorizeFunc; it records the URLs it was given.
type Browser struct {
	mu   sync.Mutex
	urls []string
}

// Open follows authURL's redirects.
func (b *Browser) Open(ctx context.Context, _ string, authURL string) error {
	b.mu.Lock()
	b.urls = append(b.urls, authURL)
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Opened returns how many times Open was called.
func (b *Browser) Opened() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.urls)
}

// SetWrongState makes the authorization endpoint redirect with a state of its own.
func (o *OAuthServers) SetWrongState() { o.mu.Lock(); o.wrongState = true; o.mu.Unlock() }

// SetExpiresIn sets the lifetime of the tokens issued from now on, in seconds.
func (o *OAuthServers) SetExpiresIn(s int) { o.mu.Lock(); o.expiresIn = s; o.mu.Unlock() }

// Stats are counts of what the servers saw.
type Stats struct {
	// Authorizes and Refreshes count authorization requests and refresh grants.
	Authorizes, Refreshes int
	// LastAccess is the last access token issued.
	LastAccess string
	// Refused lists what the servers refused, and why; Redirects the registered
	// redirect URIs; Bearers the Authorization headers the MCP server saw.
	Refused, Redirects, Bearers []string
}

// Stats returns what the servers saw so far.
func (o *OAuthServers) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Stats{Authorizes: o.authorizes, Refreshes: o.refreshes, LastAccess: fmt.Sprintf("access-token-%d-secret", o.n),
		Refused: slices.Clone(o.badRequests), Redirects: slices.Clone(o.redirects), Bearers: slices.Clone(o.bearers)}
}
