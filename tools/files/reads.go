package files

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Reads is what one session has read of the workspace's files, for the rule that a
// model edits only what it has read (Kode's file freshness): an edit of a file the
// session never read, or that changed on disk or in the editor since, is refused with
// "read it first", because the model would otherwise edit text it has not seen.
//
// A session's successful edits count as reads of the text they wrote. Calls whose
// context carries no Reads (WithReads) — those a person runs directly — are not held
// to the rule. It is safe for concurrent use.
type Reads struct {
	mu   sync.Mutex
	seen map[string]seen
}

// seen is a file's text as a session last knew it.
type seen struct {
	sum [sha256.Size]byte
	// open and version say where the text came from: the editor's overlay (and its
	// version) or the disk.
	open    bool
	version int32
}

// NewReads returns an empty record: a session that has read nothing.
func NewReads() *Reads { return &Reads{seen: map[string]seen{}} }

// readsKey is the context key of the Reads a call is held to.
type readsKey struct{}

// WithReads returns ctx for the calls of a session that reads and edits under r: its
// reads are recorded there and its edits checked against them. A nil r holds the calls
// to nothing.
func WithReads(ctx context.Context, r *Reads) context.Context {
	return context.WithValue(ctx, readsKey{}, r)
}

// readsFrom returns the Reads of ctx; nil when its calls are not held to the rule.
func readsFrom(ctx context.Context) *Reads {
	r, _ := ctx.Value(readsKey{}).(*Reads)
	return r
}

// noteRead records f as read by the session of ctx, if it has a record.
func noteRead(ctx context.Context, f *workspace.File) {
	if r := readsFrom(ctx); r != nil && f != nil {
		r.note(f)
	}
}

func (r *Reads) note(f *workspace.File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[f.Path] = seen{sum: sha256.Sum256([]byte(f.Text)), open: f.Open, version: f.Version}
}

// noteWritten records that the session of ctx wrote abs: it knows the file's new text,
// which is read back from the workspace (the editor's overlay when the document is
// open), so that the next edit compares with what the file really holds.
func noteWritten(ctx context.Context, ws *workspace.Workspace, abs string) {
	r := readsFrom(ctx)
	if r == nil {
		return
	}
	f, err := ws.ReadText(abs, maxFileBytes)
	if err != nil {
		r.mu.Lock()
		delete(r.seen, abs)
		r.mu.Unlock()
		return
	}
	r.note(f)
}

// checkRead refuses an edit of cur, the file at abs as it is now, unless the session
// of ctx has read that very text. A file that does not exist needs no reading: it is
// created. Without a record in ctx every edit passes.
func checkRead(ctx context.Context, ws *workspace.Workspace, abs string, cur *workspace.File) error {
	r := readsFrom(ctx)
	if r == nil || cur == nil {
		return nil
	}
	r.mu.Lock()
	s, ok := r.seen[abs]
	r.mu.Unlock()
	rel := ws.Rel(abs)
	var what string
	switch {
	case !ok:
		what = fmt.Sprintf("%s has not been read in this session", rel)
	case s.sum == sha256.Sum256([]byte(cur.Text)):
		return nil
	case cur.Open && (!s.open || s.version != cur.Version):
		what = fmt.Sprintf("%s changed in the editor since this session read it (unsaved edits", rel)
		if s.open {
			what += fmt.Sprintf(", version %d → %d", s.version, cur.Version)
		}
		what += ")"
	default:
		what = fmt.Sprintf("%s changed on disk since this session read it", rel)
		if !cur.ModTime.IsZero() {
			what += fmt.Sprintf(" (modified %s)", cur.ModTime.UTC().Format("15:04:05"))
		}
	}
	return &tools.Error{
		Type: tools.ErrStaleContent,
		Message: fmt.Sprintf("Read it first: %s, so the edit was refused and nothing was written. "+
			"Use read_file on %s to see its current content, then redo the edit against it.", what, rel),
		Err: fmt.Errorf("%s: %w", abs, workspace.ErrStale),
	}
}
