package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/agentls/agentls/settings"
)

// OAuthConfig is the oauth block of a server's settings (see settings.MCPOAuth).
type OAuthConfig = settings.MCPOAuth

// EnterpriseConfig is the enterprise block of an oauth block (see
// settings.MCPEnterpriseAuth).
type EnterpriseConfig = settings.MCPEnterpriseAuth

// oauthEnabled reports whether OAuth may be used for a server with the oauth block c.
func oauthEnabled(c *OAuthConfig) bool { return c == nil || c.Enabled == nil || *c.Enabled }

// validateOAuth reports what is wrong with the oauth block c.
func validateOAuth(c *OAuthConfig) error {
	if c == nil {
		return nil
	}
	if c.RedirectURI != "" {
		if _, err := loopbackRedirect(c.RedirectURI); err != nil {
			return err
		}
	}
	switch c.GrantType {
	case "", "authorization_code":
		if c.PrivateKeyFile != "" {
			return errors.New(`oauth "privateKeyFile" is for "grantType" "client_credentials"`)
		}
	case "client_credentials":
		if c.ClientID == "" || (c.ClientSecret == "") == (c.PrivateKeyFile == "") {
			return errors.New(`oauth "grantType" "client_credentials" needs "clientId" and one of "clientSecret" and "privateKeyFile"`)
		}
		if c.AuthorizationURL != "" || c.TokenURL != "" || c.Enterprise != nil {
			return errors.New(`oauth "grantType" "client_credentials" takes no "authorizationUrl", "tokenUrl" or "enterprise"`)
		}
	default:
		return fmt.Errorf(`oauth "grantType" is %q; want "authorization_code" or "client_credentials"`, c.GrantType)
	}
	switch c.SigningAlgorithm {
	case "", "ES256", "ES384", "RS256":
	default:
		return fmt.Errorf(`oauth "signingAlgorithm" is %q; want "ES256", "ES384" or "RS256"`, c.SigningAlgorithm)
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			return fmt.Errorf(`oauth "clientMetadataUrl" is %q; want an https URL with a path`, c.ClientMetadataURL)
		}
	}
	if (c.AuthorizationURL == "") != (c.TokenURL == "") {
		return errors.New(`oauth "authorizationUrl" and "tokenUrl" go together`)
	}
	if c.RegistrationURL != "" && c.AuthorizationURL == "" {
		return errors.New(`oauth "registrationUrl" goes with "authorizationUrl" and "tokenUrl"`)
	}
	if c.AuthorizationURL != "" {
		if c.ClientID == "" && c.RegistrationURL == "" {
			return errors.New(`oauth "authorizationUrl" and "tokenUrl" need "clientId" or "registrationUrl"`)
		}
		if c.RegistrationURL != "" {
			if err := httpsOrLoopback("registrationUrl", c.RegistrationURL); err != nil {
				return err
			}
		}
		if c.Enterprise != nil {
			return errors.New(`oauth "authorizationUrl" and "tokenUrl" do not go with "enterprise"`)
		}
		if err := httpsOrLoopback("authorizationUrl", c.AuthorizationURL); err != nil {
			return err
		}
		if err := httpsOrLoopback("tokenUrl", c.TokenURL); err != nil {
			return err
		}
	}
	if e := c.Enterprise; e != nil {
		if c.ClientID == "" || e.ClientID == "" || e.Issuer == "" {
			return errors.New(`oauth "enterprise" needs "issuer" and "clientId", and the oauth block its own "clientId"`)
		}
		if err := httpsOrLoopback("enterprise.issuer", e.Issuer); err != nil {
			return err
		}
		if e.TokenURL != "" {
			if err := httpsOrLoopback("enterprise.tokenUrl", e.TokenURL); err != nil {
				return err
			}
		}
		if e.IDToken != "" && e.IDTokenCommand != "" {
			return errors.New(`oauth "enterprise" takes "idToken" or "idTokenCommand", not both`)
		}
	}
	return nil
}

// httpsOrLoopback checks that the URL of the setting field is https, or http on this
// machine: codes, secrets and tokens go there.
func httpsOrLoopback(field, s string) error {
	u, err := url.Parse(s)
	if err == nil && u.Host != "" {
		ip := net.ParseIP(u.Hostname())
		if u.Scheme == "https" || (u.Scheme == "http" && (u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()))) {
			return nil
		}
	}
	return fmt.Errorf(`oauth %q is %q; want an https URL, or http on 127.0.0.1, [::1] or localhost`, field, s)
}

// expandPath expands $VAR and a leading ~ of a file name of the settings.
func expandPath(p string, getenv func(string) string) (string, error) {
	p = expand(p, getenv)
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	return p, nil
}

// loopbackRedirect parses a redirect URI and checks that it points at this machine, so
// that no authorization code is ever sent elsewhere.
func loopbackRedirect(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf(`oauth "redirectUri" %q: %w`, s, err)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme != "http" || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf(`oauth "redirectUri" is %q; want an http URL on 127.0.0.1, [::1] or localhost`, s)
	}
	return u, nil
}

// AuthorizeFunc shows a person the authorization URL of a server, for the browser step
// of OAuth: an editor opens it (window/showDocument) or shows it as a link, a terminal
// prints it and runs $BROWSER. It returns once the URL is shown, not when the person is
// done; the redirect comes back to a loopback listener of the Manager.
type AuthorizeFunc func(ctx context.Context, server, authURL string) error

// oauthFlowTimeout bounds a connection attempt that may include the browser step: the
// time a person has to authorize.
const oauthFlowTimeout = 5 * time.Minute

// maxStepUps bounds the flows a 403 insufficient_scope starts by itself (see
// oauth.stepUps); the MCP authorization spec asks clients to limit them.
const maxStepUps = 3

// errNeedsAuth is returned by an OAuth flow that may not start by itself.
var errNeedsAuth = errors.New("needs authorization")

// oauth is the OAuth state of one HTTP or SSE server: its handler (the SDK's, which does
// the discovery, registration, PKCE and token requests) and whether the browser step may
// start. It lives as long as the Manager, across connections.
type oauth struct {
	s        *server
	resource *url.URL // the server's URL: tokens go to its origin only
	store    *tokenStore
	handler  auth.OAuthHandler
	redirect *url.URL
	// audience is the "audience" parameter of the settings' audiences, or "".
	audience string

	// interactive is set once a person asked to authorize the server (Manager.Authorize,
	// or Options.AutoAuthorize): from then on a 401 or an insufficient_scope starts the
	// browser step.
	interactive atomic.Bool
	// stepUps counts the flows started by a 403 insufficient_scope since the last one a
	// person asked for: at most maxStepUps, so that a server whose scopes never suffice
	// does not send the person to the browser again and again.
	stepUps atomic.Int32
	// stepUp is set while such a flow runs: its browser step may start.
	stepUp atomic.Bool
	// needs is why the server wants authorization, for its status, while it does.
	needs atomic.Pointer[string]
	// lastResource is the resource parameter of the last authorization request.
	lastResource atomic.Pointer[string]

	mu sync.Mutex // serialises flows
}

// newOAuth returns the OAuth state of s, or nil when the server does not use OAuth (a
// stdio server, OAuth disabled, or an Authorization header set in its settings).
func newOAuth(s *server) (*oauth, error) {
	cfg := s.cfg
	kind, err := cfg.Transport()
	if err != nil || kind == TransportStdio || !oauthEnabled(cfg.OAuth) {
		return nil, nil
	}
	for k := range cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil, nil
		}
	}
	endpoint := cfg.URL
	if endpoint == "" {
		endpoint = cfg.HTTPURL
	}
	resource, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("the server's URL: %w", err)
	}
	o := &oauth{s: s, resource: resource, store: s.m.tokens}
	if s.m.opts.AutoAuthorize {
		o.interactive.Store(true)
	}
	oc := cfg.OAuth
	if oc == nil {
		oc = &OAuthConfig{}
	}
	// Discovery, registration and token requests go to the authorization server
	// without the server's token or headers.
	plain := &http.Client{Transport: http.DefaultTransport}
	secret := expand(oc.ClientSecret, s.m.getenv)
	o.audience = strings.Join(oc.Audiences, " ")
	if oc.TokenParamName != "" {
		s.m.logger.Info(`MCP OAuth: "tokenParamName" is not used (nor is it by Gemini CLI): the token goes in the Authorization header`, "server", s.name)
	}
	if oc.GrantType == "client_credentials" {
		// No person is involved: the flow may always run.
		o.interactive.Store(true)
		if oc.PrivateKeyFile != "" {
			path, err := expandPath(oc.PrivateKeyFile, s.m.getenv)
			if err != nil {
				return nil, fmt.Errorf(`oauth "privateKeyFile": %w`, err)
			}
			key, err := loadSigningKey(path, oc.SigningAlgorithm, oc.KeyID)
			if err != nil {
				return nil, err
			}
			o.handler = &jwtClientCredentials{o: o, client: plain, clientID: oc.ClientID, key: key, scopes: oc.Scopes}
			return o, nil
		}
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: oc.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}},
			HTTPClient:  plain,
		})
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		o.handler = h
		return o, nil
	}
	redirect := "http://127.0.0.1:0/callback"
	if oc.RedirectURI != "" {
		redirect = oc.RedirectURI
	}
	ru, err := loopbackRedirect(redirect)
	if err != nil {
		return nil, err
	}
	if ru.Port() == "0" || ru.Port() == "" {
		// The redirect URI is fixed for the handler's life (dynamic registration sends
		// it), so the port is chosen now and listened on again for each flow.
		l, err := net.Listen("tcp", net.JoinHostPort(ru.Hostname(), "0"))
		if err != nil {
			return nil, fmt.Errorf("oauth: choosing a loopback port for the redirect: %w", err)
		}
		ru.Host = l.Addr().String()
		_ = l.Close()
	}
	o.redirect = ru
	// A token stored by an earlier run for this very server URL is used first.
	var stored oauth2.TokenSource
	var storedScopes []string
	if rec, err := o.store.load(s.name, endpoint); err != nil {
		s.m.logger.Warn("stored MCP OAuth token unreadable; authorization will be asked again", "server", s.name, "err", err)
	} else if rec != nil {
		c := &oauth2.Config{ClientID: rec.ClientID, ClientSecret: rec.ClientSecret, Scopes: rec.Scopes,
			Endpoint: oauth2.Endpoint{TokenURL: rec.TokenURL, AuthStyle: oauth2.AuthStyle(rec.AuthStyle)}}
		storedScopes = rec.Scopes
		stored, err = o.persisting(context.WithValue(context.Background(), oauth2.HTTPClient, plain), c, *rec)
		if err != nil {
			return nil, err
		}
	}
	if e := oc.Enterprise; e != nil {
		idp := &oauthex.ClientCredentials{ClientID: e.ClientID}
		if sec := expand(e.ClientSecret, s.m.getenv); sec != "" {
			idp.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: sec}
		}
		idToken := s.m.opts.EnterpriseIDToken
		if idToken == nil {
			idToken = settingsIDToken(e, s.m.getenv)
		}
		o.handler = &enterpriseHandler{o: o, client: plain, idpIssuer: e.Issuer, idpTokenURL: e.TokenURL, idpClient: idp,
			idpScopes: e.Scopes, clientID: oc.ClientID, secret: secret, scopes: oc.Scopes, idToken: idToken,
			ts: stored}
		return o, nil
	}
	newTS := func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
		rec := storedToken{Server: endpoint, Resource: o.resourceParam(), Audience: o.audience, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Token: t}
		return o.persisting(ctx, c, rec)
	}
	dcr := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{ru.String()},
		ClientName:              "agentls",
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethod: "none",
		ApplicationType:         "native", // a loopback redirect
	}
	ch := &codeHandler{o: o, client: plain, redirect: ru.String(), dcr: dcr, scopes: oc.Scopes, newTS: newTS, own: stored}
	if stored != nil {
		// A step-up asks for the scopes granted before and the new ones.
		ch.granted = storedScopes
	}
	if oc.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if secret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
		ch.pre = pre
	}
	if oc.ClientMetadataURL != "" {
		ch.cimd = oc.ClientMetadataURL
	}
	if oc.AuthorizationURL != "" {
		// Gemini CLI's endpoints of the settings: no discovery.
		ch.fixed = &oauthex.AuthServerMeta{AuthorizationEndpoint: oc.AuthorizationURL, TokenEndpoint: oc.TokenURL,
			RegistrationEndpoint: oc.RegistrationURL}
		o.handler = ch
		return o, nil
	}
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                     ru.String(),
		AuthorizationCodeFetcher:        o.fetchCode,
		RequestRefreshToken:             true,
		Client:                          plain,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: dcr},
		NewTokenSource:                  newTS,
		PreregisteredClient:             ch.pre,
	}
	if len(oc.Scopes) > 0 {
		scopes := oc.Scopes
		hc.ScopeFilter = func([]string) []string { return scopes }
	} else if len(ch.granted) > 0 {
		// The SDK adds the scopes it granted itself to a step-up's; those of the stored
		// token, granted to an earlier run, are added here.
		granted := ch.granted
		hc.ScopeFilter = func(s []string) []string { return unionScopes(granted, s) }
	}
	if ch.cimd != "" {
		hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: ch.cimd}
	}
	h, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	ch.sdk = h
	o.handler = ch
	return o, nil
}

// persisting returns a token source over rec's token that refreshes it through c before
// it expires and stores each new token.
func (o *oauth) persisting(ctx context.Context, c *oauth2.Config, rec storedToken) (oauth2.TokenSource, error) {
	if err := o.store.save(o.s.name, rec); err != nil {
		return nil, err
	}
	client, _ := ctx.Value(oauth2.HTTPClient).(*http.Client)
	if client == nil {
		client = http.DefaultClient
	}
	ref := &refresher{cfg: c, resource: rec.Resource, audience: rec.Audience, client: client, refresh: rec.Token.RefreshToken}
	return &savingSource{o: o, rec: rec, inner: oauth2.ReuseTokenSource(rec.Token, ref)}, nil
}

// resourceParam is the resource parameter of token requests: the one of the last
// authorization request (the resource of the server's protected resource metadata),
// else the server's URL.
func (o *oauth) resourceParam() string {
	if p := o.lastResource.Load(); p != nil {
		return *p
	}
	return o.resource.String()
}

// savingSource stores each token its inner source returns that differs from the last.
type savingSource struct {
	o     *oauth
	inner oauth2.TokenSource

	mu  sync.Mutex
	rec storedToken
}

func (t *savingSource) Token() (*oauth2.Token, error) {
	tok, err := t.inner.Token()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rec.Token == nil || tok.AccessToken != t.rec.Token.AccessToken {
		t.rec.Token = tok
		if err := t.o.store.save(t.o.s.name, t.rec); err != nil {
			t.o.s.m.logger.Warn("MCP OAuth token could not be stored", "server", t.o.s.name, "err", err)
		}
	}
	return tok, nil
}

// fetchCode is the browser step: it listens on the loopback redirect address, has the
// front end show the authorization URL, and waits for the redirect.
func (o *oauth) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if !o.interactive.Load() && !o.stepUp.Load() {
		return nil, errNeedsAuth
	}
	show := o.s.m.opts.Authorize
	if show == nil {
		return nil, fmt.Errorf("%w: no one to show the authorization page to", errNeedsAuth)
	}
	if u, err := url.Parse(args.URL); err == nil {
		if r := u.Query().Get("resource"); r != "" {
			o.lastResource.Store(&r)
		}
	}
	l, err := net.Listen("tcp", o.redirect.Host)
	if err != nil {
		return nil, fmt.Errorf("listening for the OAuth redirect on %s: %w", o.redirect.Host, err)
	}
	type result struct {
		res *auth.AuthorizationResult
		err error
	}
	done := make(chan result, 1)
	path := o.redirect.Path
	if path == "" {
		path = "/"
	}
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		res := result{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
		if e := q.Get("error"); e != "" {
			res = result{err: fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))}
		} else if res.res.Code == "" {
			res = result{err: errors.New("the redirect carried no authorization code")}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		msg := "agentls is authorized to use " + o.s.name + ". You may close this tab."
		if res.err != nil {
			msg = "agentls was not authorized: " + res.err.Error()
		}
		fmt.Fprintf(w, "<!doctype html><title>agentls</title><p>%s</p>", html.EscapeString(msg))
		select {
		case done <- res:
		default:
		}
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	if err := show(ctx, o.s.name, args.URL); err != nil {
		return nil, fmt.Errorf("showing the authorization page: %w", err)
	}
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the authorization in the browser: %w", ctx.Err())
	}
}

// sameOrigin reports whether u is on the server's origin: scheme, host and port.
func (o *oauth) sameOrigin(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, o.resource.Scheme) && strings.EqualFold(hostPort(u), hostPort(o.resource))
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// authTransport adds the server's OAuth token to requests to the server's origin, and
// none to any other, and runs the OAuth flow on a 401, or a 403 insufficient_scope,
// retrying the request once after it.
type authTransport struct {
	o    *oauth
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.o.sameOrigin(req.URL) {
		// An SSE endpoint event, or a redirect, naming another origin gets no token.
		return t.base.RoundTrip(req)
	}
	resp, err := t.send(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(resp) {
		return resp, nil
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil
	}
	if aerr := t.o.authorize(req, resp); aerr != nil {
		// The SDK sees the status, and the status of the server says why.
		t.o.s.m.logger.Info("MCP server needs authorization", "server", t.o.s.name, "err", aerr)
		return &http.Response{StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header,
			Body: http.NoBody, Request: req, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor}, nil
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = body
	}
	return t.send(retry)
}

// send sends req with the current token, if any.
func (t *authTransport) send(req *http.Request) (*http.Response, error) {
	ts, err := t.o.handler.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			// An expired token that cannot be refreshed: the server's 401 starts over.
			t.o.s.m.logger.Info("MCP OAuth token could not be refreshed", "server", t.o.s.name, "err", err)
		} else {
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	return t.base.RoundTrip(req)
}

func insufficientScope(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// authorize runs the flow for the failed request; it records, when the flow may not
// start by itself, that the server needs authorization.
func (o *oauth) authorize(req *http.Request, resp *http.Response) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	hint := fmt.Sprintf("needs authorization: run `agentls mcp auth %s` (or the editor command agentls.mcpAuth)", o.s.name)
	if resp.StatusCode == http.StatusForbidden && !o.interactive.Load() && o.hasToken(req.Context()) {
		// Step-up: the person authorized the server (this token is theirs, from `agentls
		// mcp auth` or the editor's agentls.mcpAuth, in this process or an earlier one),
		// and a call of theirs needs a wider scope: the browser step asks them for it,
		// in the editor as on the terminal, within the call.
		if o.stepUps.Add(1) > maxStepUps {
			_ = resp.Body.Close()
			msg := fmt.Sprintf("needs a wider scope than granted after %d authorizations: run `agentls mcp auth %s` (or the editor command agentls.mcpAuth)", maxStepUps, o.s.name)
			o.needs.Store(&msg)
			return errNeedsAuth
		}
		o.stepUp.Store(true)
		defer o.stepUp.Store(false)
	} else if !o.interactive.Load() {
		_ = resp.Body.Close()
		o.needs.Store(&hint)
		return errNeedsAuth
	}
	err := o.handler.Authorize(req.Context(), req, resp)
	if err != nil {
		msg := fmt.Sprintf("needs authorization: %v", err)
		if errors.Is(err, errNeedsAuth) {
			msg = hint
		}
		o.needs.Store(&msg)
		return err
	}
	o.needs.Store(nil)
	return nil
}

// hasToken reports whether the handler holds a token.
func (o *oauth) hasToken(ctx context.Context) bool {
	ts, err := o.handler.TokenSource(ctx)
	return err == nil && ts != nil
}

// reloadOAuth takes up a token stored since the server's OAuth state was made (by
// `agentls mcp auth` in another process) when it holds none itself.
func (s *server) reloadOAuth(ctx context.Context) {
	o := s.currentOAuth()
	if o == nil || o.hasToken(ctx) {
		return
	}
	if rec, err := o.store.load(s.name, o.resource.String()); err != nil || rec == nil {
		return
	}
	fresh, err := newOAuth(s)
	if err != nil || fresh == nil {
		return
	}
	if o.interactive.Load() {
		fresh.interactive.Store(true)
	}
	s.mu.Lock()
	if s.oauth == o {
		s.oauth = fresh
	}
	s.mu.Unlock()
}

// needsAuth returns why the server needs authorization, or "".
func (o *oauth) needsAuth() string {
	if o == nil {
		return ""
	}
	if p := o.needs.Load(); p != nil {
		return *p
	}
	return ""
}
