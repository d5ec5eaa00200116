package session

import (
	"strings"

	"github.com/agentls/agentls/confirm"
)

// Mode returns the approval mode the live session id runs in: its own, as SetMode set
// it, else the workspace's. It reports false when the session is not live.
func (h *Host) Mode(id string) (confirm.Mode, bool) {
	l := h.get(id)
	if l == nil {
		return "", false
	}
	if m := l.mode.Load(); m != nil && *m != "" {
		return *m, true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tb.Config().Policy.Mode(), true
}

// CallSession returns the id of the session a host's call id belongs to (see Host):
// the part before the first slash, or "" for the id of a call of no session.
func CallSession(callID string) string {
	id, _, ok := strings.Cut(callID, "/")
	if !ok {
		return ""
	}
	return id
}
