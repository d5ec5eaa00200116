package mcp

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
	// IncludeTools, when not empty, registers only the tools it names; ExcludeTools
	// never registers the tools it names, and wins over IncludeTools.
	IncludeTools []string `json:"includeTools,omitempty"`
	ExcludeTools []string `json:"excludeTools,omitempty"`
	Description  string   `json:"description,omitempty"`
}
