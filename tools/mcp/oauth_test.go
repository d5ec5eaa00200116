package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/testutil"
)

// newOAuthServers starts the kit's tools behind OAuth (see testutil.OAuthServers).
func newOAuthServers(t *testing.T, sse bool) *testutil.OAuthServers {
	srv := newKitServer()
	get := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler = sdk.NewStreamableHTTPHandler(get, nil)
	if sse {
		h = sdk.NewSSEHandler(get, nil)
	}
	return testutil.NewOAuthServers(t, h)
}

func TestOAuthFlow(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "sse"}[sse], func(t *testing.T) {
			o := newOAuthServers(t, sse)
			dir := t.TempDir()
			var logs testutil.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			b := &testutil.Browser{}
			cfg := ServerConfig{URL: o.Endpoint, Trust: true}
			if sse {
				cfg.Type = "sse"
			}
			m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: dir,
				Authorize: b.Open, AutoAuthorize: true, Logger: logger})
			requireState(t, m, "gh", StateConnected)
			if r := mustCall(t, m, "gh__echo", `{"message":"authorized"}`); r.Output != "echo: authorized" {
				t.Errorf("echo: %q", r.Output)
			}
			if b.Opened() != 1 {
				t.Errorf("the browser was opened %d times, want 1", b.Opened())
			}
			st := o.Stats()
			bad, redirects := st.Refused, st.Redirects
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
			b2 := &testutil.Browser{}
			m2 := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: dir, Authorize: b2.Open})
			requireState(t, m2, "gh", StateConnected)
			mustCall(t, m2, "gh__echo", `{"message":"again"}`)
			if b2.Opened() != 0 {
				t.Errorf("a stored token still opened the browser")
			}
		})
	}
}

func TestOAuthNeedsAuthorizationUntilAsked(t *testing.T) {
	t.Parallel()
	o := newOAuthServers(t, false)
	b := &testutil.Browser{}
	cfg := ServerConfig{URL: o.Endpoint, Trust: true}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: t.TempDir(), Authorize: b.Open})
	st := requireState(t, m, "gh", StateError)
	if !strings.Contains(st.Error, "needs authorization: run `agentls mcp auth gh`") {
		t.Errorf("status = %q", st.Error)
	}
	if b.Opened() != 0 {
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

// A token stored by another process (`agentls mcp auth` in a terminal) is taken up on
// the server's next connection.
func TestOAuthTokenFromAnotherProcess(t *testing.T) {
	t.Parallel()
	o := newOAuthServers(t, false)
	dir := t.TempDir()
	cfg := map[string]ServerConfig{"gh": {URL: o.Endpoint, Trust: true}}
	editor := startManager(t, Options{Servers: cfg, TokenDir: dir})
	requireState(t, editor, "gh", StateError)
	terminal := startManager(t, Options{Servers: cfg, TokenDir: dir, Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
	requireState(t, terminal, "gh", StateConnected)
	if err := editor.Reconnect(t.Context(), "gh"); err != nil {
		t.Fatalf("Reconnect: %v", err)
	}
	mustCall(t, editor, "gh__echo", `{"message":"x"}`)
}

// A workspace's settings that give a server the name of the user's authorized server,
// with another URL, never get its token.
func TestOAuthTokenStaysWithItsServer(t *testing.T) {
	t.Parallel()
	o := newOAuthServers(t, false)
	dir := t.TempDir()
	b := &testutil.Browser{}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint}}, TokenDir: dir, Authorize: b.Open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)

	evil := newOAuthServers(t, false)
	m2 := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: evil.Endpoint}}, TokenDir: dir})
	requireState(t, m2, "gh", StateError)
	bearers := evil.Stats().Bearers
	if len(bearers) == 0 {
		t.Fatal("the other server saw no request")
	}
	for _, h := range bearers {
		if h != "" {
			t.Errorf("the other server got Authorization %q", h)
		}
	}
}

// The transport adds the token to the server's origin only: an SSE endpoint event or a
// redirect naming another origin gets none.
func TestOAuthTokenOnlyToItsOrigin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	o := newOAuthServers(t, false)
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint}}, TokenDir: t.TempDir(),
		Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)
	client := m.httpClient(m.servers["gh"])
	for _, u := range []string{other.URL + "/messages", o.RS.URL + "/.well-known/oauth-protected-resource"} {
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
	t.Parallel()
	o := newOAuthServers(t, false)
	o.SetWrongState()
	dir := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint}}, TokenDir: dir,
		Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
	st := requireState(t, m, "gh", StateError)
	if !strings.Contains(st.Error, "state mismatch") {
		t.Errorf("status = %q", st.Error)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("a token was stored: %v", files)
	}
}

func TestOAuthRefresh(t *testing.T) {
	t.Parallel()
	o := newOAuthServers(t, false)
	// A token that expires within oauth2's early-refresh margin is refreshed before
	// its next use.
	o.SetExpiresIn(5)
	dir := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint}}, TokenDir: dir,
		Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)
	mustCall(t, m, "gh__echo", `{"message":"x"}`)
	stats := o.Stats()
	refreshes, authorizes := stats.Refreshes, stats.Authorizes
	if refused := stats.Refused; len(refused) > 0 {
		t.Errorf("the OAuth servers refused: %v", refused)
	}
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
	if want := o.Stats().LastAccess; rec.Token.AccessToken != want {
		t.Errorf("stored access token %q, want the refreshed %q", rec.Token.AccessToken, want)
	}
}

func TestOAuthConfigValidation(t *testing.T) {
	t.Parallel()
	off := false
	for _, tc := range []struct {
		oauth *OAuthConfig
		want  string
	}{
		{&OAuthConfig{RedirectURI: "http://example.com/callback"}, "want an http URL on 127.0.0.1"},
		{&OAuthConfig{RedirectURI: "https://127.0.0.1/callback"}, "want an http URL on 127.0.0.1"},
		{&OAuthConfig{GrantType: "password"}, `"grantType" is "password"`},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x"}, `needs "clientId" and one of "clientSecret" and "privateKeyFile"`},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x", ClientSecret: "s", PrivateKeyFile: "/k.pem"}, `one of "clientSecret" and "privateKeyFile"`},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x", PrivateKeyFile: "/k.pem"}, ""},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x", PrivateKeyFile: "/k.pem", SigningAlgorithm: "HS256"}, `"signingAlgorithm" is "HS256"`},
		{&OAuthConfig{PrivateKeyFile: "/k.pem"}, `"privateKeyFile" is for "grantType" "client_credentials"`},
		{&OAuthConfig{GrantType: "client_credentials", ClientID: "x", ClientSecret: "s", TokenURL: "https://as/t", AuthorizationURL: "https://as/a"}, `takes no "authorizationUrl"`},
		{&OAuthConfig{ClientMetadataURL: "http://example.com/client.json"}, "want an https URL with a path"},
		{&OAuthConfig{ClientID: "x", AuthorizationURL: "https://as.example/authorize"}, `"authorizationUrl" and "tokenUrl" go together`},
		{&OAuthConfig{AuthorizationURL: "https://as.example/authorize", TokenURL: "https://as.example/token"}, `need "clientId" or "registrationUrl"`},
		{&OAuthConfig{AuthorizationURL: "https://as.example/authorize", TokenURL: "https://as.example/token", RegistrationURL: "https://as.example/register"}, ""},
		{&OAuthConfig{AuthorizationURL: "https://as.example/authorize", TokenURL: "https://as.example/token", RegistrationURL: "http://as.example/register"}, `"registrationUrl" is "http://as.example/register"`},
		{&OAuthConfig{ClientID: "x", RegistrationURL: "https://as.example/register"}, `"registrationUrl" goes with`},
		{&OAuthConfig{ClientID: "x", AuthorizationURL: "https://as.example/authorize", TokenURL: "http://as.example/token"}, `"tokenUrl" is "http://as.example/token"; want an https URL`},
		{&OAuthConfig{ClientID: "x", AuthorizationURL: "javascript:alert(1)", TokenURL: "https://as.example/token"}, `"authorizationUrl" is "javascript:alert(1)"`},
		{&OAuthConfig{ClientID: "x", AuthorizationURL: "https://as.example/authorize", TokenURL: "http://127.0.0.1:9/token", Audiences: []string{"a"}, TokenParamName: "t"}, ""},
		{&OAuthConfig{ClientID: "x", Enterprise: &EnterpriseConfig{Issuer: "https://idp.example"}}, `"enterprise" needs "issuer" and "clientId"`},
		{&OAuthConfig{Enterprise: &EnterpriseConfig{Issuer: "https://idp.example", ClientID: "c"}}, `"enterprise" needs`},
		{&OAuthConfig{ClientID: "x", Enterprise: &EnterpriseConfig{Issuer: "http://idp.example", ClientID: "c"}}, `"enterprise.issuer" is "http://idp.example"`},
		{&OAuthConfig{ClientID: "x", Enterprise: &EnterpriseConfig{Issuer: "https://idp.example", ClientID: "c", TokenURL: "ftp://idp/t"}}, `"enterprise.tokenUrl"`},
		{&OAuthConfig{ClientID: "x", Enterprise: &EnterpriseConfig{Issuer: "https://idp.example", ClientID: "c", IDToken: "t", IDTokenCommand: "echo t"}}, `"idToken" or "idTokenCommand", not both`},
		{&OAuthConfig{ClientID: "x", Enterprise: &EnterpriseConfig{Issuer: "https://idp.example", ClientID: "c"}}, ""},
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
	t.Parallel()
	o := newOAuthServers(t, false)
	off := false
	b := &testutil.Browser{}
	m := startManager(t, Options{Servers: map[string]ServerConfig{
		"hdr": {URL: o.Endpoint, Headers: map[string]string{"Authorization": "Bearer mine"}},
		"off": {URL: o.Endpoint, OAuth: &OAuthConfig{Enabled: &off}},
	}, TokenDir: t.TempDir(), Authorize: b.Open, AutoAuthorize: true})
	for _, name := range []string{"hdr", "off"} {
		st := requireState(t, m, name, StateError)
		if strings.Contains(st.Error, "needs authorization") {
			t.Errorf("%s: %q", name, st.Error)
		}
		if err := m.Authorize(t.Context(), name); err == nil || !strings.Contains(err.Error(), "does not use OAuth") {
			t.Errorf("%s: Authorize = %v", name, err)
		}
	}
	if b.Opened() != 0 {
		t.Errorf("the browser opened")
	}
}

// TestOAuthStepUpWithoutAutoAuthorize is the editor's case: its manager starts no
// browser step by itself, but once the person authorized the server (here by the
// terminal's `agentls mcp auth`, another manager on the same token directory), a call
// refused with 403 insufficient_scope shows the authorization page for the wider scope
// and is retried. A server whose scopes never suffice gets at most maxStepUps of them,
// then its status says to run agentls mcp auth, which allows them again.
func TestOAuthStepUpWithoutAutoAuthorize(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(map[bool]string{false: "granted", true: "never"}[never], func(t *testing.T) {
			t.Parallel()
			srv := newKitServer()
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			var o *testutil.OAuthServers
			o = testutil.NewOAuthServers(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"tools/call"`)) && (never || o.Stats().Authorizes < 2) {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="write", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, o.RS.URL))
					http.Error(w, "insufficient scope", http.StatusForbidden)
					return
				}
				h.ServeHTTP(w, r)
			}))
			dir := t.TempDir()
			cfg := map[string]ServerConfig{"gh": {URL: o.Endpoint, Trust: true}}
			// The terminal's settings asked for the scope "read".
			terminal := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint, OAuth: &OAuthConfig{Scopes: []string{"read"}}}},
				TokenDir: dir, Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
			requireState(t, terminal, "gh", StateConnected)
			b := &testutil.Browser{}
			var mu sync.Mutex
			var pages []string
			editor := startManager(t, Options{Servers: cfg, TokenDir: dir, Authorize: func(ctx context.Context, server, u string) error {
				mu.Lock()
				pages = append(pages, u)
				mu.Unlock()
				return b.Open(ctx, server, u)
			}})
			requireState(t, editor, "gh", StateConnected)
			if !never {
				mustCall(t, editor, "gh__echo", `{"message":"x"}`)
				mu.Lock()
				defer mu.Unlock()
				if len(pages) != 1 {
					t.Fatalf("the editor showed %d authorization pages, want 1", len(pages))
				}
				// The scope granted before and the one the server names.
				u, err := url.Parse(pages[0])
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Fields(u.Query().Get("scope")); !slices.Contains(got, "read") || !slices.Contains(got, "write") {
					t.Errorf("the step-up asked for scopes %q, want read and write", got)
				}
				return
			}
			for range maxStepUps + 2 {
				if _, err := call(t.Context(), t, editor, "gh__echo", `{"message":"x"}`); err == nil {
					t.Fatal("a call the server refuses succeeded")
				}
			}
			if n := b.Opened(); n != maxStepUps {
				t.Errorf("the editor showed %d authorization pages, want %d", n, maxStepUps)
			}
			if st := editor.Statuses()[0]; !strings.Contains(st.Error, "needs a wider scope than granted") {
				t.Errorf("status %+v", st)
			}
			if err := editor.Authorize(t.Context(), "gh"); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if _, err := call(t.Context(), t, editor, "gh__echo", `{"message":"x"}`); err == nil {
				t.Fatal("a call the server refuses succeeded")
			}
			if n := b.Opened(); n != maxStepUps+1 {
				t.Errorf("after Authorize, %d authorization pages, want %d", n, maxStepUps+1)
			}
		})
	}
}

// TestSettingsIDToken: an enterprise block's idToken (an environment variable) and
// idTokenCommand give the ID token; a failing command or one printing nothing is an
// error naming the setting; without either, the browser login is left to get one.
func TestSettingsIDToken(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"IDT": "token-from-env"}[k] }
	tests := []struct {
		name    string
		e       EnterpriseConfig
		want    string
		wantErr string
	}{
		{"variable", EnterpriseConfig{IDToken: "$IDT"}, "token-from-env", ""},
		{"literal", EnterpriseConfig{IDToken: " eyJ.x.y \n"}, "eyJ.x.y", ""},
		{"empty variable", EnterpriseConfig{IDToken: "$NONE"}, "", "enterprise.idToken \"$NONE\" is empty"},
		{"command", EnterpriseConfig{IDTokenCommand: "printf 'eyJ.a.b\\n'"}, "eyJ.a.b", ""},
		{"failing command", EnterpriseConfig{IDTokenCommand: "echo not logged in >&2; exit 3"}, "", "enterprise.idTokenCommand of srv: exit status 3: not logged in"},
		{"silent command", EnterpriseConfig{IDTokenCommand: "true"}, "", "printed no ID token"},
		{"two lines", EnterpriseConfig{IDTokenCommand: "echo a; echo b"}, "", "printed no ID token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := settingsIDToken(&tt.e, getenv)
			got, err := f(context.Background(), "srv")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("= %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if settingsIDToken(&EnterpriseConfig{}, getenv) != nil {
		t.Error("no idToken or idTokenCommand: want nil (the browser login)")
	}
}
