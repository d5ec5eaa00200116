package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/testutil"
)

// newOAuthServersWith starts the kit's tools behind OAuth servers varied by opts.
func newOAuthServersWith(t *testing.T, opts testutil.OAuthOptions) *testutil.OAuthServers {
	srv := newKitServer()
	return testutil.NewOAuthServersWith(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil), opts)
}

// The 2025-03-26 spec's servers: no protected resource metadata, the authorization
// server's metadata at the MCP server's origin. Its issuer may be another URL of that
// origin (the origin vouches for it); one of another origin, or any mismatch where
// protected resource metadata names the authorization server, is refused (RFC 8414
// section 3.3).
func TestOAuthLegacyMetadataIssuer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   testutil.OAuthOptions
		issuer func(o *testutil.OAuthServers) string // nil: the options'
		want   string                                // "" connects; else in the status
	}{
		{name: "issuer under the origin", opts: testutil.OAuthOptions{LegacyPrefix: "/oauth"}},
		{name: "issuer is the origin", opts: testutil.OAuthOptions{LegacyPrefix: "/oauth"},
			issuer: func(o *testutil.OAuthServers) string { return o.RS.URL }},
		{name: "issuer on another origin", opts: testutil.OAuthOptions{LegacyPrefix: "/oauth", Issuer: "http://127.0.0.1:1/oauth"},
			want: "does not match issuer URL"},
		{name: "issuer on another scheme", opts: testutil.OAuthOptions{LegacyPrefix: "/oauth"},
			issuer: func(o *testutil.OAuthServers) string {
				return strings.Replace(o.RS.URL, "http:", "https:", 1) + "/oauth"
			},
			want: "does not match issuer URL"},
		{name: "resource metadata names the authorization server", issuer: func(o *testutil.OAuthServers) string { return o.AS.URL + "/oauth" },
			want: "does not match issuer URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOAuthServersWith(t, tc.opts)
			if tc.issuer != nil {
				o.SetIssuer(tc.issuer(o))
			}
			b := &testutil.Browser{}
			m := startManager(t, Options{Servers: map[string]ServerConfig{"old": {URL: o.Endpoint}}, TokenDir: t.TempDir(),
				Authorize: b.Open, AutoAuthorize: true})
			if tc.want != "" {
				st := requireState(t, m, "old", StateError)
				if !strings.Contains(st.Error, tc.want) {
					t.Errorf("status = %q, want %q", st.Error, tc.want)
				}
				if b.Opened() != 0 {
					t.Errorf("the browser opened")
				}
				return
			}
			requireState(t, m, "old", StateConnected)
			mustCall(t, m, "old__echo", `{"message":"x"}`)
			if st := o.Stats(); len(st.Refused) > 0 || st.Authorizes != 1 {
				t.Errorf("refused %v, authorizations %d", st.Refused, st.Authorizes)
			}
		})
	}
}

// writeKey writes key as a PEM file of the given block type and returns its path.
func writeKey(t *testing.T, key crypto.Signer, kind string) string {
	var der []byte
	var err error
	switch kind {
	case "PRIVATE KEY":
		der, err = x509.MarshalPKCS8PrivateKey(key)
	case "EC PRIVATE KEY":
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	case "RSA PRIVATE KEY":
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The client-credentials grant with private_key_jwt: each key type signs an assertion
// the token endpoint verifies; no browser; the key never reaches the log.
func TestOAuthClientCredentialsJWT(t *testing.T) {
	t.Parallel()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, tc := range []struct {
		name     string
		key      crypto.Signer
		kind     string
		alg, kid string
	}{
		{"ES256 PKCS8 with kid", p256, "PRIVATE KEY", "", "key-1"},
		{"ES256 named", p256, "EC PRIVATE KEY", "ES256", ""},
		{"ES384 SEC1", p384, "EC PRIVATE KEY", "", ""},
		{"RS256 PKCS1", rsaKey, "RSA PRIVATE KEY", "RS256", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOAuthServersWith(t, testutil.OAuthOptions{ClientID: "svc", ClientKey: tc.key.Public()})
			path := writeKey(t, tc.key, tc.kind)
			var logs testutil.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			m := startManager(t, Options{Logger: logger, TokenDir: t.TempDir(), Servers: map[string]ServerConfig{"svc": {URL: o.Endpoint,
				OAuth: &OAuthConfig{GrantType: "client_credentials", ClientID: "svc", PrivateKeyFile: path, SigningAlgorithm: tc.alg, KeyID: tc.kid}}}})
			requireState(t, m, "svc", StateConnected)
			mustCall(t, m, "svc__echo", `{"message":"x"}`)
			if st := o.Stats(); len(st.Refused) > 0 {
				t.Errorf("refused: %v", st.Refused)
			}
			if kids := o.Kids(); len(kids) != 1 || kids[0] != tc.kid {
				t.Errorf("assertions' kids = %q, want one %q", kids, tc.kid)
			}
			b, _ := os.ReadFile(path)
			body := strings.Split(string(b), "\n")[1]
			if strings.Contains(logs.String(), body) || strings.Contains(logs.String(), "access-token-") {
				t.Errorf("key or token in the log:\n%s", logs.String())
			}
		})
	}
}

// Bad key settings: the server fails with what is wrong, and not the key's bytes.
func TestOAuthClientCredentialsJWTBadKey(t *testing.T) {
	t.Parallel()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := writeKey(t, p256, "PRIVATE KEY")
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "id.txt")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, alg, want string
	}{
		{filepath.Join(t.TempDir(), "missing.pem"), "", "no such file"},
		{"key.pem", "", "not an absolute path"},
		{junk, "", "the PRIVATE KEY block is not a valid key"},
		{notPEM, "", "no PEM private key"},
		{good, "ES384", `"signingAlgorithm" is "ES384", but the key`},
		{good, "RS256", `"signingAlgorithm" is "RS256", but the key`},
	} {
		m := startManager(t, Options{TokenDir: t.TempDir(), Servers: map[string]ServerConfig{"svc": {URL: "http://127.0.0.1:1/mcp",
			OAuth: &OAuthConfig{GrantType: "client_credentials", ClientID: "svc", PrivateKeyFile: tc.path, SigningAlgorithm: tc.alg}}}})
		st := requireState(t, m, "svc", StateError)
		if !strings.Contains(st.Error, tc.want) || strings.Contains(st.Error, "bm90IGEga2V5") {
			t.Errorf("%s %s: status = %q, want %q", tc.path, tc.alg, st.Error, tc.want)
		}
	}
}

// Enterprise-managed authorization: the ID token is exchanged at the identity
// provider for an ID-JAG for the server's authorization server and resource, which
// the authorization server takes, with the client's Basic authentication, for the
// server's token.
func TestOAuthEnterprise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		tokenURL bool // the identity provider's token endpoint in the settings
		idToken  string
		want     string
		login    bool // no EnterpriseIDToken: an OpenID Connect login in the browser
		noMeta   bool // an issuer without metadata
	}{
		{name: "exchange and grant", tokenURL: true, idToken: "id-token-of-ann"},
		{name: "token endpoint from the identity provider's metadata", idToken: "id-token-of-ann"},
		{name: "no metadata at the identity provider", idToken: "id-token-of-ann", noMeta: true, want: `has no metadata; set its "tokenUrl"`},
		{name: "refused ID token", tokenURL: true, idToken: "id-token-of-bob", want: "the token exchange at the identity provider"},
		{name: "login at the identity provider", login: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOAuthServersWith(t, testutil.OAuthOptions{IDToken: "id-token-of-ann", IdPClientID: "agentls-at-idp",
				ClientID: "agentls", ClientSecret: "s3cret"})
			e := &EnterpriseConfig{Issuer: o.IdPURL(), ClientID: "agentls-at-idp"}
			if tc.tokenURL {
				e.TokenURL = o.IdPURL() + "/token"
			}
			if tc.noMeta {
				e.Issuer = o.IdPURL() + "/nothing"
			}
			var asked []string
			var mu sync.Mutex
			b := &testutil.Browser{}
			opts := Options{TokenDir: t.TempDir(), AutoAuthorize: true, Authorize: b.Open,
				Servers: map[string]ServerConfig{"corp": {URL: o.Endpoint,
					OAuth: &OAuthConfig{ClientID: "agentls", ClientSecret: "$CORP_SECRET", Enterprise: e}}},
				EnterpriseIDToken: func(_ context.Context, server string) (string, error) {
					mu.Lock()
					asked = append(asked, server)
					mu.Unlock()
					return tc.idToken, nil
				},
				Getenv: func(k string) string { return map[string]string{"CORP_SECRET": "s3cret"}[k] }}
			if tc.login {
				opts.EnterpriseIDToken = nil
				asked = []string{"corp"}
			}
			m := startManager(t, opts)
			if tc.want != "" {
				if st := requireState(t, m, "corp", StateError); !strings.Contains(st.Error, tc.want) {
					t.Errorf("status = %q, want %q", st.Error, tc.want)
				}
				return
			}
			requireState(t, m, "corp", StateConnected)
			mustCall(t, m, "corp__echo", `{"message":"x"}`)
			if st := o.Stats(); len(st.Refused) > 0 {
				t.Errorf("refused: %v", st.Refused)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, []string{"corp"}) {
				t.Errorf("ID token asked for %q", asked)
			}
			if logins := map[bool]int{true: 1}[tc.login]; o.IdPLogins() != logins || b.Opened() != logins {
				t.Errorf("logins at the identity provider %d, browser opened %d; want %d", o.IdPLogins(), b.Opened(), logins)
			}
			// The next run takes the stored token: no ID token, no login.
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			opts.EnterpriseIDToken, opts.Authorize, opts.AutoAuthorize = nil, nil, false
			m2 := startManager(t, opts)
			requireState(t, m2, "corp", StateConnected)
			mustCall(t, m2, "corp__echo", `{"message":"again"}`)
		})
	}
}

// Gemini CLI's authorizationUrl and tokenUrl skip discovery; its audiences go with the
// authorization, token and refresh requests.
func TestOAuthEndpointsFromSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		audiences []string
		register  bool // no client ID: registered at the settings' registrationUrl
		// discovered: no endpoints in the settings
		discovered bool
		want       []string
	}{
		{name: "no audiences"},
		{name: "registered dynamically", register: true},
		{name: "audiences with discovery", discovered: true, register: true, audiences: []string{"api://one"}, want: []string{
			"/authorize api://one", "/token authorization_code api://one", "/token refresh_token api://one"}},
		{name: "audiences", audiences: []string{"api://one", "api://two"}, want: []string{
			"/authorize api://one api://two", "/token authorization_code api://one api://two", "/token refresh_token api://one api://two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOAuthServersWith(t, testutil.OAuthOptions{})
			o.SetExpiresIn(5) // within oauth2's early-refresh margin: refreshed at its next use
			b := &testutil.Browser{}
			cfg := ServerConfig{URL: o.Endpoint, OAuth: &OAuthConfig{ClientID: "pre-registered", Audiences: tc.audiences,
				AuthorizationURL: o.AS.URL + "/authorize", TokenURL: o.AS.URL + "/token"}}
			if tc.register {
				cfg.OAuth.ClientID, cfg.OAuth.RegistrationURL = "", o.AS.URL+"/register"
			}
			if tc.discovered {
				cfg.OAuth.AuthorizationURL, cfg.OAuth.TokenURL, cfg.OAuth.RegistrationURL = "", "", ""
			}
			dir := t.TempDir()
			m := startManager(t, Options{Servers: map[string]ServerConfig{"fixed": cfg}, TokenDir: dir, Authorize: b.Open, AutoAuthorize: true})
			requireState(t, m, "fixed", StateConnected)
			mustCall(t, m, "fixed__echo", `{"message":"x"}`)
			st := o.Stats()
			if len(st.Refused) > 0 || (st.MetadataGets != 0) != tc.discovered || b.Opened() != 1 || st.Refreshes == 0 {
				t.Errorf("refused %v, metadata requests %d, browser %d, refreshes %d", st.Refused, st.MetadataGets, b.Opened(), st.Refreshes)
			}
			var aud []string
			for _, a := range st.Audiences {
				if !slices.Contains(aud, a) {
					aud = append(aud, a)
				}
			}
			if !slices.Equal(aud, tc.want) {
				t.Errorf("audiences seen %q, want %q", aud, tc.want)
			}
			if registered := len(st.Redirects) > 0; registered != tc.register {
				t.Errorf("registered redirect URIs %q", st.Redirects)
			}
		})
	}
}

// A stored token is refreshed at the token endpoint it came from: settings naming the
// server with a tokenUrl of their own get no request with its refresh token.
func TestOAuthStoredTokenRefreshKeepsItsTokenURL(t *testing.T) {
	t.Parallel()
	o := newOAuthServersWith(t, testutil.OAuthOptions{})
	o.SetExpiresIn(5)
	dir := t.TempDir()
	m := startManager(t, Options{Servers: map[string]ServerConfig{"gh": {URL: o.Endpoint}}, TokenDir: dir,
		Authorize: (&testutil.Browser{}).Open, AutoAuthorize: true})
	requireState(t, m, "gh", StateConnected)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	before := o.Stats().Refreshes

	var mu sync.Mutex
	var got []string
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.PostForm.Encode())
		mu.Unlock()
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer evil.Close()
	cfg := ServerConfig{URL: o.Endpoint, OAuth: &OAuthConfig{ClientID: "x", AuthorizationURL: evil.URL + "/authorize", TokenURL: evil.URL + "/token"}}
	m2 := startManager(t, Options{Servers: map[string]ServerConfig{"gh": cfg}, TokenDir: dir})
	requireState(t, m2, "gh", StateConnected)
	mustCall(t, m2, "gh__echo", `{"message":"x"}`)
	if o.Stats().Refreshes == before {
		t.Errorf("the stored token was not refreshed at its own token endpoint")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the settings' token endpoint got %q", got)
	}
}
