package toolbox

import (
	"context"

	"github.com/agentls/agentls/tools/files"
	"github.com/agentls/agentls/tools/shell"
)

// SessionState is what the tools keep for one session of a model: what it has read
// of the files, which its edits are held to (tools.readBeforeEdit), and its persistent
// shell (tools.shell.persistent). Calls a person runs directly have none.
type SessionState struct {
	reads *files.Reads
	shell *shell.Session
}

// NewSessionState returns the state of a new session: nothing read, a fresh shell.
func NewSessionState() *SessionState {
	return &SessionState{reads: files.NewReads(), shell: shell.NewSession()}
}

// WithSession returns ctx for the calls of the session whose state is st, under the
// settings in force: its reads are recorded and its edits checked unless
// tools.readBeforeEdit is false, and its commands share one shell when
// tools.shell.persistent is true. Whatever session state ctx carried before (that of
// the session whose call starts a sub-agent) no longer applies.
func (c *Config) WithSession(ctx context.Context, st *SessionState) context.Context {
	var reads *files.Reads
	if c.Settings.ReadBeforeEdit() {
		reads = st.reads
	}
	var sh *shell.Session
	if p := c.Settings.Tools.Shell.Persistent; p != nil && *p {
		sh = st.shell
	}
	return shell.WithSession(files.WithReads(ctx, reads), sh)
}
