package settings

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// HookEvents are the events hooks may be set for, in Gemini CLI's order.
var HookEvents = []string{
	"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel",
	"BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress", "Notification",
}

// Hooks are the settings key "hooks", in Gemini CLI's format: for each event, groups of
// commands run when it fires (package hooks runs them). Gemini CLI's older spelling,
// with "enabled" and "disabled" inside "hooks" rather than in "hooksConfig", is read too.
type Hooks struct {
	// Events are the hook groups of each event, by the event's name.
	Events map[string][]HookGroup
	// Enabled and Disabled are the older spelling of HooksConfig's.
	Enabled  *bool
	Disabled []string
}

// HookGroup is one entry of an event's list: the commands to run when the matcher
// matches (a regular expression of tool names for BeforeTool and AfterTool, an exact
// string for the other events; empty or "*" matches everything).
type HookGroup struct {
	Matcher string `json:"matcher,omitempty"`
	// Sequential runs the group's commands one after another, each seeing what the
	// previous one rewrote; otherwise they run at the same time.
	Sequential bool          `json:"sequential,omitempty"`
	Hooks      []HookCommand `json:"hooks"`
	// Source is the settings file the group came from; not read from JSON.
	Source string `json:"-"`
	// Dir is the folder of the extension that brought the group, which its commands
	// may read inside the sandbox (their scripts are there); not read from JSON.
	Dir string `json:"-"`
	// Env are that extension's settings (its .env), in its commands' environment as
	// in its servers'; not read from JSON.
	Env map[string]string `json:"-"`
}

// HookCommand is one hook: a shell command, with its JSON input on standard input
// and its JSON answer on standard output.
type HookCommand struct {
	// Type is "command", the only kind there is.
	Type    string `json:"type"`
	Command string `json:"command"`
	// Name identifies the hook in messages and in hooksConfig.disabled.
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Timeout is how long the hook may run, in milliseconds (0: 60000).
	Timeout int `json:"timeout,omitempty"`
}

// HooksConfig is the settings key "hooksConfig".
type HooksConfig struct {
	// Enabled false runs no hook at all.
	Enabled *bool `json:"enabled,omitempty"`
	// Disabled names hooks (by name or command) that do not run.
	Disabled []string `json:"disabled,omitempty"`
	// Notifications is read for compatibility with Gemini CLI; agentls shows what
	// hooks decided on the tool call or in the session either way.
	Notifications *bool `json:"notifications,omitempty"`
}

// UnmarshalJSON reads the events' lists, and the older "enabled" and "disabled".
func (h *Hooks) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("hooks: want an object of events: %w", err)
	}
	*h = Hooks{}
	for key, v := range raw {
		switch key {
		case "enabled":
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return fmt.Errorf("hooks.enabled: %w", err)
			}
			h.Enabled = &b
		case "disabled":
			if err := json.Unmarshal(v, &h.Disabled); err != nil {
				return fmt.Errorf("hooks.disabled: %w", err)
			}
		default:
			if !slices.Contains(HookEvents, key) {
				// Gemini CLI may add events; an unknown one is left for it.
				continue
			}
			var groups []HookGroup
			if err := json.Unmarshal(v, &groups); err != nil {
				return fmt.Errorf("hooks.%s: want a list of {\"matcher\", \"hooks\": [...]}: %w", key, err)
			}
			if h.Events == nil {
				h.Events = map[string][]HookGroup{}
			}
			h.Events[key] = groups
		}
	}
	return nil
}

// MarshalJSON writes the events' lists.
func (h Hooks) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for k, v := range h.Events {
		out[k] = v
	}
	if h.Enabled != nil {
		out["enabled"] = *h.Enabled
	}
	if len(h.Disabled) > 0 {
		out["disabled"] = h.Disabled
	}
	return json.Marshal(out)
}

// IsZero reports whether h sets nothing (for omitzero).
func (h Hooks) IsZero() bool { return len(h.Events) == 0 && h.Enabled == nil && h.Disabled == nil }

// HooksOn reports whether hooks run at all (hooksConfig.enabled, or the older
// hooks.enabled; true unless set to false).
func (s Settings) HooksOn() bool {
	if s.HooksConfig.Enabled != nil {
		return *s.HooksConfig.Enabled
	}
	return s.Hooks.Enabled == nil || *s.Hooks.Enabled
}

// HooksDisabled returns the names and commands of the hooks that do not run.
func (s Settings) HooksDisabled() []string {
	return append(slices.Clone(s.HooksConfig.Disabled), s.Hooks.Disabled...)
}

// withSource returns h's groups marked as coming from file.
func (h Hooks) withSource(file string) Hooks {
	out := h
	out.Events = map[string][]HookGroup{}
	for event, groups := range h.Events {
		gs := slices.Clone(groups)
		for i := range gs {
			if gs[i].Source == "" {
				gs[i].Source = file
			}
		}
		out.Events[event] = gs
	}
	return out
}

// mergeHooks adds the hooks of over to out's: every file's hooks run, those of the
// earlier files first; a later enabled setting wins and disabled lists add up.
func mergeHooks(out *Settings, over Settings) {
	if len(over.Hooks.Events) > 0 {
		events := maps.Clone(out.Hooks.Events)
		if events == nil {
			events = map[string][]HookGroup{}
		}
		for event, groups := range over.Hooks.Events {
			events[event] = append(slices.Clone(events[event]), groups...)
		}
		out.Hooks.Events = events
	}
	if over.Hooks.Enabled != nil {
		v := *over.Hooks.Enabled
		out.Hooks.Enabled = &v
	}
	if over.HooksConfig.Enabled != nil {
		v := *over.HooksConfig.Enabled
		out.HooksConfig.Enabled = &v
	}
	if over.HooksConfig.Notifications != nil {
		v := *over.HooksConfig.Notifications
		out.HooksConfig.Notifications = &v
	}
	out.Hooks.Disabled = append(slices.Clone(out.Hooks.Disabled), over.Hooks.Disabled...)
	out.HooksConfig.Disabled = append(slices.Clone(out.HooksConfig.Disabled), over.HooksConfig.Disabled...)
	if len(out.Hooks.Disabled) == 0 {
		out.Hooks.Disabled = nil
	}
	if len(out.HooksConfig.Disabled) == 0 {
		out.HooksConfig.Disabled = nil
	}
}

// hookParts lists the hook settings of an untrusted workspace file, which are ignored.
func hookParts(ws Settings) []string {
	var out []string
	for _, event := range HookEvents {
		if n := len(ws.Hooks.Events[event]); n > 0 {
			out = append(out, "hooks."+event)
		}
	}
	if ws.Hooks.Enabled != nil || len(ws.Hooks.Disabled) > 0 || ws.HooksConfig.Enabled != nil || len(ws.HooksConfig.Disabled) > 0 {
		out = append(out, "hooksConfig")
	}
	return out
}
