package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/agentls/agentls/tools/web/redact"
)

// internalPrefixes are ranges netip has no predicate for that still reach the user's
// own machine or network, or nothing useful, rather than the public internet.
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network": 0.x reaches the local host on Linux
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT, also used by VPN overlays
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking networks
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use IPv4/IPv6 translation
}

// The IPv6 ranges that carry an IPv4 address, which is where their packets end up.
// (IPv4-mapped addresses, ::ffff:0:0/96, netip unmaps by itself.)
var (
	sixToFour = netip.MustParsePrefix("2002::/16")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	// The deprecated IPv4-compatible addresses, ::a.b.c.d, which a stack that still
	// tunnels them delivers to a.b.c.d; :: and ::1 are in the range too, and are
	// what they are.
	ipv4Compatible = netip.MustParsePrefix("::/96")
	// IPv4-translated addresses of stateless translation (RFC 2765), ::ffff:0:a.b.c.d.
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// addressClass says why addr must not be fetched without permission, or "" if it is a
// public address. IPv4 addresses embedded in IPv6 ones (mapped, compatible, translated,
// 6to4, NAT64) are judged by the IPv4 address, which is where the packets end up.
func addressClass(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		b := addr.As16()
		switch {
		case sixToFour.Contains(addr):
			return addressClass(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case nat64.Contains(addr), ipv4Translated.Contains(addr),
			ipv4Compatible.Contains(addr) && !addr.IsLoopback() && !addr.IsUnspecified():
			return addressClass(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		}
	}
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsMulticast():
		return "multicast"
	}
	for _, p := range internalPrefixes {
		if p.Contains(addr) {
			return "reserved"
		}
	}
	return ""
}

// blockedError is a connection web_fetch refused to make.
type blockedError struct {
	host  string // as the URL names it; empty when not known yet
	addr  netip.Addr
	class string
	// literal says that host is a spelling of addr, read without asking DNS, rather
	// than a name that resolved to it.
	literal bool
	// name says that host is a loopback name (loopbackName), refused without asking
	// DNS; addr is not set.
	name bool
}

func (e *blockedError) Error() string {
	switch {
	case e.name:
		return fmt.Sprintf("%s is a loopback name: it names a loopback address, this machine, whatever DNS says", e.host)
	case e.host == "" || e.host == e.addr.String():
		return fmt.Sprintf("access to %s (a %s address) is not allowed", e.addr, e.class)
	case e.literal:
		return fmt.Sprintf("%s is %s, a %s address", e.host, e.addr, e.class)
	}
	return fmt.Sprintf("access to %s is not allowed: it resolves to %s, a %s address", e.host, e.addr, e.class)
}

// checkURL reads the host of u as an IP address where browsers and curl would (see
// hostAddr) and refuses it, before anything is resolved or dialled, when it is not a
// public address and the options do not allow it. An IPv4 address spelled in another
// way is rewritten in u to its dotted-decimal form, which is what browsers send and
// what the dialler then takes for an address rather than a name to look up.
func (s *Set) checkURL(u *url.URL) error {
	host, urlPort := u.Hostname(), u.Port()
	port := urlPort
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	allowed := s.opts.AllowPrivate || s.allowed(host, port)
	if loopbackName(host) && !allowed {
		// Refused here, not after resolving: a resolver may send "localhost." or
		// "x.localhost" to DNS, which is a query the model chose, or answer it with
		// an address the guard would let through.
		return &blockedError{host: host, class: "loopback", name: true}
	}
	addr, ok, err := hostAddr(host)
	if err != nil {
		return &badHostError{host: host, err: err}
	}
	if !ok {
		return nil // a name: the dialler checks what it resolves to
	}
	if addr.Is4() && addr.String() != host {
		u.Host = addr.String()
		if urlPort != "" {
			u.Host += ":" + urlPort
		}
	}
	if allowed {
		return nil
	}
	if class := addressClass(addr); class != "" {
		return &blockedError{host: host, addr: addr.Unmap(), class: class, literal: true}
	}
	return nil
}

// badHostError is a host that ends in a number but is no IPv4 address: browsers refuse
// such URLs, and DNS has no answer for them.
type badHostError struct {
	host string
	err  error
}

func (e *badHostError) Error() string {
	return fmt.Sprintf("the host %s is not valid: %v", e.host, e.err)
}

func (e *badHostError) Unwrap() error { return e.err }

// guardControl refuses, just before a socket connects, any address that is not public.
// Checking here rather than when the URL is parsed covers what a name resolves to at
// the moment of use, so a DNS answer that changes between check and use cannot slip an
// internal address through.
func guardControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected dial address %q: %w", address, err)
	}
	if class := addressClass(ap.Addr()); class != "" {
		return &blockedError{addr: ap.Addr().Unmap(), class: class}
	}
	return nil
}

// redirectError is a redirect web_fetch does not follow. Unlike a network failure, it
// happens again if the call is repeated.
type redirectError string

func (e redirectError) Error() string { return string(e) }

// newClient returns the HTTP client of web_fetch: its own transport, whose dialer
// refuses internal addresses unless the options allow them, and a redirect policy that
// subjects every hop to the rate limit.
func (s *Set) newClient() *http.Client {
	open := &net.Dialer{Resolver: s.opts.Resolver}
	guarded := &net.Dialer{Resolver: s.opts.Resolver, Control: guardControl}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		// checkURL has rewritten numeric spellings of IPv4 addresses already; should
		// one reach the dialler some other way, it is still dialled as the address it
		// means, and never sent to DNS.
		switch a, ok, err := hostAddr(host); {
		case err != nil:
			return nil, &badHostError{host: host, err: err}
		case ok && a.Is4() && a.String() != host:
			host = a.String()
			addr = net.JoinHostPort(host, port)
		}
		if s.opts.AllowPrivate || s.allowed(host, port) {
			return open.DialContext(ctx, network, addr)
		}
		if loopbackName(host) {
			// checkURL refuses these first; this keeps them from DNS should one come
			// by another way.
			return nil, &blockedError{host: host, class: "loopback", name: true}
		}
		conn, err := guarded.DialContext(ctx, network, addr)
		if be, ok := errors.AsType[*blockedError](err); ok {
			be.host = host
		}
		return conn, err
	}
	tr := &http.Transport{
		// No proxy from the environment: the address check would then judge the
		// proxy, and the proxy would resolve the target where it cannot be checked.
		Proxy:                 nil,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.opts.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return redirectError(fmt.Sprintf("stopped after %d redirects", maxRedirects))
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return redirectError(fmt.Sprintf("redirect to %s refused: only http and https URLs are fetched", redact.URL(req.URL)))
			}
			if err := s.checkURL(req.URL); err != nil {
				return err
			}
			return s.limiter.reserve(req.URL.Hostname())
		},
	}
}
