package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrOpenElsewhere is the error of deleting a session that another agentls process
// (an editor's server, another ACP client, a terminal) has open: it would write the
// session again with its next record.
var ErrOpenElsewhere = errors.New("the session is open in another agentls process")

// A session a Host keeps live is held: its file is open with a shared lock
// (lockShared), which a Delete elsewhere, asking for the exclusive lock, sees. The
// holds are the Store's, by session id, so that a Host lets go of what its sessions
// took (release) and a Delete in the same Store gives up its own hold first.

// hold takes the shared lock on the stored session id, unless the Store holds it
// already. A session deleted meanwhile (its file unlinked while the lock was waited
// for) fails with an error wrapping fs.ErrNotExist.
func (st *Store) hold(id string) error {
	st.holdMu.Lock()
	defer st.holdMu.Unlock()
	if _, ok := st.held[id]; ok {
		return nil
	}
	f, err := st.openFile(id, os.O_RDONLY)
	if err != nil {
		return fmt.Errorf("holding session %s: %w", id, err)
	}
	if err := lockShared(f); err != nil {
		f.Close()
		return fmt.Errorf("holding session %s: %w", id, err)
	}
	if unlinked(f) {
		f.Close()
		return fmt.Errorf("session %s was deleted: %w", id, fs.ErrNotExist)
	}
	if st.held == nil {
		st.held = map[string]*os.File{}
	}
	st.held[id] = f
	return nil
}

// release lets go of the Store's hold on id, if any.
func (st *Store) release(id string) {
	st.holdMu.Lock()
	defer st.holdMu.Unlock()
	if f, ok := st.held[id]; ok {
		f.Close()
		delete(st.held, id)
	}
}
