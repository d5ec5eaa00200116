package toolbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/trust"
)

// TrustScope says what SetTrust records.
type TrustScope string

// The scopes of SetTrust.
const (
	// TrustFolder trusts the workspace's first root.
	TrustFolder TrustScope = "folder"
	// TrustParent trusts the root's parent and every folder under it.
	TrustParent TrustScope = "parent"
	// TrustRevoke removes the entries that trust the root.
	TrustRevoke TrustScope = "revoke"
)

// TrustChange is what SetTrust did.
type TrustChange struct {
	// Trusted says whether the workspace is trusted now.
	Trusted bool `json:"trusted"`
	// Path is the folder whose entry was set: the root, or its parent.
	Path string `json:"path"`
	// Message says it in a sentence for the user.
	Message string `json:"message"`
}

// SetTrust records the user's trust in the workspace's first root in the trust file of
// the configuration directory, then reads the settings again, with the overrides in
// force, and swaps in what they now allow (as Reconfigure does; the front end starts
// the external tools when the Reconfiguration says so). Only a person may call it: it
// is the answer to "Trust this folder?", never a tool's.
func (tb *Toolbox) SetTrust(scope TrustScope) (TrustChange, Reconfiguration, error) {
	tb.reconfigure.Lock()
	defer tb.reconfigure.Unlock()
	store, err := trust.Load(tb.ConfigDir)
	if err != nil {
		return TrustChange{}, Reconfiguration{}, err
	}
	root, err := filepath.EvalSymlinks(tb.Workspace.Roots()[0])
	if err != nil {
		return TrustChange{}, Reconfiguration{}, err
	}
	path := root
	switch scope {
	case TrustFolder:
		err = store.Set(root, trust.Folder)
	case TrustParent:
		path = filepath.Dir(root)
		err = store.Set(path, trust.Parent)
	case TrustRevoke:
		// Every entry that trusts the root goes, a parent's too: revoking means this
		// folder must stop being trusted. Only those: the entry that decides is removed
		// until none trusts the root, so that a parent's entry that a more specific
		// one overrides here, and which trusts only other folders, stays.
		for err == nil {
			e, ok := decidingEntry(store.List(), root)
			if !ok || e.Kind == trust.DoNotTrust {
				break
			}
			_, err = store.Revoke(e.Path)
		}
	default:
		return TrustChange{}, Reconfiguration{}, fmt.Errorf("trust scope %q: want %q, %q or %q", scope, TrustFolder, TrustParent, TrustRevoke)
	}
	if err == nil {
		err = store.Save()
	}
	if err != nil {
		return TrustChange{}, Reconfiguration{}, err
	}
	r, err := tb.reconfigureLocked(tb.overrides)
	if err != nil {
		return TrustChange{}, r, fmt.Errorf("re-reading the settings: %w", err)
	}
	trusted := store.Decide(root).Trusted
	msg := fmt.Sprintf("%s is trusted: its settings apply", root)
	if !trusted {
		msg = fmt.Sprintf("%s is not trusted: its settings may only tighten consent", root)
	}
	return TrustChange{Trusted: trusted, Path: path, Message: msg}, r, nil
}

// decidingEntry returns the entry that decides whether dir is trusted: the most
// specific one that covers it (trust.Store.Decide's rule).
func decidingEntry(entries []trust.Entry, dir string) (trust.Entry, bool) {
	var best trust.Entry
	found := false
	for _, e := range entries {
		covers := e.Path == dir || e.Kind != trust.Folder && within(e.Path, dir)
		if covers && (!found || len(e.Path) > len(best.Path)) {
			best, found = e, true
		}
	}
	return best, found
}

// within reports whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
