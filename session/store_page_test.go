package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
)

// storeOf writes n sessions, half in rootA and half in rootB, each updated a second
// after the one before, and returns their ids, oldest first.
func storeOf(t *testing.T, st *Store, n int, rootA, rootB string) []string {
	t.Helper()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		id := newID(t0.Add(time.Duration(i) * time.Second))
		root := rootA
		if i%2 == 1 {
			root = rootB
		}
		writeSession(t, st, id, record{Type: recSession, ID: id, Roots: []string{root}},
			record{Type: recPrompt, Text: "prompt " + strconv.Itoa(i) + "\nmore"})
		mod := t0.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(st.path(id), mod, mod); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestStorePage: the pages follow one another without a gap or a repeat, newest
// first, filtered by root (symbolic links resolved); a session written meanwhile
// moves to the front instead of shifting the later pages; a cursor of another
// listing, or one no listing gave, is refused.
func TestStorePage(t *testing.T) {
	t.Parallel()
	st := NewStore(t.TempDir())
	rootA, rootB := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(rootA, link); err != nil {
		t.Fatal(err)
	}
	ids := storeOf(t, st, 25, rootA, rootB)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	all := func(q PageQuery) []string {
		t.Helper()
		var got []string
		for range 100 {
			p, err := st.Page(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Sessions) > q.Limit {
				t.Fatalf("a page of %d sessions, limit %d", len(p.Sessions), q.Limit)
			}
			for _, b := range p.Sessions {
				got = append(got, b.ID)
			}
			if p.Next == "" {
				return got
			}
			q.Cursor = p.Next
		}
		t.Fatal("the pages do not end")
		return nil
	}
	if got := all(PageQuery{Limit: 7}); !slices.Equal(got, newestFirst) {
		t.Errorf("all pages:\n got %v\nwant %v", got, newestFirst)
	}
	var inA []string
	for i, id := range newestFirst {
		if (len(ids)-1-i)%2 == 0 {
			inA = append(inA, id)
		}
	}
	if got := all(PageQuery{Root: link, Limit: 5}); !slices.Equal(got, inA) {
		t.Errorf("pages of root A through a link:\n got %v\nwant %v", got, inA)
	}

	first, err := st.Page(PageQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	b := first.Sessions[0]
	if b.Title != "prompt 24" || !slices.Equal(b.Roots, []string{rootA}) || !b.Updated.Equal(time.Date(2026, 6, 1, 0, 0, 24, 0, time.UTC)) {
		t.Errorf("first session: %+v", b)
	}
	// The oldest session is written: it moves to the front, and the next page still
	// starts after the last one this page showed.
	if err := st.append(ids[0], record{Type: recPrompt, Text: "again"}); err != nil {
		t.Fatal(err)
	}
	next, err := st.Page(PageQuery{Limit: 10, Cursor: first.Next})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := next.Sessions[0].ID, newestFirst[10]; got != want {
		t.Errorf("the next page starts with %s, want %s", got, want)
	}

	for _, tc := range []struct {
		name   string
		q      PageQuery
		saying string
	}{
		{"another root's cursor", PageQuery{Root: rootB, Cursor: first.Next}, "another workspace"},
		{"another store's cursor", PageQuery{}, "another workspace"},
		{"not a cursor", PageQuery{Cursor: "not-a-cursor"}, "not one a listing of sessions gave"},
	} {
		q := tc.q
		s := st
		if tc.name == "another store's cursor" {
			other := NewStore(t.TempDir())
			storeOf(t, other, 3, rootA, rootB)
			p, err := other.Page(PageQuery{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			q.Cursor = p.Next
		}
		_, err := s.Page(q)
		if !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), tc.saying) {
			t.Errorf("%s: %v, want ErrCursor saying %q", tc.name, err, tc.saying)
		}
	}

	empty := NewStore(filepath.Join(t.TempDir(), "none"))
	if p, err := empty.Page(PageQuery{}); err != nil || len(p.Sessions) != 0 || p.Next != "" {
		t.Errorf("a store not made yet: %+v, %v", p, err)
	}
}

// TestHostDeleteSession: a stored session is removed (a later Open cannot resume
// it); a session answering a prompt is not, nor one another store's host has live,
// nor one the store does not have.
func TestHostDeleteSession(t *testing.T) {
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{{Text: "one"}, {Text: "two", Hang: true}}}, nil)
	l, _ := hh.prompt("", "first")
	id := l.ID()
	if err := hh.host.DeleteSession("20260101-000000.000-nothere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("deleting a session not stored: %v, want fs.ErrNotExist", err)
	}
	if err := hh.host.DeleteSession("../a"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("deleting ../a: %v, want ErrInvalidID", err)
	}

	before := len(hh.of(UpdateMessage))
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Prompt(t.Context(), "second", nil)
	}()
	for len(hh.of(UpdateMessage)) == before {
		time.Sleep(5 * time.Millisecond)
	}
	if err := hh.host.DeleteSession(id); !errors.Is(err, ErrBusy) {
		t.Errorf("deleting a session answering a prompt: %v, want ErrBusy", err)
	}
	if _, err := os.Stat(hh.host.o.Store.path(id)); err != nil {
		t.Errorf("the busy session's file: %v", err)
	}
	hh.host.Cancel(id)
	<-done
	// Another store of the same folder (another host, another process) cannot delete
	// it while this host has it live, and can once the host lets it go.
	other := NewStore(hh.host.o.Store.Dir())
	if err := other.Delete(id); !errors.Is(err, ErrOpenElsewhere) {
		t.Errorf("deleting a session live elsewhere: %v, want ErrOpenElsewhere", err)
	}
	if err := hh.host.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	l, err := hh.host.Open(t.Context(), id)
	if err != nil {
		t.Fatalf("opening it again: %v", err)
	}
	if err := other.Delete(id); !errors.Is(err, ErrOpenElsewhere) {
		t.Errorf("deleting a session resumed elsewhere: %v, want ErrOpenElsewhere", err)
	}
	if err := hh.host.DeleteSession(l.ID()); err != nil {
		t.Fatalf("deleting the session once idle: %v", err)
	}
	var re *ResumeError
	if _, err := hh.host.Open(t.Context(), id); !errors.As(err, &re) {
		t.Errorf("opening the deleted session: %v, want a ResumeError", err)
	}
}

// TestSessionInfoUsageAndMessageIDs: the first prompt gives the session its title
// (and only the first), each model request reports its prompt tokens with the
// context window, and the chunks of one response share a message id that the next
// response does not.
func TestSessionInfoUsageAndMessageIDs(t *testing.T) {
	script := clients.Script{Turns: []clients.Turn{
		{Thought: "hm", Text: "reading", Chunks: 2, Calls: []clients.ScriptCall{{ID: "r1", Name: "read_file", Args: []byte(`{"file_path": "ROOT/a.txt"}`)}},
			Usage: &clients.Usage{PromptTokens: 100}},
		{Text: "done", Chunks: 2, Usage: &clients.Usage{PromptTokens: 150}},
		{Text: "again", Chunks: 1, Usage: &clients.Usage{PromptTokens: 170}},
	}}
	hh := newHostHarness(t, "yolo", script, nil)
	l, _ := hh.prompt("", "  \nRead a.txt\nplease")
	hh.prompt(l.ID(), "second prompt")

	if info := hh.of(UpdateInfo); len(info) != 1 || info[0].Title != "Read a.txt" || info[0].Session != l.ID() {
		t.Errorf("session_info updates: %+v, want one titled %q", info, "Read a.txt")
	}
	var used []int
	for _, u := range hh.of(UpdateUsage) {
		used = append(used, u.Usage.PromptTokens)
		if u.Window <= 0 {
			t.Errorf("usage without the context window: %+v", u)
		}
	}
	if !slices.Equal(used, []int{100, 150, 170}) {
		t.Errorf("usage updates: %v, want [100 150 170]", used)
	}
	msgs := hh.of(UpdateMessage)
	if len(msgs) != 5 {
		for _, m := range msgs {
			t.Logf("%q %s", m.Text, m.MessageID)
		}
		t.Fatalf("%d message chunks, want 5", len(msgs))
	}
	thought := hh.of(UpdateThought)[0].MessageID
	if msgs[0].MessageID == "" || msgs[0].MessageID != msgs[1].MessageID || msgs[2].MessageID != msgs[3].MessageID ||
		msgs[1].MessageID == msgs[2].MessageID || msgs[3].MessageID == msgs[4].MessageID || thought == msgs[0].MessageID {
		t.Errorf("message ids: %q %q | %q %q | %q, thought %q", msgs[0].MessageID, msgs[1].MessageID,
			msgs[2].MessageID, msgs[3].MessageID, msgs[4].MessageID, thought)
	}
	// A replay gives each message an id too, the user's prompts included.
	for _, u := range l.Replay() {
		if (u.Kind == UpdateMessage || u.Kind == UpdateUserMessage || u.Kind == UpdateThought) && u.MessageID == "" {
			t.Errorf("replayed %s without a message id: %q", u.Kind, u.Text)
		}
	}
}

// BenchmarkStorePage measures the first page of 1,000 stored sessions: of all, and of
// the root whose 500 sessions are the older half (every header is read to find them).
func BenchmarkStorePage(b *testing.B) {
	st := NewStore(b.TempDir())
	rootA, rootB := b.TempDir(), b.TempDir()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		id := newID(t0.Add(time.Duration(i) * time.Second))
		root := rootA
		if i < 500 {
			root = rootB
		}
		if err := st.append(id, record{Type: recSession, ID: id, Roots: []string{root}}, record{Type: recPrompt, Text: "a prompt"}); err != nil {
			b.Fatal(err)
		}
		mod := t0.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(st.path(id), mod, mod); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, root string }{{"all", ""}, {"older-root", rootB}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				p, err := st.Page(PageQuery{Root: tc.root})
				if err != nil || len(p.Sessions) != DefaultPageSize {
					b.Fatal(len(p.Sessions), err)
				}
			}
		})
	}
}
