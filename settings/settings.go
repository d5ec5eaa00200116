// Package settings loads agentls's settings: the user's file in the configuration
// directory and the workspace's files, merged. Key names follow Gemini CLI's settings so
// that a project configured for it works unchanged.
//
// Workspace settings come from the repository being worked on, which may be hostile: in
// a workspace the user has not trusted (see package trust), a workspace file may tighten
// consent (exclude tools, add deny or ask rules) but never loosen it; its approval mode
// and its allow rules are ignored and reported in Ignored. In a trusted workspace they
// apply.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentls/agentls/confirm"
)

// Settings are the merged settings agentls runs with.
type Settings struct {
	// CoreTools, when not empty, enables only the tools it names; an entry may restrict
	// the shell tool to command prefixes, as in "run_shell_command(git status)".
	CoreTools []string `json:"coreTools,omitempty"`
	// ExcludeTools disables the tools it names (or, parameterised, shell command prefixes).
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// ApprovalMode is the starting approval mode: default, auto_edit, yolo or plan.
	ApprovalMode string `json:"approvalMode,omitempty"`
	// Policy holds the rules applied before anyone is asked.
	Policy PolicySettings `json:"policy,omitzero"`
	// Tools holds per-tool settings.
	Tools ToolSettings `json:"tools,omitzero"`

	// Model is the model to talk to, and how many model turns a prompt may take.
	Model ModelSettings `json:"model,omitzero"`
	// Provider says which kind of endpoint serves the model and where it is; empty
	// means Gemini, configured from the environment.
	Provider ProviderSettings `json:"provider,omitzero"`
	// MCPServers are the MCP servers to connect to, by name, in Gemini CLI's format.
	MCPServers map[string]MCPServer `json:"mcpServers,omitempty"`
	// ToolDiscoveryCommand and ToolCallCommand are older spellings of
	// tools.discoveryCommand and tools.callCommand.
	ToolDiscoveryCommand string `json:"toolDiscoveryCommand,omitempty"`
	ToolCallCommand      string `json:"toolCallCommand,omitempty"`
	// Web configures web_fetch.
	Web WebSettings `json:"web,omitzero"`
	// Agents are the sub-agents invoke_agent may start, by name, besides the built-in
	// codebase_investigator (which an entry of that name replaces).
	Agents map[string]AgentSettings `json:"agents,omitempty"`
	// Hooks are the commands run at moments of the agent loop (package hooks), in
	// Gemini CLI's format; every file's run, and a workspace's only when it is trusted.
	Hooks Hooks `json:"hooks,omitzero"`
	// HooksConfig turns hooks off, all or some.
	HooksConfig HooksConfig `json:"hooksConfig,omitzero"`

	// Commands, Skills and Extensions are the custom commands, Agent Skills and Gemini
	// CLI extensions of the user and of a trusted workspace, read from their own files
	// (addons.go), never from a settings file; ContextFiles are the extensions' context
	// files, read as memory files.
	Commands     []Command   `json:"-"`
	Skills       []Skill     `json:"-"`
	Extensions   []Extension `json:"-"`
	ContextFiles []string    `json:"-"`
}

// AgentSettings define a sub-agent: a child session with instructions and tools of its
// own, which the model starts with invoke_agent.
type AgentSettings struct {
	// Description tells the model what the agent is for.
	Description string `json:"description"`
	// SystemPrompt is added to the child session's system instruction.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Tools names the tools the child may call; empty means the read-only built-in
	// tools. Calls of writing tools still need the consent the parent's would.
	Tools []string `json:"tools,omitempty"`
	// MaxTurns caps the child's model turns (0: 30).
	MaxTurns int `json:"maxTurns,omitempty"`
}

// MCPServer configures one MCP server, in Gemini CLI's format: a command to start (stdio),
// or the address of a streamable HTTP (httpUrl) or SSE (url) server. Package tools/mcp
// connects to it (as its ServerConfig, which has the same fields).
type MCPServer struct {
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the process's environment; values may name variables of
	// agentls's own environment as $VAR or ${VAR}.
	Env map[string]string `json:"env,omitempty"`
	Cwd string            `json:"cwd,omitempty"`

	URL string `json:"url,omitempty"`
	// Type is the transport of URL: "http" (streamable HTTP, the default) or "sse".
	Type    string `json:"type,omitempty"`
	HTTPURL string `json:"httpUrl,omitempty"`
	// Headers are sent with every HTTP request; values may name environment variables
	// as $VAR or ${VAR}, so that tokens stay out of settings files.
	Headers map[string]string `json:"headers,omitempty"`

	// Timeout is the time a request may take, in milliseconds; 0 means 10 minutes.
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
	// OAuth configures OAuth for an HTTP or SSE server.
	OAuth *MCPOAuth `json:"oauth,omitempty"`
}

// MCPOAuth is the oauth block of an MCP server's settings, in Gemini CLI's format where
// it has one. Without it, OAuth is still tried for an HTTP or SSE server that answers 401,
// with the discovery and dynamic client registration of the MCP authorization spec.
type MCPOAuth struct {
	// Enabled false turns OAuth off for the server; nil or true leaves it on.
	Enabled *bool `json:"enabled,omitempty"`
	// ClientID and ClientSecret are a client registered beforehand with the server's
	// authorization server; the secret may name an environment variable as $VAR.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes replace the scopes discovered from the server when not empty.
	Scopes []string `json:"scopes,omitempty"`
	// RedirectURI is the loopback address the authorization server sends the browser
	// back to (default: http://127.0.0.1:<a free port>/callback). It must be an http
	// URL on 127.0.0.1, [::1] or localhost.
	RedirectURI string `json:"redirectUri,omitempty"`
	// ClientMetadataURL is the HTTPS URL of a client ID metadata document, used as the
	// client ID where the authorization server supports them.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// GrantType "client_credentials" authenticates agentls itself with ClientID and
	// ClientSecret, with no browser (the MCP client-credentials extension); empty means
	// the authorization code flow.
	GrantType string `json:"grantType,omitempty"`
	// PrivateKeyFile is a PEM private key (PKCS #8, SEC 1 EC or PKCS #1 RSA) with which
	// the client-credentials grant authenticates by a signed JWT (private_key_jwt,
	// RFC 7523) instead of ClientSecret; "~" and $VAR are expanded. KeyID is the key's
	// "kid", if the authorization server wants one; SigningAlgorithm is ES256, ES384
	// or RS256 (default: the one of the key's type).
	PrivateKeyFile   string `json:"privateKeyFile,omitempty"`
	KeyID            string `json:"keyId,omitempty"`
	SigningAlgorithm string `json:"signingAlgorithm,omitempty"`
	// AuthorizationURL and TokenURL skip discovery: the authorization code flow uses
	// these endpoints (Gemini CLI's fields), with ClientID, or else a client registered
	// dynamically at RegistrationURL. All must be https, or http on a loopback address.
	AuthorizationURL string `json:"authorizationUrl,omitempty"`
	TokenURL         string `json:"tokenUrl,omitempty"`
	RegistrationURL  string `json:"registrationUrl,omitempty"`
	// Audiences are sent, space-separated, as the "audience" parameter of the
	// authorization and token requests, as Gemini CLI does.
	Audiences []string `json:"audiences,omitempty"`
	// TokenParamName is read for compatibility with Gemini CLI's settings and not
	// used, as in Gemini CLI: the token always goes in the Authorization header, never
	// in a URL, where servers and proxies log it.
	TokenParamName string `json:"tokenParamName,omitempty"`
	// Enterprise, when set, authorizes through the person's enterprise identity
	// provider (the MCP enterprise-managed authorization extension): an ID token from
	// it is exchanged there for an identity assertion grant (ID-JAG, RFC 8693), which
	// the server's authorization server takes for an access token (RFC 7523) from
	// ClientID and ClientSecret.
	Enterprise *MCPEnterpriseAuth `json:"enterprise,omitempty"`
}

// MCPEnterpriseAuth names the enterprise identity provider of enterprise-managed
// authorization and agentls's client registered with it.
type MCPEnterpriseAuth struct {
	// Issuer is the identity provider's issuer URL; its OpenID configuration gives the
	// endpoints of the login and, unless TokenURL is set, of the token exchange.
	Issuer   string `json:"issuer"`
	TokenURL string `json:"tokenUrl,omitempty"`
	// ClientID and ClientSecret are agentls's client at the identity provider; the
	// secret may name an environment variable as $VAR.
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes of the login (default: openid).
	Scopes []string `json:"scopes,omitempty"`
	// IDTokenCommand, when set, is a command whose standard output is the person's ID
	// token at the identity provider (a company's single sign-on tool, `gcloud auth
	// print-identity-token`): agentls runs it (sh -c, 30 s at most) whenever it needs an
	// ID token, instead of the login in the browser. IDToken is the token itself,
	// which may name an environment variable as $VAR (a token is short-lived: a
	// command is the usual way). Only one of them may be set.
	IDTokenCommand string `json:"idTokenCommand,omitempty"`
	IDToken        string `json:"idToken,omitempty"`
}

// ModelSettings name the model. In a file, "model" may also be just the model's name
// (Gemini CLI's older form).
type ModelSettings struct {
	Name string `json:"name,omitempty"`
	// MaxSessionTurns caps the model turns of one prompt; 0 means the default (100).
	MaxSessionTurns int `json:"maxSessionTurns,omitempty"`
	// IncludeThoughts asks a Gemini model for summaries of its reasoning, which front
	// ends show as thoughts (ACP's "thoughts" config option sets it per session).
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

// UnmarshalJSON accepts the object form and the bare name.
func (m *ModelSettings) UnmarshalJSON(data []byte) error {
	var name string
	if err := json.Unmarshal(data, &name); err == nil {
		*m = ModelSettings{Name: name}
		return nil
	}
	type plain ModelSettings
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("model: want a model name or {\"name\": …}: %w", err)
	}
	*m = ModelSettings(p)
	return nil
}

// ProviderSettings say which endpoint serves the model. Keys are better left to the
// environment (GEMINI_API_KEY, OPENAI_API_KEY); APIKey is never logged.
type ProviderSettings struct {
	// Type is "gemini" (the default), "openai" (any OpenAI-compatible endpoint) or
	// "scripted" (replays Script; for demos and tests).
	Type string `json:"type,omitempty"`
	// BaseURL overrides the endpoint (GOOGLE_GEMINI_BASE_URL or OPENAI_BASE_URL
	// otherwise).
	BaseURL string `json:"baseUrl,omitempty"`
	APIKey  string `json:"apiKey,omitempty"`
	// TextOnly is for models without function calling: tools are described in the
	// system instruction and calls parsed from the reply.
	TextOnly bool `json:"textOnly,omitempty"`
	// ContextWindow is the model's input limit in tokens, for models agentls does not
	// know.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Script is the JSON script a scripted provider replays.
	Script string `json:"script,omitempty"`
}

// WebSettings configure web_fetch.
type WebSettings struct {
	// AllowPrivateAddresses lets web_fetch reach loopback and private-network
	// addresses, which it refuses by default.
	AllowPrivateAddresses bool `json:"allowPrivateAddresses,omitempty"`
}

// PolicySettings are the policy rules.
type PolicySettings struct {
	Rules []confirm.Rule `json:"rules,omitempty"`
}

// ToolSettings are per-tool settings. Core and Exclude are Gemini CLI's newer spelling of
// CoreTools and ExcludeTools; both are honoured.
type ToolSettings struct {
	Core    []string `json:"core,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Ripgrep, when false, makes grep_search use its pure-Go engine even if rg is present.
	Ripgrep *bool `json:"useRipgrep,omitempty"`
	// Shell configures run_shell_command.
	Shell ShellSettings `json:"shell,omitzero"`
	// ReadBeforeEdit, when false, lets a session's model edit a file (replace,
	// write_file over an existing file, notebook_edit) it has not read, or that changed
	// since it read it. Unset means true: such an edit is refused with "read it first".
	ReadBeforeEdit *bool `json:"readBeforeEdit,omitempty"`
	// DiscoveryCommand prints the declarations of project tools; CallCommand runs one
	// (with the tool's name as its last argument and the arguments on stdin).
	DiscoveryCommand string `json:"discoveryCommand,omitempty"`
	CallCommand      string `json:"callCommand,omitempty"`
	// Sandbox says how the commands agentls runs are contained (see SandboxSettings).
	Sandbox SandboxSettings `json:"sandbox,omitzero"`
}

// ShellSettings configure run_shell_command.
type ShellSettings struct {
	// InactivityTimeout stops a command that prints nothing for this long, as a Go
	// duration ("5m", "90s"). Empty means five minutes.
	InactivityTimeout string `json:"inactivityTimeout,omitempty"`
	// PassEnv names secrets of agentls's environment that commands may see after all.
	// The commands of run_shell_command and of discovered tools do not inherit the keys
	// agentls itself uses (GEMINI_API_KEY, GOOGLE_API_KEY, OPENAI_API_KEY and the
	// variables that MCP server headers name) unless they are listed here. Lists of
	// several files add up; a workspace's file sets it only when the folder is trusted.
	PassEnv []string `json:"passEnv,omitempty"`
	// Persistent, when true, gives each session a persistent shell: the working
	// directory and exported variables a command leaves carry to the session's next
	// command, as in one terminal. Each command is still analysed and approved alone.
	Persistent *bool `json:"persistent,omitempty"`
}

// ShellTimeout returns the parsed inactivity timeout, or 0 for the default.
func (s Settings) ShellTimeout() (time.Duration, error) {
	if s.Tools.Shell.InactivityTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s.Tools.Shell.InactivityTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("tools.shell.inactivityTimeout %q: want a positive duration such as \"5m\"", s.Tools.Shell.InactivityTimeout)
	}
	return d, nil
}

// ReadBeforeEdit reports whether a session's model must have read the current text of
// a file before it edits it (tools.readBeforeEdit; true unless set to false).
func (s Settings) ReadBeforeEdit() bool {
	return s.Tools.ReadBeforeEdit == nil || *s.Tools.ReadBeforeEdit
}

// Discovery returns the discovery and call commands from either spelling.
func (s Settings) Discovery() (discover, call string) {
	discover, call = s.Tools.DiscoveryCommand, s.Tools.CallCommand
	if discover == "" {
		discover = s.ToolDiscoveryCommand
	}
	if call == "" {
		call = s.ToolCallCommand
	}
	return discover, call
}

// Core returns the enabled-tools list from either spelling.
func (s Settings) Core() []string {
	return append(append([]string(nil), s.CoreTools...), s.Tools.Core...)
}

// Exclude returns the disabled-tools list from either spelling.
func (s Settings) Exclude() []string {
	return append(append([]string(nil), s.ExcludeTools...), s.Tools.Exclude...)
}

// ConfigDir returns agentls's user configuration directory ($XDG_CONFIG_HOME/agentls,
// else ~/.config/agentls).
func ConfigDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the configuration directory: %w", err)
	}
	return filepath.Join(d, "agentls"), nil
}

// WorkspaceFiles returns the settings files read from a workspace root, slash-separated
// and relative to it, in order; later files override earlier ones.
func WorkspaceFiles() []string {
	return []string{".gemini/settings.json", ".agentls/settings.json"}
}

// Loaded is the result of Load: the merged settings, the files they came from, and what
// of the workspace's settings was ignored and why.
type Loaded struct {
	Settings Settings
	Files    []string
	// Ignored says, for each setting of an untrusted workspace that was ignored, where
	// it is, why, and how to trust the folder.
	Ignored []string
	// Trusted reports that the workspace settings were read as trusted.
	Trusted bool
	// UntrustedTools names the workspace's tool sources (MCP servers, the discovery
	// and call commands) that were skipped because the workspace is not trusted.
	UntrustedTools []string
	// Untrusted are the entries of Ignored that trusting the workspace would apply.
	Untrusted []string
}

// ignoreUntrusted records a workspace setting ignored because the workspace is not
// trusted.
func (l *Loaded) ignoreUntrusted(msg string) {
	l.Ignored = append(l.Ignored, msg)
	l.Untrusted = append(l.Untrusted, msg)
}

// Options are the optional inputs of LoadWith.
type Options struct {
	// Overrides are user-level settings, such as the ones an editor passes in its
	// initializationOptions: they are merged over the user's settings file (see Merge)
	// as if they were written in it, before the workspace files.
	Overrides Settings
	// Trusted says the user trusts the workspace (package trust decides): its settings
	// files may then set the approval mode and add allow rules. Otherwise they can only
	// tighten consent.
	Trusted bool
	// GeminiDir is Gemini CLI's user directory, whose settings.json is read for the
	// keys both programs share (never written); empty means ~/.gemini.
	GeminiDir string
	// DeferAddons leaves the extensions, custom commands and skills unread: the caller
	// reads them later (ReadAddons) and merges them in (Addons.Merge).
	DeferAddons bool
}

// geminiDir returns o.GeminiDir, else ~/.gemini, else "".
func (o Options) geminiDir() string {
	if o.GeminiDir != "" {
		return o.GeminiDir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".gemini")
	}
	return ""
}

// LoadWith reads the user's settings file in configDir (if any) and the workspace
// settings files under root (if any) and merges them, with o's user-level overrides and
// the user's trust in the workspace. A file that exists but cannot be parsed is an error
// naming it.
func LoadWith(configDir, root string, o Options) (*Loaded, error) {
	overrides := o.Overrides
	l := &Loaded{Trusted: o.Trusted}
	if geminiDir := o.geminiDir(); geminiDir != "" {
		p := filepath.Join(geminiDir, "settings.json")
		// Gemini CLI's own file is its business (it allows comments, for one): one
		// agentls cannot read is passed over with a note rather than stopping agentls.
		gemini, ok, err := readFile(p)
		if err != nil {
			l.Ignored = append(l.Ignored, fmt.Sprintf("%s ignored: %v", p, err))
		}
		if ok && err == nil {
			l.Files = append(l.Files, p)
			l.Settings = shared(gemini)
		}
		// Gemini CLI's policy files are the user's rules, as their settings' are.
		rules, warnings := readPolicyDir(policyTier{confirm.SourceUser, "Gemini CLI policies"}, filepath.Join(geminiDir, "policies"))
		l.Settings.Policy.Rules = append(l.Settings.Policy.Rules, rules...)
		l.Ignored = append(l.Ignored, warnings...)
	}
	user, ok, err := readFile(filepath.Join(configDir, "settings.json"))
	if err != nil {
		return nil, err
	}
	if ok {
		l.Files = append(l.Files, filepath.Join(configDir, "settings.json"))
		l.Settings = Merge(l.Settings, user)
	}
	l.Settings = Merge(l.Settings, overrides)
	for _, name := range WorkspaceFiles() {
		if root == "" {
			break
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		ws, ok, err := readFile(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		l.Files = append(l.Files, p)
		l.mergeWorkspace(root, p, ws)
	}
	if root != "" {
		dir := filepath.Join(root, ".gemini", "policies")
		rules, warnings := readPolicyDir(policyTier{confirm.SourceWorkspace, "Gemini CLI policies"}, dir)
		l.Ignored = append(l.Ignored, warnings...)
		for _, r := range rules {
			l.addWorkspaceRules(root, r.Origin, []confirm.Rule{r})
		}
	}
	if dir := systemDir(); dir != "" {
		// The machine's policy files: Gemini CLI's admin tier, above every other rule.
		rules, warnings := readPolicyDir(policyTier{confirm.SourceAdmin, "Gemini CLI system policies"}, filepath.Join(dir, "policies"))
		l.Settings.Policy.Rules = append(l.Settings.Policy.Rules, rules...)
		l.Ignored = append(l.Ignored, warnings...)
	}
	if !o.DeferAddons {
		l.apply(readAddons(dirsOf(configDir, root, o)))
	}
	return l, nil
}

// systemDir is the folder of Gemini CLI's system settings, whose policies folder holds
// the machine's rules: the folder of GEMINI_CLI_SYSTEM_SETTINGS_PATH when it is set, as
// Gemini CLI has it, else the system's place for it.
func systemDir() string {
	if p := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		return filepath.Dir(p)
	}
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/GeminiCli"
	case "windows":
		return `C:\ProgramData\gemini-cli`
	}
	return "/etc/gemini-cli"
}

// Merge returns base with the settings of over applied on top, as a later file of the
// same scope would: a value over sets replaces base's (an enable list too, when over
// has one, even an empty one), while excludes and policy rules accumulate, so that
// overrides can replace what is enabled but never lift an exclusion or a rule of base.
// Neither argument is modified.
func Merge(base, over Settings) Settings {
	out := base
	out.ExcludeTools = append(slices.Clone(base.ExcludeTools), over.ExcludeTools...)
	out.Tools.Exclude = append(slices.Clone(base.Tools.Exclude), over.Tools.Exclude...)
	out.Policy.Rules = append(slices.Clone(base.Policy.Rules), over.Policy.Rules...)
	if over.CoreTools != nil || over.Tools.Core != nil {
		out.CoreTools, out.Tools.Core = slices.Clone(over.CoreTools), slices.Clone(over.Tools.Core)
	}
	if over.ApprovalMode != "" {
		out.ApprovalMode = over.ApprovalMode
	}
	if over.Tools.Ripgrep != nil {
		v := *over.Tools.Ripgrep
		out.Tools.Ripgrep = &v
	}
	if over.Tools.Shell.InactivityTimeout != "" {
		out.Tools.Shell.InactivityTimeout = over.Tools.Shell.InactivityTimeout
	}
	out.Tools.Sandbox = base.Tools.Sandbox.merge(over.Tools.Sandbox)
	if over.Tools.ReadBeforeEdit != nil {
		v := *over.Tools.ReadBeforeEdit
		out.Tools.ReadBeforeEdit = &v
	}
	if over.Tools.Shell.Persistent != nil {
		v := *over.Tools.Shell.Persistent
		out.Tools.Shell.Persistent = &v
	}
	mergeModel(&out, over)
	mergeTrusted(&out, over)
	return out
}

// mergeModel applies the model settings of over, which only choose among models and
// need no trust.
func mergeModel(out *Settings, over Settings) {
	if over.Model.Name != "" {
		out.Model.Name = over.Model.Name
	}
	if over.Model.MaxSessionTurns != 0 {
		out.Model.MaxSessionTurns = over.Model.MaxSessionTurns
	}
}

// mergeTrusted applies the settings of over that run commands, reach servers or send
// keys somewhere: an untrusted workspace may set none of them.
func mergeTrusted(out *Settings, over Settings) {
	p := &out.Provider
	setIf(&p.Type, over.Provider.Type)
	setIf(&p.BaseURL, over.Provider.BaseURL)
	setIf(&p.APIKey, over.Provider.APIKey)
	setIf(&p.Script, over.Provider.Script)
	setIf(&out.Tools.DiscoveryCommand, over.Tools.DiscoveryCommand)
	setIf(&out.Tools.CallCommand, over.Tools.CallCommand)
	setIf(&out.ToolDiscoveryCommand, over.ToolDiscoveryCommand)
	setIf(&out.ToolCallCommand, over.ToolCallCommand)
	if over.Provider.TextOnly {
		p.TextOnly = true
	}
	if over.Provider.ContextWindow != 0 {
		p.ContextWindow = over.Provider.ContextWindow
	}
	if over.Web.AllowPrivateAddresses {
		out.Web.AllowPrivateAddresses = true
	}
	if len(over.Tools.Shell.PassEnv) > 0 {
		// Hands keys to the commands the model runs.
		out.Tools.Shell.PassEnv = append(slices.Clone(out.Tools.Shell.PassEnv), over.Tools.Shell.PassEnv...)
	}
	if len(over.Agents) > 0 {
		// An agent's instructions steer the model; only trusted settings give them.
		agents := maps.Clone(out.Agents)
		if agents == nil {
			agents = make(map[string]AgentSettings)
		}
		maps.Copy(agents, over.Agents)
		out.Agents = agents
	}
	// Hooks run commands at every step of the agent loop.
	mergeHooks(out, over)
	if len(over.MCPServers) > 0 {
		servers := maps.Clone(out.MCPServers)
		if servers == nil {
			servers = make(map[string]MCPServer)
		}
		maps.Copy(servers, over.MCPServers)
		out.MCPServers = servers
	}
}

// setIf sets *dst to src unless src is empty.
func setIf(dst *string, src string) {
	if src != "" {
		*dst = src
	}
}

// untrustedParts lists, for an untrusted workspace file, the settings that mergeTrusted
// would apply and that are therefore ignored. Tools reports those that would have added
// tools (MCP servers and the discovery command).
func untrustedParts(ws Settings) (all, tools []string) {
	for _, name := range slices.Sorted(maps.Keys(ws.MCPServers)) {
		tools = append(tools, fmt.Sprintf("mcpServers.%s", name))
	}
	discover, call := ws.Discovery()
	if discover != "" {
		tools = append(tools, "tools.discoveryCommand")
	}
	if call != "" {
		tools = append(tools, "tools.callCommand")
	}
	all = slices.Clone(tools)
	if ws.Provider != (ProviderSettings{}) {
		all = append(all, "provider")
	}
	if ws.Web.AllowPrivateAddresses {
		all = append(all, "web.allowPrivateAddresses")
	}
	if len(ws.Tools.Shell.PassEnv) > 0 {
		all = append(all, "tools.shell.passEnv")
	}
	for _, name := range slices.Sorted(maps.Keys(ws.Agents)) {
		all = append(all, "agents."+name)
	}
	all = append(all, hookParts(ws)...)
	return all, tools
}

// mergeWorkspace applies a workspace file of root: all of it when the workspace is
// trusted, else only the parts that can only tighten consent.
// addWorkspaceRules adds the policy rules of the workspace file: its allow rules only
// when the workspace is trusted.
func (l *Loaded) addWorkspaceRules(root, file string, rules []confirm.Rule) {
	for _, r := range rules {
		if r.Decision == confirm.Allow && !l.Trusted {
			l.ignoreUntrusted(fmt.Sprintf("%s: allow rule for %q ignored (the folder is not trusted; to trust it, run: agentls trust %s)", file, r.ToolName, root))
			continue
		}
		// Even a trusted workspace's rules only tighten the user's (see confirm.Source).
		r.Source = confirm.SourceWorkspace
		l.Settings.Policy.Rules = append(l.Settings.Policy.Rules, r)
	}
}

func (l *Loaded) mergeWorkspace(root, file string, ws Settings) {
	s := &l.Settings
	hint := fmt.Sprintf("the folder is not trusted; to trust it, run: agentls trust %s", root)
	switch {
	case ws.ApprovalMode == "":
	case l.Trusted:
		s.ApprovalMode = ws.ApprovalMode
	default:
		l.ignoreUntrusted(fmt.Sprintf("%s: approvalMode %q ignored (%s)", file, ws.ApprovalMode, hint))
	}
	if core := ws.Core(); len(core) > 0 {
		// An enable list narrows what runs: with a user list too, only tools on both stay.
		if user := s.Core(); len(user) > 0 {
			names := map[string]bool{}
			for _, e := range core {
				names[toolName(e)] = true
			}
			core = nil
			for _, e := range user {
				if names[toolName(e)] {
					core = append(core, e)
				}
			}
			if len(core) == 0 {
				core = []string{"(none)"}
			}
		}
		s.CoreTools, s.Tools.Core = core, nil
	}
	s.ExcludeTools = append(s.ExcludeTools, ws.Exclude()...)
	l.addWorkspaceRules(root, file, ws.Policy.Rules)
	if ws.Tools.Ripgrep != nil {
		s.Tools.Ripgrep = ws.Tools.Ripgrep
	}
	var ignoredSandbox []string
	s.Tools.Sandbox, ignoredSandbox = s.Tools.Sandbox.tighten(ws.Tools.Sandbox)
	for _, what := range ignoredSandbox {
		l.Ignored = append(l.Ignored, fmt.Sprintf("%s: %s ignored (a workspace's settings can only make the sandbox stricter)", file, what))
	}
	if ws.Tools.Shell.InactivityTimeout != "" {
		s.Tools.Shell.InactivityTimeout = ws.Tools.Shell.InactivityTimeout
	}
	if ws.Tools.Shell.Persistent != nil {
		v := *ws.Tools.Shell.Persistent
		s.Tools.Shell.Persistent = &v
	}
	switch rbe := ws.Tools.ReadBeforeEdit; {
	case rbe == nil:
	case *rbe || l.Trusted:
		v := *rbe
		s.Tools.ReadBeforeEdit = &v
	default:
		// Turning the rule off lets the model overwrite text it never saw.
		l.ignoreUntrusted(fmt.Sprintf("%s: tools.readBeforeEdit false ignored (%s)", file, hint))
	}
	mergeModel(s, ws)
	if l.Trusted {
		mergeTrusted(s, ws)
		return
	}
	// MCP servers reached by URL are skipped too, not only those started as commands:
	// their headers expand environment variables, which would send the user's tokens
	// wherever the workspace points.
	all, tools := untrustedParts(ws)
	for _, part := range all {
		l.ignoreUntrusted(fmt.Sprintf("%s: %s ignored (%s)", file, part, hint))
	}
	for _, part := range tools {
		l.UntrustedTools = append(l.UntrustedTools, fmt.Sprintf("%s in %s", part, file))
	}
}

// shared returns the settings of Gemini CLI's user file that agentls shares with it.
func shared(g Settings) Settings {
	return Settings{
		CoreTools:    g.CoreTools,
		ExcludeTools: g.ExcludeTools,
		Model:        ModelSettings{Name: g.Model.Name},
		MCPServers:   g.MCPServers,
		Tools: ToolSettings{
			Core: g.Tools.Core, Exclude: g.Tools.Exclude,
			DiscoveryCommand: g.Tools.DiscoveryCommand, CallCommand: g.Tools.CallCommand,
			Sandbox: g.Tools.Sandbox,
		},
		Hooks:       g.Hooks,
		HooksConfig: g.HooksConfig,
	}
}

// toolName returns the tool name of a coreTools entry, without its "(prefix)" part.
func toolName(entry string) string {
	if i := strings.IndexByte(entry, '('); i >= 0 {
		return strings.TrimSpace(entry[:i])
	}
	return strings.TrimSpace(entry)
}

func readFile(path string) (Settings, bool, error) {
	var s Settings
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("reading settings: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, true, nil
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, false, fmt.Errorf("settings file %s: %w", path, err)
	}
	if len(s.Hooks.Events) > 0 {
		s.Hooks = s.Hooks.withSource(path)
	}
	return s, true, nil
}
