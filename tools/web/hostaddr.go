package web

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// hostAddr reports whether host, as a URL names it (with or without the brackets of an
// IPv6 address), is an IP address, and which, reading it as the WHATWG URL standard
// does, and so as browsers and curl do: besides dotted decimal, an IPv4 address may be
// written as one number ("2130706433"), in hex ("0x7f000001") or octal ("0177.0.0.1")
// parts, with fewer than four parts ("127.1", the last part filling the remaining
// bytes), and with a trailing dot ("127.0.0.1."). Go's resolver takes none of these
// spellings for an address and asks DNS about them instead, so web_fetch reads them
// here, before any name is resolved.
//
// A host whose last label is a number but which is no valid IPv4 address ("1.2.3.256",
// "example.0x") is an error, as it is to a browser: it is neither an address nor a name
// DNS could answer for. A host that is a name returns ok false and no error.
func hostAddr(host string) (addr netip.Addr, ok bool, err error) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.Contains(host, ":") {
		// Only an IPv6 address holds a colon; netip reads its embedded-IPv4 forms
		// ("::ffff:127.0.0.1") as the standard does. The zone url.Parse accepts is kept.
		a, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, false, fmt.Errorf("%s is not a valid IPv6 address", host)
		}
		return a, true, nil
	}
	if !isASCII(host) {
		// net/http maps a non-ASCII host through IDNA before dialling it, so
		// full-width digits ("１２７.０.０.１") and ideographic full stops reach the
		// dialler as an ordinary address; read them as it will.
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return netip.Addr{}, false, nil // not a name net/http can dial either
		}
		host = a
	}
	if !endsInNumber(host) {
		return netip.Addr{}, false, nil
	}
	a, err := parseIPv4(host)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("%s is not a valid IPv4 address: %w", host, err)
	}
	return a, true, nil
}

// loopbackName reports whether host is a name that means this machine whatever DNS
// says (RFC 6761, section 6.3): "localhost" and the names under it, in any case, with
// or without the trailing dot of a fully qualified name, and in any spelling that IDNA
// maps to one of those, since net/http dials the mapped form.
func loopbackName(host string) bool {
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return false // not a name net/http can dial
		}
		host = a
	}
	h := strings.TrimRight(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber is the standard's "ends in a number checker": a host whose last label
// (ignoring one trailing dot) is decimal digits, or parses as an IPv4 number, must be
// an IPv4 address.
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, err := parseIPv4Number(last)
	return err == nil
}

// parseIPv4 is the standard's IPv4 parser: one to four dot-separated numbers, each
// decimal, hex or octal, all but the last at most 255 and the last filling the bytes
// that remain.
func parseIPv4(host string) (netip.Addr, error) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than four parts")
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parseIPv4Number(p)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("part %q: %w", p, err)
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, fmt.Errorf("part %d is larger than 255", n)
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, fmt.Errorf("last part %d is too large for the %d byte(s) it fills", nums[last], 5-len(nums))
	}
	v := uint32(nums[last])
	for i, n := range nums[:last] {
		v |= uint32(n) << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// parseIPv4Number is the standard's IPv4 number parser: "0x" or "0X" starts a hex
// number, another leading 0 an octal one, and a prefix alone is zero. Values that do
// not fit 64 bits are errors; they are too large for any part anyway.
func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, nil
	}
	// ParseUint would also take a sign or underscores; the standard takes digits only.
	for _, c := range []byte(s) {
		if !isDigit(c, base) {
			return 0, fmt.Errorf("%q is not a base %d digit", c, base)
		}
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

func isDigit(c byte, base int) bool {
	switch base {
	case 8:
		return '0' <= c && c <= '7'
	case 16:
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	}
	return '0' <= c && c <= '9'
}
