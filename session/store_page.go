package session

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultPageSize is how many sessions a page of Store.Page holds unless the query
// says otherwise.
const DefaultPageSize = 50

// PageQuery asks for one page of the stored sessions.
type PageQuery struct {
	// Root keeps the sessions started in this workspace root (their first root,
	// compared with symbolic links resolved); empty keeps every session.
	Root string
	// Cursor is the Next of the page before; empty asks for the first page.
	Cursor string
	// Limit is the most sessions the page holds; 0 means DefaultPageSize.
	Limit int
}

// Page is one page of the stored sessions, most recently updated first.
type Page struct {
	Sessions []Brief
	// Next is the cursor of the next page; empty when this page is the last.
	Next string
}

// Brief describes a stored session for a listing, from its header and first prompt.
type Brief struct {
	ID string
	// Title is the first prompt shortened to one line; empty before the first prompt.
	Title string
	// Updated is when the session's file was last written.
	Updated time.Time
	// Roots are the workspace roots the session was started in (nil when its header
	// records none).
	Roots []string
}

// ErrCursor is the error of a page asked for with a cursor that no listing of the
// store with the same query gave.
var ErrCursor = errors.New("invalid cursor")

// cursor is the position of the last session of a page, and the listing it belongs to.
type cursor struct {
	// Listing identifies the store and the root filter the cursor was made for.
	Listing string `json:"l"`
	// Updated (Unix nanoseconds) and ID are the last session's: the next page starts
	// after it in the listing's order.
	Updated int64  `json:"t"`
	ID      string `json:"i"`
}

// listingKey identifies a listing of st filtered by root.
func (st *Store) listingKey(root string) string {
	sum := sha256.Sum256([]byte(st.dir + "\x00" + root))
	return hex.EncodeToString(sum[:8])
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Listing == "" || c.ID == "" {
		return cursor{}, fmt.Errorf("%w %q: it is not one a listing of sessions gave", ErrCursor, s)
	}
	return c, nil
}

// Page returns one page of the stored sessions, most recently updated first (the
// order of List), those started in q.Root when it names one. A page reads the
// headers of its own sessions only, not every file of the store, and the
// cursor it gives holds the position of its last session, so that a session written
// meanwhile moves to the front of the listing rather than shifting the later pages.
// A cursor given by a listing of another store or another root fails with ErrCursor.
func (st *Store) Page(q PageQuery) (Page, error) {
	limit := cmp.Or(q.Limit, DefaultPageSize)
	root := ""
	if q.Root != "" {
		root = realPath(q.Root)
	}
	key := st.listingKey(root)
	var after *cursor
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		if c.Listing != key {
			return Page{}, fmt.Errorf("%w: the cursor belongs to a listing of another workspace (or another store): "+
				"list again without a cursor", ErrCursor)
		}
		after = &c
	}
	if err := st.checkDir(); err != nil {
		return Page{}, err
	}
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Page{Sessions: []Brief{}}, nil
	}
	if err != nil {
		return Page{}, fmt.Errorf("listing sessions: %w", err)
	}
	type file struct {
		id  string
		mod time.Time
	}
	files := make([]file, 0, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || checkID(id) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, file{id, fi.ModTime()})
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(b.mod.Compare(a.mod), strings.Compare(b.id, a.id))
	})
	if after != nil {
		t := time.Unix(0, after.Updated)
		// The first one after the cursor's, in the listing's order.
		i := slices.IndexFunc(files, func(f file) bool {
			return f.mod.Before(t) || f.mod.Equal(t) && f.id < after.ID
		})
		if i < 0 {
			i = len(files)
		}
		files = files[i:]
	}
	out := Page{Sessions: []Brief{}}
	realRoots := map[string]string{}
	keep := func(roots []string) bool {
		if root == "" {
			return true
		}
		if len(roots) == 0 {
			return false
		}
		r, ok := realRoots[roots[0]]
		if !ok {
			r = realPath(roots[0])
			realRoots[roots[0]] = r
		}
		return r == root
	}
	for _, f := range files {
		b, ok, err := st.brief(f.id, keep)
		var ue *unsafeError
		switch {
		case errors.As(err, &ue):
			return Page{}, err
		case err != nil, !ok:
			continue // not a session file, removed meanwhile, or of another root
		}
		if len(out.Sessions) == limit {
			// One more is there: the page ends with its last.
			last := out.Sessions[limit-1]
			out.Next = cursor{Listing: key, Updated: last.Updated.UnixNano(), ID: last.ID}.encode()
			break
		}
		b.Updated = f.mod
		out.Sessions = append(out.Sessions, b)
	}
	return out, nil
}

// brief reads the header of the session file of id and, when keep takes its roots,
// its first prompt; ok reports whether keep took them.
func (st *Store) brief(id string, keep func(roots []string) bool) (b Brief, ok bool, err error) {
	// The store's folder was checked for the page (Page).
	f, err := st.openChecked(id, os.O_RDONLY)
	if err != nil {
		return Brief{}, false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4<<10)
	line, err := r.ReadBytes('\n')
	var h record
	if len(line) == 0 || json.Unmarshal(line, &h) != nil || h.Type != recSession || h.ID != id {
		return Brief{}, false, fmt.Errorf("session %s: no session header", id)
	}
	if !keep(h.Roots) {
		return Brief{}, false, nil
	}
	b = Brief{ID: id, Roots: h.Roots}
	for err == nil {
		line, err = r.ReadBytes('\n')
		if bytes.HasPrefix(line, []byte(`{"type":"prompt"`)) {
			var p record
			if json.Unmarshal(line, &p) == nil {
				b.Title = title(p.Text)
				break
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return Brief{}, false, err
	}
	return b, true, nil
}

// Delete removes the stored session id. A session that is not stored fails with an
// error wrapping fs.ErrNotExist; one another Store or process holds (a live session of
// another Host) with an error wrapping ErrOpenElsewhere, and stays.
func (st *Store) Delete(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	st.release(id)
	f, err := st.openFile(id, os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no session %q in %s: %w", id, st.dir, fs.ErrNotExist)
		}
		return fmt.Errorf("deleting session %s: %w", id, err)
	}
	defer f.Close()
	if err := lockExclusive(f); err != nil {
		return fmt.Errorf("deleting session %s: %w", id, err)
	}
	if err := os.Remove(st.path(id)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no session %q in %s: %w", id, st.dir, fs.ErrNotExist)
		}
		return fmt.Errorf("deleting session %s: %w", id, err)
	}
	return nil
}

// realPath returns path with its symbolic links resolved, when it can be, cleaned.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}
