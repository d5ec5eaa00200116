package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agentls/agentls/confirm"
)

// Gemini CLI's policy files, in the format of its policy engine (docs/reference/
// policy-engine.md), become agentls's own policy rules (confirm.Rule). Those of the
// user (~/.gemini/policies/*.toml) are the user's rules, as their settings' rules are;
// those of a workspace (.gemini/policies/*.toml) are the workspace's, which only tighten
// the user's (allow rules count in a trusted workspace alone, as in its settings). An
// extension's policies/*.toml have the source confirm.SourceExtension: they rank below
// the user's rules, as Gemini CLI's extension tier ranks below its user tier, and they
// may deny or ask but never allow, as Gemini CLI drops an extension's allow rules. A rule using a feature agentls's
// rules do not have is refused as a whole, with a warning: it is never applied in part,
// so that no rule matches more, or decides less strictly, than its author wrote.

// policyFields are the fields of a Gemini CLI policy rule that agentls maps.
var policyFields = []string{"toolName", "mcpName", "argsPattern", "commandPrefix", "commandRegex", "decision", "priority", "denyMessage", "allowRedirection"}

// refusedFields say why the other fields Gemini CLI knows are not mapped.
var refusedFields = map[string]string{
	"modes":           "agentls's rules apply in every approval mode",
	"interactive":     "agentls's rules apply whoever answers",
	"subagent":        "agentls's rules apply to every agent",
	"toolAnnotations": "agentls's rules do not match a tool's annotations",
}

// policyTier is whose policy files are read: an extension's (deny and ask only),
// the user's (~/.gemini/policies), a workspace's (.gemini/policies) or the machine's
// (Gemini CLI's system policies folder, above all the others).
type policyTier struct {
	source confirm.Source
	// name names the tier in the rules' origins, for example "extension guard".
	name string
}

// readPolicies reads the rules of an extension's policy files. It returns the rules
// and a warning for each rule, file or safety checker left out.
func readPolicies(extension string, files []string) ([]confirm.Rule, []string) {
	return readPolicyFiles(policyTier{confirm.SourceExtension, "extension " + extension}, files)
}

// readPolicyDir reads, as tier, the policy files (*.toml) of a Gemini CLI policies
// folder dir (the user's, a workspace's or the machine's): their rules, and a warning
// for each rule or file left out. A folder that does not exist has none.
func readPolicyDir(tier policyTier, dir string) ([]confirm.Rule, []string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	return readPolicyFiles(tier, files)
}

// readPolicyFiles reads the policy files of a tier.
func readPolicyFiles(tier policyTier, files []string) ([]confirm.Rule, []string) {
	var rules []confirm.Rule
	var warnings []string
	for _, file := range files {
		rs, ws := readPolicyFile(tier, file)
		rules = append(rules, rs...)
		warnings = append(warnings, ws...)
	}
	return rules, warnings
}

// readPolicyFile reads one policy file of tier.
func readPolicyFile(tier policyTier, file string) ([]confirm.Rule, []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", file, err)}
	}
	var f map[string]any
	if err := toml.Unmarshal(data, &f); err != nil {
		return nil, []string{fmt.Sprintf("%s: not read, no rule of it applies: %v", file, err)}
	}
	var warnings []string
	var rules []confirm.Rule
	for _, key := range slices.Sorted(maps.Keys(f)) {
		switch key {
		case "rule":
		case "safety_checker":
			n := 1
			if list, ok := f[key].([]map[string]any); ok {
				n = len(list)
			}
			warnings = append(warnings, fmt.Sprintf("%s: %d safety checker(s) ignored: agentls has no safety checkers", file, n))
		default:
			warnings = append(warnings, fmt.Sprintf("%s: %q ignored: a policy file has [[rule]] tables", file, key))
		}
	}
	list, ok := f["rule"].([]map[string]any)
	if f["rule"] != nil && !ok {
		return nil, append(warnings, fmt.Sprintf("%s: \"rule\" is not a list of [[rule]] tables; no rule of it applies", file))
	}
	origin := fmt.Sprintf("%s (%s)", tier.name, filepath.Base(file))
	if tier.source != confirm.SourceExtension {
		origin = file
	}
	for i, m := range list {
		rs, err := policyRules(m, tier.source != confirm.SourceExtension)
		if err == nil {
			for j := range rs {
				rs[j].Source, rs[j].Origin = tier.source, origin
				// The policy checks what the settings loader cannot: globs and patterns.
				if _, err = confirm.NewPolicy(confirm.ModeDefault, rs[j:j+1], nil); err != nil {
					break
				}
			}
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: rule %d refused: %v", file, i+1, err))
			continue
		}
		rules = append(rules, rs...)
	}
	return rules, warnings
}

// policyRules maps one Gemini CLI policy rule onto agentls's rules: one per tool name
// of its toolName list. allow says whether the tier may allow calls.
func policyRules(m map[string]any, allow bool) ([]confirm.Rule, error) {
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if why, ok := refusedFields[key]; ok {
			return nil, fmt.Errorf("%s is not supported (%s)", key, why)
		}
		if !slices.Contains(policyFields, key) {
			return nil, fmt.Errorf("unknown field %q", key)
		}
	}
	var r confirm.Rule
	switch d, _ := m["decision"].(string); d {
	case "deny":
		r.Decision = confirm.Deny
	case "ask_user":
		r.Decision = confirm.Ask
	case "allow":
		if !allow {
			return nil, errors.New(`decision "allow": an extension may not allow a call, as in Gemini CLI`)
		}
		r.Decision = confirm.Allow
	default:
		return nil, fmt.Errorf("decision %q is not deny or ask_user", d)
	}
	if v, ok := m["priority"]; ok {
		p, ok := v.(int64)
		if !ok || p < 0 || p > 999 {
			return nil, fmt.Errorf("priority %v is not a whole number from 0 to 999", v)
		}
		r.Priority = int(p)
	}
	var err error
	str := func(key string) string {
		v, ok := m[key]
		if !ok || err != nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			err = fmt.Errorf("%s is not a string", key)
		}
		return s
	}
	mcpName := str("mcpName")
	r.ArgsPattern, r.CommandRegex, r.DenyMessage = str("argsPattern"), str("commandRegex"), str("denyMessage")
	if err != nil {
		return nil, err
	}
	if _, ok := m["allowRedirection"].(bool); !ok && m["allowRedirection"] != nil {
		return nil, errors.New("allowRedirection is not true or false")
	}
	if r.CommandPrefix, err = strings1(m, "commandPrefix"); err != nil {
		return nil, err
	}
	names, err := strings1(m, "toolName")
	if err != nil {
		return nil, err
	}
	shell := len(r.CommandPrefix) > 0 || r.CommandRegex != ""
	switch {
	case len(r.CommandPrefix) > 0 && r.CommandRegex != "":
		return nil, errors.New("commandPrefix and commandRegex cannot be used together")
	case shell && r.ArgsPattern != "":
		return nil, errors.New("commandPrefix or commandRegex cannot be used with argsPattern")
	case shell && (mcpName != "" || len(names) > 0 && !slices.Equal(names, []string{"run_shell_command"})):
		return nil, errors.New(`commandPrefix and commandRegex apply only to toolName "run_shell_command"`)
	case shell:
		names = []string{"run_shell_command"}
	}
	if mcpName != "" {
		// agentls names an MCP server's tools SERVER__TOOL.
		server := globEscaper.Replace(mcpName)
		if len(names) == 0 {
			names = []string{"*"}
		}
		for i, n := range names {
			if n != "*" {
				n = globEscaper.Replace(n)
			}
			names[i] = server + "__" + n
		}
	}
	for _, n := range names {
		if mcpName == "" && strings.HasPrefix(n, "mcp_") {
			return nil, fmt.Errorf("toolName %q: agentls names MCP tools SERVER__TOOL; name the server with mcpName", n)
		}
	}
	if len(names) == 0 {
		names = []string{""}
	}
	out := make([]confirm.Rule, len(names))
	for i, n := range names {
		out[i] = r
		out[i].ToolName = n
		out[i].CommandPrefix = slices.Clone(r.CommandPrefix)
	}
	return out, nil
}

// globEscaper quotes the characters of a glob.
var globEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "{", `\{`)

// strings1 returns the field key of m, a string or a list of strings, as a list.
func strings1(m map[string]any, key string) ([]string, error) {
	switch v := m[key].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s is not a string or a list of strings", key)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not a string or a list of strings", key)
}

// extensionHooks reads the hooks/hooks.json at path of the extension in extDir:
// {"hooks": {EVENT: [groups]}}, in the format of the settings' hooks, the extension's
// variables substituted.
func extensionHooks(path, extDir string, env map[string]string, vars *strings.Replacer) (Hooks, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Hooks{}, err
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return Hooks{}, err
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return Hooks{}, errors.New(`want an object with "hooks"`)
	}
	if _, ok := top["hooks"].(map[string]any); !ok {
		return Hooks{}, errors.New(`"hooks" must be an object of events`)
	}
	data, err = json.Marshal(substitute(top["hooks"], vars))
	if err != nil {
		return Hooks{}, err
	}
	var h Hooks
	if err := json.Unmarshal(data, &h); err != nil {
		return Hooks{}, err
	}
	// Only the events' lists count: hooksConfig is the user's.
	h = Hooks{Events: h.Events}.withSource(path)
	for _, groups := range h.Events {
		for i := range groups {
			groups[i].Dir, groups[i].Env = extDir, env
		}
	}
	return h, nil
}
