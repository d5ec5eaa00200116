package settings

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentls/agentls/sandbox"
)

// SandboxSettings are tools.sandbox: how the commands agentls runs are contained. In
// a file it is `true`, `false` (Gemini CLI's meaning: contained or not) or an object
// {"enabled": "auto" | true | false, "network", "writablePaths", "hiddenPaths",
// "autoAllow"}. Gemini CLI's names of its own sandboxes ("docker", "podman",
// "sandbox-exec") ask for containment, which agentls gives with its own.
type SandboxSettings struct {
	// Enabled is "auto", "true", "false", or "" (auto).
	Enabled string `json:"enabled,omitempty"`
	// Network lets contained commands reach the network; unset means false.
	Network *bool `json:"network,omitempty"`
	// WritablePaths are writable besides the workspace, the temporary directory and
	// the build caches; HiddenPaths are hidden besides the user's keys.
	WritablePaths []string `json:"writablePaths,omitempty"`
	HiddenPaths   []string `json:"hiddenPaths,omitempty"`
	// AutoAllow lets a contained command that would be asked about only because no rule
	// names it run without a question in the default approval mode.
	AutoAllow *bool `json:"autoAllow,omitempty"`
}

// UnmarshalJSON reads the boolean, string and object forms.
func (s *SandboxSettings) UnmarshalJSON(data []byte) error {
	var b bool
	if err := json.Unmarshal(data, &b); err == nil {
		*s = SandboxSettings{Enabled: fmt.Sprint(b)}
		return nil
	}
	var str string
	if err := json.Unmarshal(data, &str); err == nil {
		switch str {
		case "auto", "true", "false":
		case "docker", "podman", "sandbox-exec", "runsc", "lxc":
			str = "true"
		default:
			return fmt.Errorf("tools.sandbox: %q is not one of true, false, \"auto\" or an object", str)
		}
		*s = SandboxSettings{Enabled: str}
		return nil
	}
	var obj struct {
		Enabled       json.RawMessage `json:"enabled"`
		Network       *bool           `json:"network"`
		WritablePaths []string        `json:"writablePaths"`
		HiddenPaths   []string        `json:"hiddenPaths"`
		AutoAllow     *bool           `json:"autoAllow"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("tools.sandbox: %w", err)
	}
	*s = SandboxSettings{Network: obj.Network, WritablePaths: obj.WritablePaths, HiddenPaths: obj.HiddenPaths, AutoAllow: obj.AutoAllow}
	if len(obj.Enabled) > 0 && string(obj.Enabled) != "null" {
		if err := json.Unmarshal(obj.Enabled, &b); err == nil {
			s.Enabled = fmt.Sprint(b)
		} else if err := json.Unmarshal(obj.Enabled, &str); err == nil && (str == "auto" || str == "true" || str == "false") {
			s.Enabled = str
		} else {
			return fmt.Errorf("tools.sandbox.enabled: %s is not one of \"auto\", true, false", obj.Enabled)
		}
	}
	return nil
}

// Config is the sandbox's configuration from s.
func (s SandboxSettings) Config() sandbox.Config {
	return sandbox.Config{
		Enabled:       sandbox.Enabled(s.Enabled),
		Network:       s.Network != nil && *s.Network,
		WritablePaths: s.WritablePaths,
		HiddenPaths:   s.HiddenPaths,
		AutoAllow:     s.AutoAllow != nil && *s.AutoAllow,
	}
}

// merge applies over, a later user-level file, to s.
func (s SandboxSettings) merge(over SandboxSettings) SandboxSettings {
	if over.Enabled != "" {
		s.Enabled = over.Enabled
	}
	if over.Network != nil {
		s.Network = over.Network
	}
	if over.AutoAllow != nil {
		s.AutoAllow = over.AutoAllow
	}
	s.WritablePaths = append(slices.Clone(s.WritablePaths), over.WritablePaths...)
	s.HiddenPaths = append(slices.Clone(s.HiddenPaths), over.HiddenPaths...)
	return s
}

// tighten applies a workspace's tools.sandbox to s, the user's: only what contains
// more (requiring containment, the network off, more hidden paths, autoAllow off).
// ignored lists what it could not apply.
func (s SandboxSettings) tighten(ws SandboxSettings) (out SandboxSettings, ignored []string) {
	switch ws.Enabled {
	case "":
	case "true":
		s.Enabled = "true"
	case "auto":
		if s.Enabled == "false" {
			s.Enabled = "auto"
		}
	default:
		ignored = append(ignored, "tools.sandbox.enabled "+ws.Enabled)
	}
	if ws.Network != nil {
		if *ws.Network {
			ignored = append(ignored, "tools.sandbox.network true")
		} else {
			s.Network = ws.Network
		}
	}
	if ws.AutoAllow != nil {
		if *ws.AutoAllow {
			ignored = append(ignored, "tools.sandbox.autoAllow true")
		} else {
			s.AutoAllow = ws.AutoAllow
		}
	}
	if len(ws.WritablePaths) > 0 {
		ignored = append(ignored, "tools.sandbox.writablePaths")
	}
	s.HiddenPaths = append(slices.Clone(s.HiddenPaths), ws.HiddenPaths...)
	return s, ignored
}
