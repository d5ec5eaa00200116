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

// callSession is what the tools of package interact need of the live session a call
// belongs to: its thoughts and its approval mode.
type callSession struct{ l *Live }

// Thought shows text as the model's thought.
func (s callSession) Thought(text string) {
	s.l.emit(Update{Kind: UpdateThought, Text: text})
}

// Mode returns the session's approval mode.
func (s callSession) Mode() confirm.Mode {
	m, _ := s.l.h.Mode(s.l.id)
	return m
}

// SetMode switches the session's approval mode and tells the front ends.
func (s callSession) SetMode(m confirm.Mode) {
	s.l.mode.Store(&m)
	s.l.emit(Update{Kind: UpdateMode, Mode: m})
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
