package testutil

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthServers are an MCP server that wants a bearer token, and its OAuth
// authorization server, on two loopback origins: discovery from the 401's
// WWW-Authenticate, dynamic registration, PKCE with S256, the resource parameter and
// refresh are checked as the MCP authorization spec has them.
type OAuthServers struct {
	// AS is the authorization server, RS the MCP server; Endpoint is RS's MCP URL.
	AS, RS   *httptest.Server
	Endpoint string

	opts OAuthOptions
	// base is where the authorization server's endpoints are; issuer what its
	// metadata names.
	base, issuer string

	mu           sync.Mutex
	metadataGets int
	audiences    []string
	assertions   []string // ID-JAGs issued, client assertions' jti seen
	kids         []string
	idpLogins    int
	idp          *httptest.Server
	wrongState   bool
	expiresIn    int
	codes        map[string]codeGrant
	access       map[string]bool
	refresh      map[string]bool
	n            int
	refreshes    int
	authorizes   int
	redirects    []string
	badRequests  []string // what the servers refused, and why
	bearers      []string // the Authorization headers the MCP server saw
}

type codeGrant struct{ challenge, resource, redirect string }

// OAuthOptions vary the servers of NewOAuthServersWith.
type OAuthOptions struct {
	// LegacyPrefix serves the authorization server on the MCP server's origin, under
	// this path, as the 2025-03-26 spec's servers do: no protected resource metadata,
	// and the authorization server's metadata at the origin's root, naming the issuer
	// origin+LegacyPrefix.
	LegacyPrefix string
	// Issuer, when set, is the issuer the metadata names instead.
	Issuer string
	// ClientID and ClientKey make the token endpoint take client-credentials grants of
	// ClientID authenticated by a JWT signed with ClientKey's private key
	// (private_key_jwt); ClientKey is an *ecdsa.PublicKey or an *rsa.PublicKey.
	ClientID  string
	ClientKey crypto.PublicKey
	// IDToken and IdPClientID start an enterprise identity provider (IdP) that
	// exchanges IDToken, from IdPClientID, for an ID-JAG for the MCP server (RFC 8693);
	// the authorization server then takes the ID-JAG by the JWT bearer grant from
	// ClientID authenticated by ClientSecret in a Basic header.
	IDToken, IdPClientID, ClientSecret string
}

// NewOAuthServers starts the servers, which serve mcp (an MCP server's HTTP handler) to
// requests with a token they issued; the test's end stops them.
func NewOAuthServers(t *testing.T, mcp http.Handler) *OAuthServers {
	return NewOAuthServersWith(t, mcp, OAuthOptions{})
}

// NewStepUpServers starts OAuthServers whose MCP server has one tool, "write", which
// answers "written" once the authorization server has made grants authorizations; until
// then its calls are refused with 403 insufficient_scope (scope "read write"), as a
// server does that wants more than the first authorization granted. A grants of 0
// refuses them always.
func NewStepUpServers(t *testing.T, grants int) *OAuthServers {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "1"}, nil)
	srv.AddTool(&mcpsdk.Tool{Name: "write", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "written"}}}, nil
		})
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
	var o *OAuthServers
	step := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) && (grants == 0 || o.Stats().Authorizes < grants) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="read write", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, o.RS.URL))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	o = NewOAuthServers(t, step)
	return o
}

// NewOAuthServersWith is NewOAuthServers with the variations of opts.
func NewOAuthServersWith(t *testing.T, mcp http.Handler, opts OAuthOptions) *OAuthServers {
	o := &OAuthServers{codes: map[string]codeGrant{}, access: map[string]bool{}, refresh: map[string]bool{}, opts: opts}
	o.AS = httptest.NewServer(http.HandlerFunc(o.serveAS))
	t.Cleanup(o.AS.Close)
	if opts.IDToken != "" {
		o.idp = httptest.NewServer(http.HandlerFunc(o.serveIdP))
		t.Cleanup(o.idp.Close)
	}
	o.RS = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := opts.LegacyPrefix; p != "" {
			switch {
			case r.URL.Path == "/.well-known/oauth-authorization-server":
				o.serveAS(w, r)
				return
			case strings.HasPrefix(r.URL.Path, p+"/"):
				r2 := r.Clone(r.Context())
				r2.URL.Path = strings.TrimPrefix(r.URL.Path, p)
				o.serveAS(w, r2)
				return
			case strings.HasPrefix(r.URL.Path, "/.well-known/"):
				http.NotFound(w, r)
				return
			}
		}
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
	o.base = o.AS.URL
	if opts.LegacyPrefix != "" {
		o.base = o.RS.URL + opts.LegacyPrefix
	}
	o.issuer = o.base
	if opts.Issuer != "" {
		o.issuer = opts.Issuer
	}
	return o
}

// IdPURL is the URL (issuer) of the identity provider of OAuthOptions.IDToken.
func (o *OAuthServers) IdPURL() string { return o.idp.URL }

// serveIdP is the identity provider's token endpoint: it exchanges the ID token for an
// ID-JAG naming the audience and resource it was asked for.
func (o *OAuthServers) serveIdP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": o.idp.URL, "authorization_endpoint": o.idp.URL + "/authorize",
			"token_endpoint": o.idp.URL + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}})
		return
	case "/authorize":
		// The person logs in: the OpenID Connect login of agentls's client.
		q := r.URL.Query()
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("client_id") != o.opts.IdPClientID || q.Get("code_challenge") == "" ||
			!slices.Contains(strings.Fields(q.Get("scope")), "openid") {
			o.refuse(w, "IdP login: %s", r.URL.RawQuery)
			return
		}
		o.idpLogins++
		v := redirect.Query()
		v.Set("code", "idp-code")
		v.Set("state", q.Get("state"))
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
		return
	case "/token":
	default:
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	f := r.PostForm
	if f.Get("grant_type") == "authorization_code" {
		if f.Get("code") != "idp-code" || f.Get("code_verifier") == "" {
			o.refuse(w, "IdP login: code %q", f.Get("code"))
			return
		}
		writeJSON(w, map[string]any{"access_token": "idp-access", "token_type": "Bearer", "id_token": o.opts.IDToken})
		return
	}
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
		o.refuse(w, "IdP: grant_type %q", f.Get("grant_type"))
	case f.Get("subject_token") != o.opts.IDToken || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
		o.refuse(w, "IdP: subject token %q of type %q", f.Get("subject_token"), f.Get("subject_token_type"))
	case f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag":
		o.refuse(w, "IdP: requested_token_type %q", f.Get("requested_token_type"))
	case f.Get("client_id") != o.opts.IdPClientID:
		o.refuse(w, "IdP: client_id %q", f.Get("client_id"))
	case f.Get("audience") != o.issuer || f.Get("resource") != o.Endpoint:
		o.refuse(w, "IdP: audience %q, resource %q; want %q, %q", f.Get("audience"), f.Get("resource"), o.issuer, o.Endpoint)
	default:
		o.n++
		jag := fmt.Sprintf("id-jag-%d", o.n)
		o.assertions = append(o.assertions, jag)
		writeJSON(w, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	}
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
	if a := r.URL.Query().Get("audience"); a != "" {
		o.audiences = append(o.audiences, r.URL.Path+" "+a)
	}
	if r.Method == http.MethodPost {
		_ = r.ParseForm()
		if a := r.PostForm.Get("audience"); a != "" {
			o.audiences = append(o.audiences, r.URL.Path+" "+r.PostForm.Get("grant_type")+" "+a)
		}
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		o.metadataGets++
		auth := []string{"none"}
		switch {
		case o.opts.ClientKey != nil:
			auth = []string{"private_key_jwt"}
		case o.opts.ClientSecret != "":
			auth = []string{"client_secret_basic"}
		}
		writeJSON(w, map[string]any{"issuer": o.issuer, "authorization_endpoint": o.base + "/authorize",
			"token_endpoint": o.base + "/token", "registration_endpoint": o.base + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": auth})
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
		case "client_credentials":
			if err := o.checkAssertion(f); err != nil {
				o.refuse(w, "client assertion: %v", err)
				return
			}
		case "urn:ietf:params:oauth:grant-type:jwt-bearer":
			id, secret, ok := r.BasicAuth()
			if !ok || id != o.opts.ClientID || secret != o.opts.ClientSecret {
				o.refuse(w, "JWT bearer grant: Basic client authentication %q", id)
				return
			}
			if !slices.Contains(o.assertions, f.Get("assertion")) {
				o.refuse(w, "JWT bearer grant: unknown assertion %q", f.Get("assertion"))
				return
			}
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

// RunAsBrowser makes the test binary the $BROWSER of `agentls mcp auth` when it runs
// with AGENTLS_TEST_BROWSER=1 (and BROWSER set to the test binary): it follows the
// authorization URL's redirects (its last argument), as a person's browser does once
// they consent, and exits. TestMain calls it first.
func RunAsBrowser() {
	if os.Getenv("AGENTLS_TEST_BROWSER") != "1" {
		return
	}
	resp, err := http.Get(os.Args[len(os.Args)-1])
	if err != nil {
		os.Exit(1)
	}
	resp.Body.Close()
	os.Exit(0)
}

// Opened returns how many times Open was called.
func (b *Browser) Opened() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.urls)
}

// SetWrongState makes the authorization endpoint redirect with a state of its own.
func (o *OAuthServers) SetWrongState() { o.mu.Lock(); o.wrongState = true; o.mu.Unlock() }

// SetIssuer makes the authorization server's metadata name issuer.
func (o *OAuthServers) SetIssuer(issuer string) { o.mu.Lock(); o.issuer = issuer; o.mu.Unlock() }

// SetExpiresIn sets the lifetime of the tokens issued from now on, in seconds.
func (o *OAuthServers) SetExpiresIn(s int) { o.mu.Lock(); o.expiresIn = s; o.mu.Unlock() }

// Stats are counts of what the servers saw.
type Stats struct {
	// Authorizes and Refreshes count authorization requests and refresh grants.
	Authorizes, Refreshes int
	// LastAccess is the last access token issued.
	LastAccess string
	// MetadataGets counts requests of the authorization server's metadata.
	MetadataGets int
	// Audiences lists the audience parameters the authorization server saw, each
	// after its path (and a token request's grant type).
	Audiences []string
	// Refused lists what the servers refused, and why; Redirects the registered
	// redirect URIs; Bearers the Authorization headers the MCP server saw.
	Refused, Redirects, Bearers []string
}

// Stats returns what the servers saw so far.
func (o *OAuthServers) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Stats{Authorizes: o.authorizes, Refreshes: o.refreshes, LastAccess: fmt.Sprintf("access-token-%d-secret", o.n),
		MetadataGets: o.metadataGets, Audiences: slices.Clone(o.audiences),
		Refused: slices.Clone(o.badRequests), Redirects: slices.Clone(o.redirects), Bearers: slices.Clone(o.bearers)}
}

// checkAssertion verifies a private_key_jwt client assertion (RFC 7523): its type,
// signature by the client's key, and claims.
func (o *OAuthServers) checkAssertion(f url.Values) error {
	if o.opts.ClientKey == nil {
		return errors.New("no client key configured")
	}
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return fmt.Errorf("client_assertion_type %q", f.Get("client_assertion_type"))
	}
	parts := strings.Split(f.Get("client_assertion"), ".")
	if len(parts) != 3 {
		return errors.New("not a JWS")
	}
	var header struct{ Alg, Kid string }
	var claims struct {
		Iss, Sub, Aud, Jti string
		Exp, Iat           int64
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	input := []byte(parts[0] + "." + parts[1])
	switch k := o.opts.ClientKey.(type) {
	case *ecdsa.PublicKey:
		var digest []byte
		switch header.Alg {
		case "ES256":
			d := sha256.Sum256(input)
			digest = d[:]
		case "ES384":
			d := sha512.Sum384(input)
			digest = d[:]
		default:
			return fmt.Errorf("alg %q for an EC key", header.Alg)
		}
		n := len(sig) / 2
		if !ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			return errors.New("bad signature")
		}
	case *rsa.PublicKey:
		d := sha256.Sum256(input)
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, d[:], sig) != nil {
			return fmt.Errorf("bad %s signature", header.Alg)
		}
	}
	now := time.Now().Unix()
	switch {
	case claims.Iss != o.opts.ClientID || claims.Sub != o.opts.ClientID:
		return fmt.Errorf("iss %q, sub %q", claims.Iss, claims.Sub)
	case claims.Aud != o.issuer:
		return fmt.Errorf("aud %q, want %q", claims.Aud, o.issuer)
	case claims.Exp < now || claims.Exp > now+600 || claims.Jti == "":
		return fmt.Errorf("exp %d (now %d), jti %q", claims.Exp, now, claims.Jti)
	case slices.Contains(o.assertions, claims.Jti):
		return errors.New("a jti used before")
	}
	o.assertions = append(o.assertions, claims.Jti)
	o.kids = append(o.kids, header.Kid)
	return nil
}

// IdPLogins counts the logins at the identity provider.
func (o *OAuthServers) IdPLogins() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.idpLogins
}

// Kids returns the kid headers of the client assertions the token endpoint took.
func (o *OAuthServers) Kids() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.kids)
}
