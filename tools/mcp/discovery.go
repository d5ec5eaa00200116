package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// discovery is what the MCP authorization spec's discovery found for a server: its
// protected resource metadata (made up from the server's origin when it has none, as
// the 2025-03-26 spec has it) and its authorization server's metadata.
type discovery struct {
	prm *oauthex.ProtectedResourceMetadata
	asm *oauthex.AuthServerMeta
	// legacy is set when the server has no protected resource metadata: its origin is
	// the authorization server (the 2025-03-26 spec).
	legacy bool
	// relaxed is set when, on the legacy path, the metadata at the server's origin
	// names an issuer other than the origin, on the same origin (see legacyMetadata).
	relaxed bool
}

// prmCandidate is a URL of protected resource metadata and the resource its document
// must name (RFC 9728 section 3.3).
type prmCandidate struct{ url, resource string }

// prmCandidates lists where protected resource metadata may be, in the spec's order:
// the URL of the WWW-Authenticate challenge, then the well-known URL with the server's
// path, then the one at the root.
func prmCandidates(challenged, serverURL string) []prmCandidate {
	var cs []prmCandidate
	if challenged != "" {
		cs = append(cs, prmCandidate{challenged, serverURL})
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return cs
	}
	m := *u
	m.RawQuery, m.Fragment = "", ""
	m.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	cs = append(cs, prmCandidate{m.String(), serverURL})
	m.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	cs = append(cs, prmCandidate{m.String(), root.String()})
	return cs
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// discover runs discovery for the request req that the server refused with resp, as
// the SDK's handlers do, over client. On the legacy path a metadata document whose
// issuer differs from the server's origin is taken when legacyMetadata allows it.
func discover(ctx context.Context, client *http.Client, req *http.Request, resp *http.Response) (*discovery, error) {
	d, err := discoverLegacy(ctx, client, req, resp)
	if err != nil || d.relaxed {
		return d, err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, d.prm.AuthorizationServers[0], client)
	if err != nil {
		return nil, fmt.Errorf("the authorization server's metadata: %w", err)
	}
	if asm == nil {
		// No metadata: the 2025-03-26 spec's default endpoints.
		base := strings.TrimSuffix(d.prm.AuthorizationServers[0], "/")
		asm = &oauthex.AuthServerMeta{Issuer: d.prm.AuthorizationServers[0], AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	}
	d.asm = asm
	return d, nil
}

// discoverLegacy is the first part of discover: the protected resource metadata, or
// on the legacy path the metadata legacyMetadata takes (then d.relaxed is set).
func discoverLegacy(ctx context.Context, client *http.Client, req *http.Request, resp *http.Response) (*discovery, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("the server's WWW-Authenticate header: %w", err)
	}
	serverURL := req.URL.String()
	d := &discovery{}
	absent := true // every candidate answered 4xx: the server has none
	for _, c := range prmCandidates(challengeParam(challenges, "resource_metadata"), serverURL) {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err != nil {
			// The SDK hides its error types; a change of its words makes every
			// failure count as unreadable metadata, which only keeps the issuer
			// check (see legacyMetadata).
			if !strings.Contains(err.Error(), "bad status 4") {
				absent = false
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the server's protected resource metadata names no authorization server")
		}
		d.prm = prm
		return d, nil
	}
	origin := *req.URL
	origin.Path, origin.RawPath, origin.RawQuery, origin.Fragment = "", "", "", ""
	d.legacy = true
	d.prm = &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin.String()}, Resource: serverURL}
	if absent {
		asm, err := legacyMetadata(ctx, client, &origin)
		if err != nil {
			return nil, err
		}
		if asm != nil {
			d.asm, d.relaxed = asm, true
		}
	}
	return d, nil
}

// legacyMetadata returns the authorization server metadata at origin's
// /.well-known/oauth-authorization-server when its issuer is not origin itself but
// another URL on the same origin (an authorization server under a path of the MCP
// server, as the 2025-03-26 spec's servers have it); nil otherwise, and then the
// SDK's discovery, with its issuer check, decides.
//
// RFC 8414 section 3.3 has a client reject metadata whose issuer is not the one it
// fetched the metadata for: a client that knows an issuer from a trustworthy source
// (the server's protected resource metadata, or its own settings) must not be given
// the endpoints of another. On the legacy path there is no such source: the
// authorization base URL is by definition the MCP server's origin, and the document
// comes from that origin, so the party that serves the MCP server vouches for it, and
// an issuer on that same origin says no more than the origin itself does. The token
// this yields is still sent to the MCP server's origin only; the issuer named is then
// the one RFC 9207's iss parameter is checked against. Anywhere else (protected
// resource metadata present, or any of it unreadable rather than absent, or an issuer
// on another origin) the check stays.
func legacyMetadata(ctx context.Context, client *http.Client, origin *url.URL) (*oauthex.AuthServerMeta, error) {
	metaURL := origin.String() + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metaURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil // the SDK's discovery reports it
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil || doc.Issuer == "" {
		return nil, nil
	}
	iss, err := url.Parse(doc.Issuer)
	if err != nil || strings.TrimSuffix(doc.Issuer, "/") == origin.String() || !sameOriginURL(iss, origin) {
		return nil, nil
	}
	// The SDK's own checks (PKCE, endpoint schemes, https) with the issuer the
	// document names.
	asm, err := oauthex.GetAuthServerMeta(ctx, metaURL, doc.Issuer, client)
	if err != nil {
		return nil, fmt.Errorf("the authorization server's metadata at %s: %w", metaURL, err)
	}
	return asm, nil
}

// sameOriginURL reports whether a and b have the same scheme, host and port.
func sameOriginURL(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// tokenAuthStyle picks how a client secret goes to the token endpoint from the
// methods the authorization server supports: client_secret_post, then
// client_secret_basic (OAuth 2.1's preference), else oauth2's detection.
func tokenAuthStyle(supported []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}
