package session

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
)

func TestNewIDSortsByTime(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	var ids []string
	for i := range 5 {
		ids = append(ids, newID(t0.Add(time.Duration(i)*time.Millisecond*10)))
	}
	if !slices.IsSorted(ids) {
		t.Errorf("ids out of time order: %v", ids)
	}
	if a, b := newID(t0), newID(t0); a == b {
		t.Errorf("two ids at the same time are equal: %s", a)
	}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			t.Errorf("own id refused: %v", err)
		}
	}
}

func TestCheckID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "../x", "a/b", ".hidden", `a\b`, "a b"} {
		if checkID(id) == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}

// writeSession writes a session file of records, each marshalled to one line, and
// returns its path.
func writeSession(t *testing.T, st *Store, id string, recs ...record) string {
	t.Helper()
	if err := st.append(id, recs...); err != nil {
		t.Fatal(err)
	}
	return st.path(id)
}

func TestStoreLoad(t *testing.T) {
	t.Parallel()
	kept := 2
	st := NewStore(t.TempDir())
	created := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	q1, a1 := user("first"), modelTurn(text("one"))
	q2, a2 := user("second"), modelTurn(text("two"))
	q3, q4 := user("bad"), user("read")
	c4 := modelTurn(callPart("r", "read_file", "{}"))
	r4 := clients.Content{Role: clients.RoleUser, Parts: []clients.Part{respPart("r", "read_file", strings.Repeat("x", 5000))}}
	path := writeSession(t, st, "s1",
		record{Type: recSession, ID: "s1", Created: created, Model: "m"},
		record{Type: recPrompt, Text: "first"},
		record{Type: recContent, Content: &q1},
		record{Type: recContent, Content: &a1},
		record{Type: recEnd, StopReason: StopEndTurn},
		record{Type: recPrompt, Text: "second"},
		record{Type: recContent, Content: &q2},
		record{Type: recContent, Content: &a2},
		record{Type: recCompression, Summary: "<state_snapshot/>", Kept: &kept},
		record{Type: recPrompt, Text: "bad"},
		record{Type: recContent, Content: &q3},
		record{Type: recRefused, Dropped: 1},
		record{Type: recPrompt, Text: "read"},
		record{Type: recContent, Content: &q4},
		record{Type: recContent, Content: &c4},
		record{Type: recContent, Content: &r4},
		record{Type: recCompression, Summary: "<state_snapshot>2</state_snapshot>", Kept: &kept, Cap: 1000},
	)
	got, err := st.load("s1", discard())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.record, []clients.Content{q1, a1, q2, a2, q3, q4, c4, r4}) {
		t.Errorf("record %s", js(t, got.record))
	}
	// The refused prompt is left out; the second compression shortens the kept output.
	want := compressed("<state_snapshot>2</state_snapshot>", shortenResponses([]clients.Content{c4, r4}, 1000))
	if !reflect.DeepEqual(got.history, want) {
		t.Errorf("history %s, want %s", js(t, got.history), js(t, want))
	}
	if out := got.history[len(got.history)-1].Parts[0].FunctionResponse.Response["output"].(string); len(out) > 1200 || !strings.Contains(out, "omitted") {
		t.Errorf("the kept output is not shortened: %d bytes", len(out))
	}
	if got.prompts != 4 || !got.header.Created.Equal(created) || got.broken {
		t.Errorf("prompts %d created %v broken %v", got.prompts, got.header.Created, got.broken)
	}

	// A crash in the middle of a write leaves a truncated last line.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, `{"type":"content","content":{"role":"mo`...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = st.load("s1", discard())
	if err != nil {
		t.Fatalf("truncated last line not tolerated: %v", err)
	}
	if len(got.record) != 8 || !got.broken {
		t.Errorf("after a truncated line: %d contents, broken %v", len(got.record), got.broken)
	}
}

func TestStoreLoadErrors(t *testing.T) {
	t.Parallel()
	st := NewStore(t.TempDir())
	writeSession(t, st, "nohead", record{Type: recPrompt, Text: "x"})
	writeSession(t, st, "other", record{Type: recSession, ID: "someone-else"})
	q := user("q")
	writeSession(t, st, "overdrop", record{Type: recSession, ID: "overdrop"},
		record{Type: recContent, Content: &q}, record{Type: recRefused, Dropped: 2})
	writeSession(t, st, "nodrop", record{Type: recSession, ID: "nodrop"},
		record{Type: recContent, Content: &q}, record{Type: recRefused})
	one := 1
	writeSession(t, st, "negcap", record{Type: recSession, ID: "negcap"},
		record{Type: recContent, Content: &q}, record{Type: recCompression, Summary: "s", Kept: &one, Cap: -5})
	writeSession(t, st, "norun", record{Type: recSession, ID: "norun"}, record{Type: recRun, Turn: 1})
	tests := []struct {
		id   string
		want string
	}{
		{"missing", `no session "missing"`},
		{"nohead", "session header"},
		{"other", "session header"},
		{"../etc", "invalid session id"},
		{"overdrop", "line 3: a refused prompt drops"},
		{"nodrop", "line 3: a refused prompt drops"},
		{"negcap", "line 3: compression with a negative cap"},
		{"norun", "line 2: a run record without its tool"},
	}
	for _, tt := range tests {
		_, err := st.load(tt.id, discard())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("load(%q) = %v, want an error with %q", tt.id, err, tt.want)
		}
	}
}

func TestStoreList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := NewStore(dir)
	if infos, err := st.List(); err != nil || len(infos) != 0 {
		t.Fatalf("empty store lists %v, %v", infos, err)
	}
	c := user("x")
	writeSession(t, st, "a", record{Type: recSession, ID: "a", Created: time.Unix(100, 0)},
		record{Type: recPrompt, Text: "\n  Fix the bug in parser.go  \nmore detail"},
		record{Type: recContent, Content: &c},
		record{Type: recPrompt, Text: "and test it"})
	writeSession(t, st, "b", record{Type: recSession, ID: "b", Created: time.Unix(200, 0)},
		record{Type: recPrompt, Text: strings.Repeat("long ", 40)})
	writeSession(t, st, "c", record{Type: recSession, ID: "c", Created: time.Unix(300, 0)})
	if err := os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"a", "c", "b"} { // b updated last, then c, then a
		mt := time.Unix(1000+int64(i)*10, 0)
		if err := os.Chtimes(st.path(id), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	if !slices.Equal(ids, []string{"b", "c", "a"}) {
		t.Fatalf("listed %v, want [b c a]", ids)
	}
	a := infos[2]
	if a.Title != "Fix the bug in parser.go" || a.Prompts != 2 || !a.Created.Equal(time.Unix(100, 0)) {
		t.Errorf("info of a: %+v", a)
	}
	if b := infos[0]; len([]rune(b.Title)) != 80 || !strings.HasSuffix(b.Title, "…") || b.Prompts != 1 {
		t.Errorf("info of b: %+v", b)
	}
	if c := infos[1]; c.Title != "" || c.Prompts != 0 {
		t.Errorf("info of c: %+v", c)
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if d, err := StateDir(); err != nil || d != filepath.Join("/state", "agentls", "sessions") {
		t.Errorf("StateDir = %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, err := StateDir(); err != nil || d != filepath.Join("/home/u", ".local", "state", "agentls", "sessions") {
		t.Errorf("StateDir = %q, %v", d, err)
	}
}
