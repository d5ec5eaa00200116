package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestHostAddr(t *testing.T) {
	tests := []struct {
		host string
		want string // the address; "" for a name; "error" for an invalid host
	}{
		// The spellings of 127.0.0.1 that browsers and curl accept.
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.0x1", "127.0.0.1"},
		{"127.000.000.001", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"2130706433.", "127.0.0.1"},
		{"[127.0.0.1]", "127.0.0.1"}, // not a URL's host, but what Go would dial for it
		// Parts and their ranges.
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"0.0", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"1.16777215", "1.255.255.255"},
		{"1.2.65535", "1.2.255.255"},
		{"192.168.257", "192.168.1.1"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0x08080808", "8.8.8.8"},
		{"134744072", "8.8.8.8"},
		{"8.8.2056", "8.8.8.8"},
		{"010.010.010.010", "8.8.8.8"},
		{"１２７.０.０.１", "127.0.0.1"}, // full-width, mapped by IDNA as net/http does
		{"127。0。0。1", "127.0.0.1"}, // ideographic full stops
		// Invalid: what ends in a number must be an address.
		{"4294967296", "error"},
		{"1.2.3.256", "error"},
		{"256.1", "error"},
		{"1.16777216", "error"},
		{"1.2.3.4.5", "error"},
		{"08.0.0.1", "error"},
		{"0x100000000", "error"},
		{"99999999999999999999999", "error"},
		{"example.0x", "error"},
		{"example.123", "error"},
		{"1..2", "error"},
		// Names.
		{"example.com", ""},
		{"example.com.", ""},
		{"localhost", ""},
		{"1a", ""},
		{"0x1g", ""},
		{"123.example", ""},
		{"0x7f000001.example", ""},
		{"-1", ""},
		{"+1", ""},
		{".", ""},
		// IPv6, bracketed or not.
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[::ffff:7f00:1]", "::ffff:127.0.0.1"},
		{"[0:0:0:0:0:ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[fe80::1%eth0]", "fe80::1%eth0"},
		{"[::1", "error"},
		{"[:::1]", "error"},
	}
	for _, tt := range tests {
		addr, ok, err := hostAddr(tt.host)
		var got string
		switch {
		case err != nil:
			got = "error"
		case ok:
			got = addr.String()
		case addr.IsValid():
			t.Errorf("hostAddr(%q) returned address %s for a name", tt.host, addr)
		}
		if got != tt.want {
			t.Errorf("hostAddr(%q) = %q (%v), want %q", tt.host, got, err, tt.want)
		}
	}
}

// dnsRecorder is a resolver that records every DNS query it is asked to send, and
// answers none.
type dnsRecorder struct {
	mu    sync.Mutex
	calls int
}

func (r *dnsRecorder) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			r.mu.Lock()
			r.calls++
			r.mu.Unlock()
			return nil, errors.New("no DNS in this test")
		},
	}
}

func (r *dnsRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// TestFetchNumericHostsRefusedWithoutDNS checks that the spellings of internal addresses
// browsers accept are read as those addresses and refused before anything is resolved
// or dialled, with a message naming the address meant.
func TestFetchNumericHostsRefusedWithoutDNS(t *testing.T) {
	srv := serve(t, text("internal", "text/plain"))
	port := srv.port()
	var dns dnsRecorder
	// A set per URL, so that the rate limit, which counts the spellings of one
	// address as one host, plays no part.
	set := func() *Set { return newSet(t, Options{Resolver: dns.resolver()}) }

	// The recorder does see the queries of names, or this test could not fail.
	if _, err := fetch(t, set(), "read http://www.example.org:"+port+"/"); err == nil || dns.count() == 0 {
		t.Fatalf("a name: err = %v after %d DNS queries; the recorder is not consulted", err, dns.count())
	}
	before := dns.count()

	tests := []struct {
		host, addr, class string
	}{
		{"2130706433", "127.0.0.1", "loopback"},
		{"0x7f000001", "127.0.0.1", "loopback"},
		{"0177.0.0.1", "127.0.0.1", "loopback"},
		{"127.1", "127.0.0.1", "loopback"},
		{"127.0.0.1.", "127.0.0.1", "loopback"},
		{"0x7f.0.0.1", "127.0.0.1", "loopback"},
		{"017700000001", "127.0.0.1", "loopback"},
		{"127.255.255.254", "", "loopback"},
		{"0x7fffffff", "127.255.255.255", "loopback"},
		{"[::1]", "", "loopback"},
		{"[0:0:0:0:0:0:0:1]", "::1", "loopback"},
		{"[::ffff:127.0.0.1]", "127.0.0.1", "loopback"},
		{"[::ffff:7f00:1]", "127.0.0.1", "loopback"},
		{"[::127.0.0.1]", "::7f00:1", "loopback"}, // IPv4-compatible
		{"10.0.0.1", "", "private"},
		{"167772161", "10.0.0.1", "private"},
		{"0xa000001", "10.0.0.1", "private"},
		{"012.0.0.1", "10.0.0.1", "private"},
		{"10.1", "10.0.0.1", "private"},
		{"0xa.0xffffff", "10.255.255.255", "private"},
		{"172.16.0.1", "", "private"},
		{"2886729729", "172.16.0.1", "private"},
		{"0xac100001", "172.16.0.1", "private"},
		{"0254.020.0.1", "172.16.0.1", "private"},
		{"172.31.65535", "172.31.255.255", "private"},
		{"192.168.0.1", "", "private"},
		{"3232235521", "192.168.0.1", "private"},
		{"0xc0a80001", "192.168.0.1", "private"},
		{"0300.0250.0.1", "192.168.0.1", "private"},
		{"192.168.1", "192.168.0.1", "private"},
		{"[::ffff:192.168.0.1]", "192.168.0.1", "private"},
		{"169.254.169.254", "", "link-local"},
		{"2852039166", "169.254.169.254", "link-local"},
		{"0xa9fea9fe", "169.254.169.254", "link-local"},
		{"0251.0376.0251.0376", "169.254.169.254", "link-local"},
		{"169.254.43518", "169.254.169.254", "link-local"},
		{"169.16689662", "169.254.169.254", "link-local"},
		{"[::ffff:169.254.169.254]", "169.254.169.254", "link-local"},
		{"[::ffff:a9fe:a9fe]", "169.254.169.254", "link-local"},
		{"0.0.0.0", "", "unspecified"},
		{"0", "0.0.0.0", "unspecified"},
		{"0x0", "0.0.0.0", "unspecified"},
		{"00.0", "0.0.0.0", "unspecified"},
		{"[::]", "", "unspecified"},
		{"100.64.0.1", "", "reserved"},
		{"1681915905", "100.64.0.1", "reserved"},
		{"0x64400001", "100.64.0.1", "reserved"},
		{"100.127.65535", "100.127.255.255", "reserved"},
		{"[fd00::1]", "", "private"},
		{"[fc00::1]", "", "private"},
		{"[fe80::1]", "", "link-local"},
		{"[fe80::1%25eth0]", "", "link-local"},
		{"１２７.０.０.１", "127.0.0.1", "loopback"}, // full-width digits, mapped by IDNA
		{"[64:ff9b::a00:1]", "", "private"},    // NAT64 of 10.0.0.1
		{"[2002:7f00:1::]", "", "loopback"},    // 6to4 of 127.0.0.1
	}
	for _, tt := range tests {
		target := "http://" + tt.host + ":" + port + "/"
		_, err := fetch(t, set(), "read "+target)
		host := strings.TrimSuffix(strings.TrimPrefix(tt.host, "["), "]")
		want := "a " + tt.class + " address"
		if tt.addr != "" {
			want = host + " is " + tt.addr + ", " + want
		}
		if testutil.ErrorType(err) != tools.ErrPolicyViolation || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want policy_violation saying %q", target, err, want)
		}
	}
	if n := dns.count() - before; n != 0 {
		t.Errorf("%d DNS queries for numeric hosts", n)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
}

// TestFetchLoopbackNamesRefusedWithoutDNS: "localhost" and the names under it mean
// this machine (RFC 6761), so web_fetch refuses them in every spelling (case, trailing
// dot, IDNA) before any DNS query: a resolver may send "localhost." or
// "x.localhost" to DNS, where the model picks what the query says. The controls show
// that the recorder sees a name's query, and that the loopback server is reached by
// name when the user allows it.
func TestFetchLoopbackNamesRefusedWithoutDNS(t *testing.T) {
	srv := serve(t, text("internal", "text/plain"))
	port := srv.port()
	var dns dnsRecorder
	set := func() *Set { return newSet(t, Options{Resolver: dns.resolver()}) }

	if _, err := fetch(t, set(), "read http://www.example.org:"+port+"/"); err == nil || dns.count() == 0 {
		t.Fatalf("a name: err = %v after %d DNS queries; the recorder is not consulted", err, dns.count())
	}
	before := dns.count()
	for _, host := range []string{
		"localhost", "LOCALHOST", "LocalHost", "localhost.", "LOCALHOST.", "localhost..",
		"a.localhost", "x.y.LOCALHOST", "a.localhost.", "A.LocalHost.",
		"ｌｏｃａｌｈｏｓｔ", "a。localhost", // full-width letters and an ideographic full stop, mapped by IDNA
	} {
		target := "http://" + host + ":" + port + "/"
		_, err := fetch(t, set(), "read "+target)
		if testutil.ErrorType(err) != tools.ErrPolicyViolation || !strings.Contains(err.Error(), "is a loopback name") {
			t.Errorf("%s: err = %v, want policy_violation saying it is a loopback name", target, err)
		}
	}
	if n := dns.count() - before; n != 0 {
		t.Errorf("%d DNS queries for loopback names", n)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the loopback server was reached %d times", n)
	}

	// Not loopback names: these are asked of DNS, as any name is.
	for _, host := range []string{"localhost.example.org", "notlocalhost", "localhostx."} {
		n := dns.count()
		if _, err := fetch(t, set(), "read http://"+host+":"+port+"/"); strings.Contains(fmt.Sprint(err), "loopback name") || dns.count() == n {
			t.Errorf("%s: err = %v after %d DNS queries; want it resolved, not refused as a loopback name", host, err, dns.count()-n)
		}
	}

	// Allowed by the user, localhost is fetched (from /etc/hosts, without DNS).
	allowed := newSet(t, Options{Resolver: dns.resolver(), AllowHosts: []string{"localhost:" + port}})
	if res, err := fetch(t, allowed, "read http://localhost:"+port+"/"); err != nil || !strings.Contains(res.Output, "internal") {
		t.Errorf("allowed localhost: %v, %v", res, err)
	}
}

// TestCheckURLPublicSpellings checks that public addresses spelled as numbers are read
// as the addresses browsers read, and rewritten to them, so that the dialler connects
// there instead of asking DNS about "0x08080808". Nothing is dialled.
func TestCheckURLPublicSpellings(t *testing.T) {
	s := New(Options{})
	tests := []struct {
		url, want string
	}{
		{"http://0x08080808/x?y=1", "http://8.8.8.8/x?y=1"},
		{"https://134744072:8443/", "https://8.8.8.8:8443/"},
		{"http://8.8.2056/", "http://8.8.8.8/"},
		{"http://010.010.010.010/", "http://8.8.8.8/"},
		{"http://0x1.0x2.0x3.0x4/", "http://1.2.3.4/"},
		{"http://8.8.8.8./", "http://8.8.8.8/"},
		{"http://100.128.0.1/", "http://100.128.0.1/"},
		{"http://0xac200001/", "http://172.32.0.1/"}, // just outside 172.16/12
		{"http://[::ffff:8.8.8.8]/", "http://[::ffff:8.8.8.8]/"},
		{"http://[2001:4860:4860::8888]:8080/", "http://[2001:4860:4860::8888]:8080/"},
		{"http://example.com/", "http://example.com/"},
		{"http://123.example/", "http://123.example/"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.checkURL(u); err != nil || u.String() != tt.want {
			t.Errorf("checkURL(%s): %v, URL %s; want %s", tt.url, err, u, tt.want)
		}
	}
	for _, bad := range []string{"http://1.2.3.256/", "http://example.0x10000000000/"} {
		u, _ := url.Parse(bad)
		if err := s.checkURL(u); !errors.As(err, new(*badHostError)) {
			t.Errorf("checkURL(%s) = %v, want an invalid host", bad, err)
		}
	}
}

// TestFetchNumericHostsAllowed checks that permission covers every spelling of an
// address, which is then reached without DNS and named in its usual form.
func TestFetchNumericHostsAllowed(t *testing.T) {
	var gotHost string
	var mu sync.Mutex
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotHost = r.Host
		mu.Unlock()
		w.Write([]byte("local page"))
	})
	port := srv.port()
	for _, opts := range []Options{
		{AllowPrivate: true},
		{AllowHosts: []string{"127.0.0.1:" + port}},
		{AllowHosts: []string{"0x7f.1"}},
	} {
		var dns dnsRecorder
		opts.Resolver = dns.resolver()
		s := newSet(t, opts)
		for _, host := range []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "127.0.0.1."} {
			res, err := fetch(t, s, "read http://"+host+":"+port+"/")
			if err != nil || !strings.Contains(res.Output, "local page") {
				t.Errorf("%+v, %s: %v", opts.AllowHosts, host, err)
				continue
			}
			mu.Lock()
			h := gotHost
			mu.Unlock()
			if h != "127.0.0.1:"+port {
				t.Errorf("%s: the server was asked for host %q, want 127.0.0.1:%s", host, h, port)
			}
		}
		// The client's dialler reads numeric hosts too, should a URL reach it without
		// checkURL.
		if opts.AllowPrivate {
			resp, err := s.client.Get("http://2130706433:" + port + "/")
			if err != nil {
				t.Errorf("client.Get: %v", err)
			} else {
				resp.Body.Close()
			}
		}
		if n := dns.count(); n != 0 {
			t.Errorf("%+v: %d DNS queries", opts.AllowHosts, n)
		}
	}
}

// TestFetchRedirectToNumericHostRefused checks redirects: a Location spelling a loopback
// address as a number is read as such and refused, without DNS.
func TestFetchRedirectToNumericHostRefused(t *testing.T) {
	internal := serve(t, text("internal", "text/plain"))
	var dns dnsRecorder
	public := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://0x7f000001:"+internal.port()+"/", http.StatusFound)
	})
	s := newSet(t, Options{AllowHosts: []string{public.hostPort()}, Resolver: dns.resolver()})
	_, err := fetch(t, s, "read "+public.URL+"/")
	if testutil.ErrorType(err) != tools.ErrPolicyViolation || !strings.Contains(err.Error(), "0x7f000001 is 127.0.0.1, a loopback address") {
		t.Errorf("err = %v, want policy_violation naming 0x7f000001 as 127.0.0.1", err)
	}
	if n := internal.hits.Load(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
	if n := dns.count(); n != 0 {
		t.Errorf("%d DNS queries", n)
	}
}

func TestNormalizeHostSpellings(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "2130706433", "0x7F000001", "0177.0.0.1", "127.1", "127.0.0.1."} {
		if got := normalizeHost(h); got != "127.0.0.1" {
			t.Errorf("normalizeHost(%q) = %q, want 127.0.0.1", h, got)
		}
	}
	for _, h := range []string{"[::FFFF:127.0.0.1]", "::ffff:7f00:1", "[0:0:0:0:0:ffff:7f00:1]"} {
		if got := normalizeHost(h); got != "::ffff:127.0.0.1" {
			t.Errorf("normalizeHost(%q) = %q, want ::ffff:127.0.0.1", h, got)
		}
	}
	// The rate limit counts one host however it is spelled.
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := newLimiter(2, time.Minute, clock.Now)
	for _, h := range []string{"0x08080808", "8.8.8.8"} {
		if err := l.reserve(h); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	if err := l.reserve("134744072"); err == nil {
		t.Error("a third spelling of 8.8.8.8 was not counted with the other two")
	}
}
