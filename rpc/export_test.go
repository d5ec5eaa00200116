package rpc

import "github.com/agentls/agentls/session"

// LiveSessions returns how many sessions s keeps in memory.
func LiveSessions(s *Server) int {
	s.mu.Lock()
	h := s.host
	s.mu.Unlock()
	return len(h.LiveIDs())
}

// MaxIdleSessions is how many idle sessions the server's host keeps, for the tests.
const MaxIdleSessions = session.DefaultMaxIdle
