package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ServerConfig is one entry of the mcpServers setting, in Gemini CLI's format. A server
// is started as a process (Command) or reached over HTTP (URL with Type "http", the
// default, or "sse"; HTTPURL is Gemini CLI's older spelling of a streamable HTTP URL).
type ServerConfig struct {
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the process's environment; values may name variables of
	// agentls's own environment as $VAR or ${VAR}.
	Env map[string]string `json:"env,omitempty"`
	Cwd string            `json:"cwd,omitempty"`

	URL     string `json:"url,omitempty"`
	Type    string `json:"type,omitempty"`
	HTTPURL string `json:"httpUrl,omitempty"`
	// Headers are sent with every HTTP request; values may name environment variables
	// as $VAR or ${VAR}, so that tokens stay out of settings files.
	Headers map[string]string `json:"headers,omitempty"`

	// Timeout is the time a request may take, in milliseconds (Gemini CLI's default
	// of 10 minutes when zero).
	Timeout int `json:"timeout,omitempty"`
	// Trust skips confirmation for the server's tools.
	Trust bool `json:"trust,omitempty"`
	// ReadOnly says that the server's tools change nothing, so that plan mode runs
	// them. Only the user's settings can say so: a tool's own readOnlyHint is the
	// server's claim, shown to people but never trusted.
	ReadOnly bool `json:"readOnly,omitempty"`
	// IncludeTools, when not empty, registers only the tools it names; ExcludeTools
	// never registers the tools it names, and wins over IncludeTools.
	IncludeTools []string `json:"includeTools,omitempty"`
	ExcludeTools []string `json:"excludeTools,omitempty"`
	Description  string   `json:"description,omitempty"`
	// OAuth configures OAuth for an HTTP or SSE server (see OAuthConfig).
	OAuth *OAuthConfig `json:"oauth,omitempty"`
}

// The transports a ServerConfig can name.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Timeouts used when ServerConfig.Timeout is zero. Gemini CLI bounds requests by ten
// minutes; connecting gets a shorter bound so that one server that hangs at start does
// not hold up Manager.Start for ten minutes.
const (
	DefaultRequestTimeout = 10 * time.Minute
	DefaultConnectTimeout = 30 * time.Second
)

// Transport returns how the server is reached: TransportStdio, TransportHTTP or
// TransportSSE. A configuration that names none, or several, is an error saying so.
func (c ServerConfig) Transport() (string, error) {
	n := 0
	for _, s := range []string{c.Command, c.URL, c.HTTPURL} {
		if s != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return "", errors.New(`neither "command" nor "url" nor "httpUrl" is set`)
	case n > 1:
		return "", errors.New(`only one of "command", "url" and "httpUrl" may be set`)
	case c.Command != "":
		return TransportStdio, nil
	case c.HTTPURL != "":
		return TransportHTTP, nil
	}
	switch strings.ToLower(c.Type) {
	case "", "http", "streamable-http", "streamablehttp":
		return TransportHTTP, nil
	case "sse":
		return TransportSSE, nil
	}
	return "", fmt.Errorf(`"type" is %q; want "http" or "sse"`, c.Type)
}

// Validate reports what is wrong with the configuration, if anything, in words for the
// person who wrote the settings.
func (c ServerConfig) Validate() error {
	if _, err := c.Transport(); err != nil {
		return err
	}
	if c.Timeout < 0 {
		return fmt.Errorf(`"timeout" is %d; want a number of milliseconds, or 0 for the default`, c.Timeout)
	}
	return validateOAuth(c.OAuth)
}

// RequestTimeout is the time one request to the server may take.
func (c ServerConfig) RequestTimeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout) * time.Millisecond
	}
	return DefaultRequestTimeout
}

// ConnectTimeout is the time connecting to the server, up to its first tool list, may
// take.
func (c ServerConfig) ConnectTimeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout) * time.Millisecond
	}
	return DefaultConnectTimeout
}

// includes reports whether the include/exclude filters let the tool called name through.
func (c ServerConfig) includes(name string) bool {
	if slices.Contains(c.ExcludeTools, name) {
		return false
	}
	return len(c.IncludeTools) == 0 || slices.Contains(c.IncludeTools, name)
}
