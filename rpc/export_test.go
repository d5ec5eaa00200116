package rpc

// LiveSessions returns how many sessions s keeps in memory.
func LiveSessions(s *Server) int {
	s.agents.mu.Lock()
	defer s.agents.mu.Unlock()
	return len(s.agents.live)
}

// MaxIdleSessions is maxIdleSessions, for the tests.
const MaxIdleSessions = maxIdleSessions
