package web

import (
	"net/netip"
	"testing"
	"time"
)

func TestAddressClass(t *testing.T) {
	tests := []struct {
		addr string
		want string
	}{
		{"127.0.0.1", "loopback"},
		{"127.1.2.3", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "reserved"},
		{"100.64.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"2002:7f00:1::", "loopback"},            // 6to4 wrapping 127.0.0.1
		{"64:ff9b::a00:1", "private"},            // NAT64 wrapping 10.0.0.1
		{"::ffff:169.254.169.254", "link-local"}, // IPv4-mapped
		{"::127.0.0.1", "loopback"},              // IPv4-compatible
		{"::10.0.0.1", "private"},
		{"::ffff:0:a9fe:a9fe", "link-local"}, // IPv4-translated
		{"::8.8.8.8", ""},
		{"::ffff:0:808:808", ""},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"2001:4860:4860::8888", ""},
		{"2002:808:808::", ""},   // 6to4 wrapping 8.8.8.8
		{"64:ff9b::808:808", ""}, // NAT64 wrapping 8.8.8.8
	}
	for _, tt := range tests {
		if got := addressClass(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("addressClass(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestAllowHosts(t *testing.T) {
	s := New(Options{AllowHosts: []string{"Dev.Example.", "127.0.0.1:8080", "[::1]:9000", "::2", "  "}})
	tests := []struct {
		host, port string
		want       bool
	}{
		{"dev.example", "80", true},
		{"DEV.example", "443", true},
		{"dev.example.", "1", true},
		{"www.dev.example", "80", false},
		{"127.0.0.1", "8080", true},
		{"127.0.0.1", "8081", false},
		{"::1", "9000", true},
		{"::1", "9001", false},
		{"::2", "1", true},
		{"", "80", false},
	}
	for _, tt := range tests {
		if got := s.allowed(tt.host, tt.port); got != tt.want {
			t.Errorf("allowed(%q, %q) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := newLimiter(3, time.Minute, clock.Now)
	for i := range 3 {
		if err := l.reserve("a.example"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		clock.Advance(10 * time.Second)
	}
	// Now at +30 s, the window holds requests at +0, +10, +20.
	err := l.reserve("A.example.")
	re, ok := err.(*rateLimitError)
	if !ok || re.retry != 30*time.Second {
		t.Fatalf("4th request: %v, want a rate limit error with 30 s to wait", err)
	}
	if err := l.reserve("b.example"); err != nil {
		t.Errorf("another host: %v", err)
	}
	clock.Advance(30 * time.Second) // +60 s: the request at +0 leaves the window
	if err := l.reserve("a.example"); err != nil {
		t.Errorf("after the oldest left the window: %v", err)
	}
	if err := l.reserve("a.example"); err == nil {
		t.Error("window full again, yet allowed")
	}
	clock.Advance(2 * time.Minute)
	l.mu.Lock()
	l.prune(clock.Now())
	n := len(l.sent)
	l.mu.Unlock()
	if n != 0 {
		t.Errorf("%d hosts remembered after their window passed", n)
	}
}
