package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/testutil"
)

// oauthServers are an MCP server (the kit's tools) that wants a bearer token, and its
// OAuth authorization server, on two loopback origins: discovery from the 401's
// WWW-Authenticate, dynamic registration, PKCE with S256, the resource parameter and
// refresh are checked as the MCP authorization spec has them.
type oauthServers struct {
	t        *testing.T
	as, rs   *httptest.Server
	endpoint string // the MCP endpoint: rs.URL + "/mcp"

	mu          sync.Mutex
	wrongState  bool // the authorization endpoint returns another state
	expiresIn   int  // seconds; 0 means 3600
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

func newOAuthServers(t *testing.T, sse bool) *oauthServers {
	o := &oauthServers{t: t, codes: map[string]codeGrant{}, access: map[string]bool{}, refresh: map[string]bool{}}
	o.as = httptest.NewServer(http.HandlerFunc(o.serveAS))
	t.Cleanup(o.as.Close)
	srv := newKitServer()
	get := func(*http.Request) *sdk.Server { return srv }
	var mcpHandler http.Handler = sdk.NewStreamableHTTPHandler(get, nil)
	if sse {
		mcpHandler = sdk.NewSSEHandler(get, nil)
	}
	o.rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			writeJSON(w, map[string]any{"resource": o.endpoint, "authorization_servers": []string{o.as.URL}})
			return
		}
		o.mu.Lock()
		authz := r.Header.Get("Authorization")
		o.bearers = append(o.bearers, authz)
		ok := o.access[strings.TrimPrefix(authz, "Bearer ")]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, o.rs.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(o.rs.Close)
	o.endpoint = o.rs.URL + "/mcp"
	return o
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (o *oauthServers) refuse(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.badRequests = append(o.badRequests, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": msg})
}

func (o *oauthServers) serveAS(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": o.as.URL, "authorization_endpoint": o.as.URL + "/authorize",
			"token_endpoint": o.as.URL + "/token", "registration_endpoint": o.as.URL + "/register",
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
		if q.Get("resource") != o.endpoint {
			o.refuse(w, "resource %q, want %q", q.Get("resource"), o.endpoint)
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

// browser is an AuthorizeFunc that does what a person's browser does once they
// consent: it follows the authorization URL's redirects, the last to agentls's loopback
// listener. It records the URLs it was given.
type browser struct {
	mu   sync.Mutex
	urls []string
}

func (b *browser) open(ctx context.Context, _ string, authURL string) error {
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

func (b *browser) opened() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.urls)
}

func TestOAuthFlow(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "sse"}[sse], func(t *testing.T) {
			o := newOAuthServers(t, sse)
			dir := t.TempDir()
			var logs testutil.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			b := &browser{}
			cfg := ServerConfig{URL: o.endpoint, Trust: true}
			if sse {
				cfg.Type = "sse"
			}
			m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: dir,
				Authorize: b.open, AutoAuthorize: true, Logger: logger})
			requireState(t, m, "gh", StateConnected)
			if r := mustCall(t, m, "gh__echo", `{"message":"authorized"}`); r.Output != "echo: authorized" {
				t.Errorf("echo: %q", r.Output)
			}
			if b.opened() != 1 {
				t.Errorf("the browser was opened %d times, want 1", b.opened())
			}
			o.mu.Lock()
			bad, redirects := o.badRequests, o.redirects
			o.mu.Unlock()
			if len(bad) > 0 {
				t.Errorf("the OAuth servers refused: %v", bad)
			}
			for _, r := range redirects {
				if !strings.HasPrefix(r, "http://127.0.0.1:") {
					t.Errorf("registered redirect URI %q, want one on 127.0.0.1", r)
				}
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
			if len(files) != 1 {
				t.Fatalf("token files: %v", files)
			}
			fi, err := os.Stat(files[0])
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("token file mode: %v %v", fi.Mode(), err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			if strings.Contains(out, "access-token-") || strings.Contains(out, "refresh-token-") {
				t.Errorf("a token reached the log:\n%s", out)
			}

			// The next run uses the stored token: no browser.
			b2 := &browser{}
			m2 := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: dir, Authorize: b2.open})
			requireState(t, m2, "gh", StateConnected)
			mustCall(t, m2, "gh__echo", `{"message":"again"}`)
			if b2.opened() != 0 {
				t.Errorf("a stored token still opened the browser")
			}
		})
	}
}

func TestOAuthNeedsAuthorizationUntilAsked(t *testing.T) {
	o := newOAuthServers(t, false)
	b := &browser{}
	cfg := ServerConfig{URL: o.endpoint, Trust: true}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: t.TempDir(), Authorize: b.open})
	st := requireState(t, m, "gh", StateError)
	if !strings.Contains(st.Error, "needs authorization: run `agentls mcp auth gh`") {
		t.Errorf("status = %q", st.Error)
	}
	if b.opened() != 0 {
		t.Fatalf("the browser opened without being asked")
	}
	if err := m.Authorize(t.Context(), "gh"); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	requireState(t, m, "gh", StateConnected)
	mustCall(t, m, "gh__echo", `{"message":"x"}`)

	// Logout forgets the token: the server needs authorization again.
	had, err := m.Logout("gh")
	if err != nil || !had {
		t.Fatalf("Logout = %v, %v", had, err)
	}
	if err := m.Reconnect(t.Context(), "gh"); err == nil {
		t.Errorf("Reconnect after Logout connected")
	}
	st = requireState(t, m, "gh", StateError)
	if !strings.Contains(st.Error, "needs authorization") {
		t.Errorf("after logout: %q", st.Error)
	}
	if had, _ := m.Logout("gh"); had {
		t.Errorf("a second Logout found a token")
	}
}

// A workspace's settings that give a server the name of the user's authorized server,
// with another URL, never get its token.
func TestOAuthTokenStaysWithItsServer(t *testing.T) {
	o := newOAuthServers(t, false)
	dir := t.TempDir()
	b := &browser{}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.endpoint}}, TokenDir: dir, Authorize: b.open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)

	evil := newOAuthServers(t, false)
	m2 := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: evil.endpoint}}, TokenDir: dir})
	requireState(t, m2, "gh", StateError)
	evil.mu.Lock()
	defer evil.mu.Unlock()
	if len(evil.bearers) == 0 {
		t.Fatal("the other server saw no request")
	}
	for _, h := range evil.bearers {
		if h != "" {
			t.Errorf("the other server got Authorization %q", h)
		}
	}
}

// The transport adds the token to the server's origin only: an SSE endpoint event or a
// redirect naming another origin gets none.
func TestOAuthTokenOnlyToItsOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	o := newOAuthServers(t, false)
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.endpoint}}, TokenDir: t.TempDir(),
		Authorize: (&browser{}).open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)
	client := m.httpClient(m.servers["gh"])
	for _, u := range []string{other.URL + "/messages", o.rs.URL + "/.well-known/oauth-protected-resource"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "" {
		t.Errorf("the other origin got Authorization %q", seen)
	}
}

func TestOAuthStateMismatch(t *testing.T) {
	o := newOAuthServers(t, false)
	o.wrongState = true
	dir := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.endpoint}}, TokenDir: dir,
		Authorize: (&browser{}).open, AutoAuthorize: true})
	st := requireState(t, m, "gh", StateError)
	if !strings.Contains(st.Error, "state mismatch") {
		t.Errorf("status = %q", st.Error)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("a token was stored: %v", files)
	}
}

func TestOAuthRefresh(t *testing.T) {
	o := newOAuthServers(t, false)
	// A token that expires within oauth2's early-refresh margin is refreshed before
	// its next use.
	o.expiresIn = 5
	dir := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.endpoint}}, TokenDir: dir,
		Authorize: (&browser{}).open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)
	mustCall(t, m, "gh__echo", `{"message":"x"}`)
	o.mu.Lock()
	refreshes, authorizes := o.refreshes, o.authorizes
	o.mu.Unlock()
	if refreshes == 0 || authorizes != 1 {
		t.Errorf("refreshes = %d, authorizations = %d; want refreshes and one authorization", refreshes, authorizes)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	var rec storedToken
	if err := json.Unmarshal(b, &rec); err != nil || rec.Token == nil {
		t.Fatalf("stored token: %v %s", err, b)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if want := fmt.Sprintf("access-token-%d-secret", o.n); rec.Token.AccessToken != want {
		t.Errorf("stored access token %q, want the refreshed %q", rec.Token.AccessToken, want)
	}
}

func TestOAuthConfigValidation(t *testing.T) {
	off := false
	for _, tc := range []struct {
		oauth *OAuthConfig
		want  string
	}{
		{&OAuthConfig{RedirectURI: "http://example.com/callback"}, "want an http URL on 127.0.0.1"},
		{&OAuthConfig{RedirectURI: "https://127.0.0.1/callback"}, "want an http URL on 127.0.0.1"},
		{&OAuthConfig{GrantType: "password"}, `"grantType" is "password"`},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x"}, `needs "clientId" and "clientSecret"`},
		{&OAuthConfig{ClientMetadataURL: "http://example.com/client.json"}, "want an https URL with a path"},
		{&OAuthConfig{RedirectURI: "http://127.0.0.1:8765/cb"}, ""},
		{&OAuthConfig{RedirectURI: "http://localhost:8765/cb", Enabled: &off}, ""},
	} {
		err := ServerConfig{URL: "https://mcp.example.com/mcp", OAuth: tc.oauth}.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: Validate() = %v, want %q", tc.oauth, err, tc.want)
		}
	}
	// An invalid block makes the server fail with the reason, and nothing else.
	m := startManager(t, Options{Servers: map[string]ServerConfig{"bad": {URL: "http://127.0.0.1:1/mcp",
		OAuth: &OAuthConfig{RedirectURI: "http://evil.example/cb"}}}})
	if st := requireState(t, m, "bad", StateError); !strings.Contains(st.Error, "redirectUri") {
		t.Errorf("status = %q", st.Error)
	}
}

// OAuth is off for a server whose settings send their own Authorization header, and for
// one with "enabled": false: a 401 is then an error, not a flow.
func TestOAuthOff(t *testing.T) {
	o := newOAuthServers(t, false)
	off := false
	b := &browser{}
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"hdr": {URL: o.endpoint, Headers: map[string]string{"Authorization": "Bearer mine"}},
		"off": {URL: o.endpoint, OAuth: &OAuthConfig{Enabled: &off}},
	}, TokenDir: t.TempDir(), Authorize: b.open, AutoAuthorize: true})
	for _, name := range []string{"hdr", "off"} {
		st := requireState(t, m, name, StateError)
		if strings.Contains(st.Error, "needs authorization") {
			t.Errorf("%s: %q", name, st.Error)
		}
		if err := m.Authorize(t.Context(), name); err == nil || !strings.Contains(err.Error(), "does not use OAuth") {
			t.Errorf("%s: Authorize = %v", name, err)
		}
	}
	if b.opened() != 0 {
		t.Errorf("the browser opened")
	}
}
