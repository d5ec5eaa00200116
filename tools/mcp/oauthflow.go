package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// codeHandler is the authorization code flow of a server. It is the SDK's handler,
// except where agentls runs the flow itself (from the SDK's parts): with endpoints
// from the settings (authorizationUrl and tokenUrl, as Gemini CLI has them), with
// audiences (which the SDK cannot send), and on the 2025-03-26 spec's path with
// metadata that legacyMetadata takes.
type codeHandler struct {
	o      *oauth
	sdk    auth.OAuthHandler       // nil when the endpoints come from the settings
	fixed  *oauthex.AuthServerMeta // the endpoints of the settings
	client *http.Client            // for the authorization server: no token, no headers

	redirect string
	pre      *oauthex.ClientCredentials
	cimd     string
	dcr      *oauthex.ClientRegistrationMetadata
	scopes   []string // of the settings; replace the discovered ones
	newTS    func(context.Context, *oauth2.Config, *oauth2.Token) (oauth2.TokenSource, error)

	mu sync.Mutex
	// own is the token source of agentls's own flow, or of the token stored by an
	// earlier run; nil once the SDK's flow got a token.
	own     oauth2.TokenSource
	granted []string
}

func (h *codeHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	own := h.own
	h.mu.Unlock()
	if own != nil || h.sdk == nil {
		return own, nil
	}
	return h.sdk.TokenSource(ctx)
}

func (h *codeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.fixed != nil {
		return h.runOwn(ctx, resp, h.fixed, h.o.resource.String(), nil)
	}
	if h.o.audience != "" {
		// The SDK's flow cannot send the audience parameter: the same discovery, and
		// agentls's flow.
		d, err := discover(ctx, h.client, req, resp)
		if err != nil {
			resp.Body.Close()
			return err
		}
		return h.runOwn(ctx, resp, d.asm, d.prm.Resource, d.prm.ScopesSupported)
	}
	if d, err := discoverLegacy(ctx, h.client, req, resp); err == nil && d.relaxed {
		h.o.s.m.logger.Info("MCP OAuth: the server has no resource metadata; taking the authorization server metadata its origin serves",
			"server", h.o.s.name, "issuer", d.asm.Issuer)
		return h.runOwn(ctx, resp, d.asm, d.prm.Resource, d.prm.ScopesSupported)
	}
	if err := h.sdk.Authorize(ctx, req, resp); err != nil {
		return err
	}
	h.mu.Lock()
	h.own = nil
	h.mu.Unlock()
	return nil
}

// runOwn is the authorization code flow with PKCE against asm's endpoints, for the
// resource, with the scopes of the settings, else of the challenge, else supported.
func (h *codeHandler) runOwn(ctx context.Context, resp *http.Response, asm *oauthex.AuthServerMeta, resource string, supported []string) error {
	defer resp.Body.Close()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate header: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && challengeParam(cs, "error") != "insufficient_scope" {
		return nil
	}
	id, secret, style, err := h.register(ctx, asm)
	if err != nil {
		return err
	}
	scopes := h.scopes
	if len(scopes) == 0 {
		scopes = strings.Fields(challengeParam(cs, "scope"))
	}
	if len(scopes) == 0 {
		scopes = supported
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	h.mu.Lock()
	scopes = unionScopes(h.granted, scopes)
	h.mu.Unlock()
	cfg := &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: h.redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, AuthStyle: style}}
	opts := []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("resource", resource)}
	if a := h.o.audience; a != "" {
		opts = append(opts, oauth2.SetAuthURLParam("audience", a))
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	res, err := h.o.fetchCode(ctx, &auth.AuthorizationArgs{URL: cfg.AuthCodeURL(state, append(opts, oauth2.S256ChallengeOption(verifier))...)})
	if err != nil {
		return err
	}
	if res.State != state {
		return errors.New("state mismatch")
	}
	// RFC 9207: an iss in the response must be the issuer's; one advertised must be there.
	if (res.Iss != "" || asm.AuthorizationResponseIssParameterSupported) && res.Iss != asm.Issuer {
		return fmt.Errorf("the authorization response names issuer %q, want %q", res.Iss, asm.Issuer)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.client), res.Code, append(opts, oauth2.VerifierOption(verifier))...)
	if err != nil {
		return fmt.Errorf("token exchange failed: %w", err)
	}
	ts, err := h.newTS(context.WithValue(context.Background(), oauth2.HTTPClient, h.client), cfg, tok)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.own, h.granted = ts, scopes
	h.mu.Unlock()
	return nil
}

// register picks the client for asm as the SDK does: a client ID metadata document
// where supported, else the client of the settings, else dynamic registration.
func (h *codeHandler) register(ctx context.Context, asm *oauthex.AuthServerMeta) (id, secret string, style oauth2.AuthStyle, err error) {
	switch {
	case h.cimd != "" && asm.ClientIDMetadataDocumentSupported:
		return h.cimd, "", oauth2.AuthStyleInParams, nil
	case h.pre != nil:
		if h.pre.ClientSecretAuth != nil {
			secret = h.pre.ClientSecretAuth.ClientSecret
		}
		return h.pre.ClientID, secret, tokenAuthStyle(asm.TokenEndpointAuthMethodsSupported), nil
	case h.dcr != nil && asm.RegistrationEndpoint != "":
		r, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, h.dcr, h.client)
		if err != nil {
			return "", "", 0, fmt.Errorf("failed to register client: %w", err)
		}
		style = oauth2.AuthStyleInHeader
		if r.TokenEndpointAuthMethod == "client_secret_post" || r.TokenEndpointAuthMethod == "none" {
			style = oauth2.AuthStyleInParams
		}
		return r.ClientID, r.ClientSecret, style, nil
	}
	return "", "", 0, errors.New("no configured client registration methods are supported by the authorization server")
}

// unionScopes returns a's scopes followed by those of b not in a.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// tokenRequest posts form to a token endpoint, with the client's secret in a Basic
// header when basic is set, and returns the token it answers.
func tokenRequest(ctx context.Context, client *http.Client, tokenURL string, form url.Values, basic *[2]string) (*oauth2.Token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s from the token endpoint: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return nil, fmt.Errorf("%s from the token endpoint: %s %s", resp.Status, body.Error, body.Description)
	}
	tok := &oauth2.Token{AccessToken: body.AccessToken, TokenType: body.TokenType, RefreshToken: body.RefreshToken}
	if body.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(body.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// jwtClientCredentials is the client-credentials grant of the MCP extension with
// private_key_jwt client authentication (RFC 7523 section 2.2): each token request
// carries a new short-lived assertion signed with the client's key. The SDK's
// ClientCredentialsHandler knows client secrets only.
type jwtClientCredentials struct {
	o        *oauth
	client   *http.Client
	clientID string
	key      *signingKey
	scopes   []string

	mu      sync.Mutex
	ts      oauth2.TokenSource
	granted []string
}

func (h *jwtClientCredentials) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *jwtClientCredentials) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	d, err := discover(ctx, h.client, req, resp)
	if err != nil {
		return err
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	scopes := h.scopes
	if len(scopes) == 0 {
		scopes = strings.Fields(challengeParam(cs, "scope"))
	}
	if len(scopes) == 0 {
		scopes = d.prm.ScopesSupported
	}
	h.mu.Lock()
	scopes = unionScopes(h.granted, scopes)
	h.mu.Unlock()
	src := &assertionSource{h: h, tokenURL: d.asm.TokenEndpoint, audience: d.asm.Issuer, resource: d.prm.Resource, scopes: scopes}
	tok, err := src.fetch(ctx)
	if err != nil {
		return fmt.Errorf("client credentials token request failed: %w", err)
	}
	h.mu.Lock()
	h.ts, h.granted = oauth2.ReuseTokenSource(tok, src), scopes
	h.mu.Unlock()
	return nil
}

// assertionSource gets tokens by the client-credentials grant, signing an assertion
// for each request.
type assertionSource struct {
	h                            *jwtClientCredentials
	tokenURL, audience, resource string
	scopes                       []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) { return s.fetch(context.Background()) }

func (s *assertionSource) fetch(ctx context.Context) (*oauth2.Token, error) {
	assertion, err := s.h.key.assertion(s.h.clientID, s.audience, time.Now())
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.h.clientID},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion}}
	if s.resource != "" {
		form.Set("resource", s.resource)
	}
	if len(s.scopes) > 0 {
		form.Set("scope", strings.Join(s.scopes, " "))
	}
	return tokenRequest(ctx, s.h.client, s.tokenURL, form, nil)
}

// IDTokenFunc gives the ID token of a person at their enterprise identity provider,
// for the MCP server called server (see Options.EnterpriseIDToken).
type IDTokenFunc func(ctx context.Context, server string) (string, error)

// enterpriseHandler is enterprise-managed authorization (SEP-990): the person's ID
// token at their identity provider is exchanged there for an ID-JAG (RFC 8693,
// oauthex.ExchangeToken), which the MCP server's authorization server takes for an
// access token (the JWT bearer grant, RFC 7523). The SDK's EnterpriseHandler wants the
// authorization server and resource known beforehand, discovers the identity
// provider's token endpoint by RFC 8414 metadata only, and sends the client secret of
// the JWT bearer grant in the form only; this one discovers the server's
// authorization server as the other flows do, takes the identity provider's token
// endpoint from the settings when given, and authenticates as the authorization
// server's metadata says.
type enterpriseHandler struct {
	o      *oauth
	client *http.Client
	// idp is the identity provider: issuer, token endpoint (may be empty), client.
	idpIssuer, idpTokenURL string
	idpClient              *oauthex.ClientCredentials
	idpScopes              []string
	// clientID and secret are agentls's client at the MCP server's authorization server.
	clientID, secret string
	scopes           []string
	idToken          IDTokenFunc // nil: an OIDC login at the identity provider

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (h *enterpriseHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *enterpriseHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	d, err := discover(ctx, h.client, req, resp)
	if err != nil {
		return err
	}
	idToken, err := h.fetchIDToken(ctx)
	if err != nil {
		return fmt.Errorf("the ID token of the identity provider: %w", err)
	}
	tokenURL := h.idpTokenURL
	if tokenURL == "" {
		meta, err := auth.GetAuthServerMetadata(ctx, h.idpIssuer, h.client)
		if err != nil {
			return fmt.Errorf("the identity provider's metadata: %w", err)
		}
		if meta == nil {
			return fmt.Errorf("the identity provider %s has no metadata; set its \"tokenUrl\"", h.idpIssuer)
		}
		tokenURL = meta.TokenEndpoint
	}
	jag, err := oauthex.ExchangeToken(ctx, tokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           d.asm.Issuer,
		Resource:           d.prm.Resource,
		Scope:              h.scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, h.idpClient, h.client)
	if err != nil {
		return fmt.Errorf("the token exchange at the identity provider: %w", err)
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {jag.AccessToken}}
	if len(h.scopes) > 0 {
		form.Set("scope", strings.Join(h.scopes, " "))
	}
	var basic *[2]string
	switch {
	case h.secret == "":
		form.Set("client_id", h.clientID)
	case tokenAuthStyle(d.asm.TokenEndpointAuthMethodsSupported) == oauth2.AuthStyleInParams:
		form.Set("client_id", h.clientID)
		form.Set("client_secret", h.secret)
	default:
		basic = &[2]string{h.clientID, h.secret}
	}
	tok, err := tokenRequest(ctx, h.client, d.asm.TokenEndpoint, form, basic)
	if err != nil {
		return fmt.Errorf("the JWT bearer grant: %w", err)
	}
	// Kept as the code flow's tokens are, so that the next run needs no login; one
	// that expires without a refresh token makes the server's 401 start over.
	c := &oauth2.Config{ClientID: h.clientID, ClientSecret: h.secret, Scopes: h.scopes,
		Endpoint: oauth2.Endpoint{TokenURL: d.asm.TokenEndpoint, AuthStyle: tokenAuthStyle(d.asm.TokenEndpointAuthMethodsSupported)}}
	ts, err := h.o.persisting(context.WithValue(context.Background(), oauth2.HTTPClient, h.client), c,
		storedToken{Server: h.o.resource.String(), Resource: d.prm.Resource, ClientID: h.clientID, ClientSecret: h.secret,
			TokenURL: d.asm.TokenEndpoint, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: h.scopes, Token: tok})
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// idTokenTimeout bounds an enterprise block's idTokenCommand.
const idTokenTimeout = 30 * time.Second

// settingsIDToken returns the source of the person's ID token that the enterprise
// block e names (idToken, idTokenCommand), or nil when it names none (the login in
// the browser then gets one).
func settingsIDToken(e *EnterpriseConfig, getenv func(string) string) IDTokenFunc {
	switch {
	case e.IDToken != "":
		return func(context.Context, string) (string, error) {
			tok := strings.TrimSpace(expand(e.IDToken, getenv))
			if tok == "" {
				return "", fmt.Errorf("oauth enterprise.idToken %q is empty", e.IDToken)
			}
			return tok, nil
		}
	case e.IDTokenCommand != "":
		return func(ctx context.Context, server string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, idTokenTimeout)
			defer cancel()
			name, flag := "sh", "-c"
			if runtime.GOOS == "windows" {
				name, flag = "cmd", "/C"
			}
			cmd := exec.CommandContext(ctx, name, flag, e.IDTokenCommand)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				msg := strings.TrimSpace(stderr.String())
				if len(msg) > 500 {
					msg = msg[:500] + "…"
				}
				return "", fmt.Errorf("oauth enterprise.idTokenCommand of %s: %w: %s", server, err, msg)
			}
			tok := strings.TrimSpace(string(out))
			if tok == "" || strings.ContainsAny(tok, " \n\t") {
				return "", fmt.Errorf("oauth enterprise.idTokenCommand of %s printed no ID token (want one line, the token)", server)
			}
			return tok, nil
		}
	}
	return nil
}

// fetchIDToken returns the person's ID token: from Options.EnterpriseIDToken or the
// settings (idToken, idTokenCommand), else
// by an OpenID Connect login at the identity provider in the browser.
func (h *enterpriseHandler) fetchIDToken(ctx context.Context) (string, error) {
	if h.idToken != nil {
		return h.idToken(ctx, h.o.s.name)
	}
	scopes := h.idpScopes
	if len(scopes) == 0 {
		scopes = []string{"openid"}
	}
	tok, err := extauth.PerformOIDCLogin(ctx, &extauth.OIDCLoginConfig{IssuerURL: h.idpIssuer, Credentials: h.idpClient,
		RedirectURL: h.o.redirect.String(), Scopes: scopes, HTTPClient: h.client}, h.o.fetchCode)
	if err != nil {
		return "", err
	}
	id, _ := tok.Extra("id_token").(string)
	if id == "" {
		return "", errors.New("the identity provider's answer has no id_token")
	}
	return id, nil
}
