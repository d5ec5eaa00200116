// Package web holds the built-in tools that reach the web: web_fetch, which fetches the
// http(s) URLs named in a prompt and hands their content to the model as Markdown, and
// google_web_search, which asks a Searcher (the Gemini API's grounded search, adapted by
// the caller). Their names and parameters follow Gemini CLI 0.61.
//
// web_fetch is careful about where it connects: loopback, private, link-local and
// unspecified addresses are refused at dial time — after name resolution, on every
// redirect hop — unless Options allow them, so neither a redirect nor a host name that
// resolves (or rebinds) to an internal address reaches the user's network. A host that
// is an address in one of the spellings browsers and curl accept ("2130706433",
// "0x7f000001", "127.1", "[::ffff:127.0.0.1]") is read as that address and judged
// before anything is resolved. Requests are limited per host, and every response is
// bounded in time and size. What web_fetch returns and logs names URLs without their
// secrets (see package redact).
package web

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"

	"github.com/agentls/agentls/tools"
)

// The tool names, as Gemini CLI calls them.
const (
	FetchName  = "web_fetch"
	SearchName = "google_web_search"
)

// Limits of web_fetch. MaxURLs and the rate follow Gemini CLI.
const (
	// MaxURLs is the most distinct URLs one web_fetch call may name.
	MaxURLs = 20
	// RequestsPerMinute is the most requests web_fetch sends to one host in any minute;
	// redirect hops count as requests.
	RequestsPerMinute = 10
	// DefaultTimeout bounds the fetch of one URL, redirects and body included.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBytes is how much of a response body is read; the rest is dropped and
	// the output says so.
	DefaultMaxBytes = 10 << 20
	// DefaultMaxChars is the most characters of one URL's content given to the model.
	DefaultMaxChars = 100_000
	// DefaultMaxTotalChars is the most characters of content one call gives the model
	// over all its URLs; short pages leave their unused share to long ones.
	DefaultMaxTotalChars = 250_000
)

// maxRedirects is how many redirects one fetch follows, as net/http does by default.
const maxRedirects = 10

// Options configure the web tools. The zero value is usable: private addresses refused,
// no search, Gemini CLI's limits.
type Options struct {
	// AllowPrivate lets web_fetch connect to loopback, private, link-local and
	// unspecified addresses, such as a development server on localhost.
	AllowPrivate bool
	// AllowHosts lists hosts web_fetch may reach even when they resolve to such an
	// address. An entry is a host name or IP address, matching any port, or host:port
	// ("[::1]:8080" for IPv6), matching that port only. Names match case-insensitively
	// and exactly: "example.com" does not allow "www.example.com".
	AllowHosts []string
	// Searcher answers google_web_search; without one that tool is not offered.
	Searcher Searcher

	// Timeout bounds the fetch of one URL; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds the body read from one URL; zero means DefaultMaxBytes.
	MaxBytes int64
	// MaxChars bounds the content of one URL given to the model; zero means
	// DefaultMaxChars.
	MaxChars int
	// MaxTotalChars bounds the content of one call; zero means DefaultMaxTotalChars.
	MaxTotalChars int
	// Resolver resolves host names for web_fetch; nil means net.DefaultResolver. The
	// address check applies to whatever it returns.
	Resolver *net.Resolver
	// Now is the clock of the rate limit; nil means time.Now.
	Now func() time.Time
	// Logger receives debug records of refused and failed fetches; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Set is one configured instance of the web tools. Its tools share an HTTP client (and
// so its idle connections) and the per-host rate limit.
type Set struct {
	opts    Options
	allow   []hostPort
	client  *http.Client
	limiter *limiter
	conv    *converter.Converter
	log     *slog.Logger
}

// New returns the web tools configured by opts.
func New(opts Options) *Set {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxChars <= 0 {
		opts.MaxChars = DefaultMaxChars
	}
	if opts.MaxTotalChars <= 0 {
		opts.MaxTotalChars = DefaultMaxTotalChars
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Set{
		opts:    opts,
		allow:   parseAllowHosts(opts.AllowHosts),
		limiter: newLimiter(RequestsPerMinute, time.Minute, opts.Now),
		conv: converter.NewConverter(converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(),
			table.NewTablePlugin(),
			strikethrough.NewStrikethroughPlugin(),
		)),
		log: opts.Logger,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.client = s.newClient()
	return s
}

// Tools returns web_fetch and, when a Searcher is set, google_web_search.
func (s *Set) Tools() []tools.Tool {
	ts := []tools.Tool{&fetchTool{set: s}}
	if s.opts.Searcher != nil {
		ts = append(ts, &searchTool{searcher: s.opts.Searcher})
	}
	return ts
}

// CloseIdleConnections closes the connections web_fetch keeps open for reuse.
func (s *Set) CloseIdleConnections() { s.client.CloseIdleConnections() }

// hostPort is one AllowHosts entry; an empty port matches any.
type hostPort struct {
	host, port string
}

func parseAllowHosts(entries []string) []hostPort {
	var hps []hostPort
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		hp := hostPort{host: e}
		if h, p, err := net.SplitHostPort(e); err == nil {
			hp = hostPort{host: h, port: p}
		}
		hp.host = normalizeHost(hp.host)
		hps = append(hps, hp)
	}
	return hps
}

// allowed reports whether host and port, as a URL names them, are in AllowHosts.
func (s *Set) allowed(host, port string) bool {
	host = normalizeHost(host)
	for _, hp := range s.allow {
		if hp.host == host && (hp.port == "" || hp.port == port) {
			return true
		}
	}
	return false
}

// normalizeHost makes hosts comparable: an IP address in its canonical form however it
// is spelled ("127.1", "0x7f000001" and "[::1]" as 127.0.0.1 and ::1), a name in lower
// case without the trailing dot of a fully qualified name. The rate limit and
// AllowHosts see one host in its many spellings as one.
func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if a, ok, _ := hostAddr(h); ok {
		return a.String()
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
