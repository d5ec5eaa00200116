package session

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/clients"
)

// Store keeps sessions as JSON Lines files, one per session (<id>.jsonl in its
// directory), appended record by record and never rewritten: a crash loses at most the
// model response in flight.
//
// The records, one JSON object a line, in the order they happened:
//
//	{"type":"session","id":…,"created":…,"model":…,"roots":[…]}   first line
//	{"type":"prompt","text":…,"time":…}                           a user prompt
//	{"type":"content","content":{…}}                              a user or model content, as it completed
//	{"type":"compression","summary":…,"kept":n,"cap":c}           older history replaced by summary; the last n contents kept,
//	                                                              the strings of their function responses cut to c bytes (no cap when absent)
//	{"type":"refused","dropped":n}                                the last n contents (a prompt the model refused) left out of the history
//	{"type":"end","stopReason":…,"usage":{…}}                     a prompt ended
//
// A Store is safe for concurrent use; one session's file is written by that session
// only. Its files are private to the user (0600 in a 0700 folder); a file or folder
// that is not is refused (store_perm.go).
type Store struct {
	dir string

	holdMu sync.Mutex
	held   map[string]*os.File // the sessions of live Hosts, open with a shared lock (store_hold.go)
}

// NewStore returns a store keeping its files in dir, which is created when the first
// session is written.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir returns the directory of the store's files.
func (st *Store) Dir() string { return st.dir }

// StateDir returns $XDG_STATE_HOME/agentls/sessions (else ~/.local/state/agentls/sessions).
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agentls", "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("session state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "agentls", "sessions"), nil
}

// Info describes a stored session for listings.
type Info struct {
	ID      string
	Title   string // the first prompt, shortened to one line
	Created time.Time
	// Updated is when the session's file was last written.
	Updated time.Time
	Prompts int
}

// Record types of a session file.
const (
	recSession     = "session"
	recPrompt      = "prompt"
	recContent     = "content"
	recCompression = "compression"
	recRefused     = "refused"
	recEnd         = "end"
	recEdit        = "edit"  // a file a tool call of the prompt changed (turns.go)
	recUndo        = "undo"  // the changes of a prompt were undone
	recRedo        = "redo"  // the changes of an undone prompt were brought back
	recShell       = "shell" // what a shell command of the prompt changed (turns.go)
	recRun         = "run"   // a tool call of the prompt ended (metrics.go)
	recAgent       = "agent" // a sub-agent's conversation (subagent.go)
)

// record is one line of a session file. Type comes first in its JSON form, which List
// relies on to skip lines without decoding them.
type record struct {
	Type    string           `json:"type"`
	ID      string           `json:"id,omitempty"`
	Created time.Time        `json:"created,omitzero"`
	Model   string           `json:"model,omitempty"`
	Roots   []string         `json:"roots,omitempty"`
	Text    string           `json:"text,omitempty"`
	Time    time.Time        `json:"time,omitzero"`
	Content *clients.Content `json:"content,omitempty"`
	Summary string           `json:"summary,omitempty"`
	// Kept is set on compression records, zero included.
	Kept *int `json:"kept,omitempty"`
	// Cap is the length the strings of the kept function responses were cut to.
	Cap int `json:"cap,omitempty"`
	// Dropped is how many contents a refused record leaves out of the history.
	Dropped    int            `json:"dropped,omitempty"`
	StopReason StopReason     `json:"stopReason,omitempty"`
	Usage      *clients.Usage `json:"usage,omitempty"`
	// Turn, Path, Before and After are an edit's or an undo's: the prompt (1-based),
	// the file, its text before (nil: the edit created it) and after.
	Turn   int     `json:"turn,omitempty"`
	Path   string  `json:"path,omitempty"`
	Before *string `json:"before,omitempty"`
	After  *string `json:"after,omitempty"`
	// Tool is the edit's tool.
	Tool string `json:"tool,omitempty"`
	// Shell is what a shell command of the prompt Turn changed.
	Shell *checkpoint.Record `json:"shell,omitempty"`
	// Run is a tool call's end: its tool, status and execution time.
	Run *ToolRun `json:"run,omitempty"`
	// Agent is a sub-agent's conversation, for replay.
	Agent *agentRecord `json:"agent,omitempty"`
}

// newID returns a new session id: the UTC time to the millisecond, so that ids sort by
// creation, and a random suffix.
func newID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return now.UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(b[:])
}

// newMessageID returns a new message id: a random UUID (version 4).
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ErrInvalidID is the error of a session id that no stored session can have.
var ErrInvalidID = errors.New("invalid session id")

// checkID refuses ids that could name a file outside the store.
func checkID(id string) error {
	if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_.") != "" ||
		strings.HasPrefix(id, ".") {
		return fmt.Errorf("%w %q: ids are letters, digits, '-', '_' and '.'", ErrInvalidID, id)
	}
	return nil
}

func (st *Store) path(id string) string { return filepath.Join(st.dir, id+".jsonl") }

// append writes recs at the end of the session file of id, creating the file (and the
// store's directory) if needed. The records go in one write; a write that fails is
// undone, so that the caller may send the same records again. A crash can still leave
// the last line incomplete: the next write then starts on a new line.
func (st *Store) append(id string, recs ...record) error {
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encoding a %s record of session %s: %w", r.Type, id, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	f, err := st.openFile(id, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("writing session %s: %w", id, err)
	}
	err = appendLines(f, buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing session %s: %w", id, err)
	}
	return nil
}

// appendLines writes lines at the end of f, after a newline when f ends without one,
// and cuts f back to its former size when the write fails.
func appendLines(f *os.File, lines []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			lines = append([]byte{'\n'}, lines...)
		}
	}
	if _, err := f.Write(lines); err != nil {
		if terr := f.Truncate(size); terr != nil {
			return errors.Join(err, fmt.Errorf("undoing a partial write: %w", terr))
		}
		return err
	}
	return nil
}

// appendNewline ends the last line of the session file of id, which a crash left
// incomplete, so that the next record starts on a line of its own.
func (st *Store) appendNewline(id string) error {
	f, err := st.openFile(id, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("writing session %s: %w", id, err)
	}
	_, err = f.Write([]byte{'\n'})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing session %s: %w", id, err)
	}
	return nil
}

// stored is a session read back from its file.
type stored struct {
	header record
	// record is every content in the order it was written; history is what the model
	// is sent after compressions.
	record, history []clients.Content
	prompts         int
	// runs are the ends of the session's tool calls, in order.
	runs []ToolRun
	// agents are the conversations of the session's sub-agents.
	agents []agentRecord
	// items are the changes each prompt's tool calls made, by prompt (1-based), in
	// order; undone are the prompts whose changes were undone, undoneOrder the same in
	// the order of their undos.
	items       map[int][]turnItem
	undone      map[int]bool
	undoneOrder []int
	// broken is set when the file ends without a newline (a crash in the middle of a
	// write): the next record must start on a line of its own.
	broken bool
}

// addItem adds a change of prompt turn.
func (s *stored) addItem(turn int, it turnItem) {
	if s.items == nil {
		s.items = map[int][]turnItem{}
	}
	s.items[turn] = append(s.items[turn], it)
}

// load replays the session file of id. A line cut short by a crash is ignored.
func (st *Store) load(id string, logger *slog.Logger) (*stored, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	f, err := st.openFile(id, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no session %q in %s", id, st.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	s := &stored{broken: len(data) > 0 && data[len(data)-1] != '\n'}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			if i == 0 {
				return nil, fmt.Errorf("session %s: the file does not start with its session header: %w", id, err)
			}
			// A crash mid-write leaves the last line incomplete; resuming then starts the
			// next record on a new line, so such a line may also sit in the middle.
			logger.Warn("ignoring an incomplete record in a session file", "session", id, "line", i+1, "err", err)
			continue
		}
		if i == 0 {
			if r.Type != recSession || r.ID != id {
				return nil, fmt.Errorf("session %s: the file does not start with its session header", id)
			}
			s.header = r
			continue
		}
		switch r.Type {
		case recPrompt:
			s.prompts++
		case recContent:
			if r.Content == nil {
				return nil, fmt.Errorf("session %s, line %d: content record without content", id, i+1)
			}
			s.record = append(s.record, *r.Content)
			s.history = append(s.history, *r.Content)
		case recCompression:
			if r.Kept == nil || *r.Kept < 0 || *r.Kept > len(s.history) {
				return nil, fmt.Errorf("session %s, line %d: compression keeps a number of contents the history does not have", id, i+1)
			}
			if r.Cap < 0 {
				return nil, fmt.Errorf("session %s, line %d: compression with a negative cap", id, i+1)
			}
			s.history = compressed(r.Summary, shortenResponses(s.history[len(s.history)-*r.Kept:], r.Cap))
		case recRefused:
			if r.Dropped <= 0 || r.Dropped > len(s.history) {
				return nil, fmt.Errorf("session %s, line %d: a refused prompt drops a number of contents the history does not have", id, i+1)
			}
			s.history = s.history[:len(s.history)-r.Dropped]
		case recEdit:
			if r.Turn < 1 || r.Path == "" || r.After == nil {
				return nil, fmt.Errorf("session %s, line %d: an edit record without its prompt, file or text", id, i+1)
			}
			s.addItem(r.Turn, turnItem{edit: &Edit{Path: r.Path, Before: r.Before, After: *r.After, Tool: r.Tool}})
		case recShell:
			if r.Turn < 1 || r.Shell == nil {
				return nil, fmt.Errorf("session %s, line %d: a shell record without its prompt or changes", id, i+1)
			}
			s.addItem(r.Turn, turnItem{shell: r.Shell})
		case recUndo, recRedo:
			if s.undone == nil {
				s.undone = map[int]bool{}
			}
			s.undone[r.Turn] = r.Type == recUndo
			s.undoneOrder = slices.DeleteFunc(s.undoneOrder, func(t int) bool { return t == r.Turn })
			if r.Type == recUndo {
				s.undoneOrder = append(s.undoneOrder, r.Turn)
			}
		case recRun:
			if r.Run == nil || r.Run.Name == "" {
				return nil, fmt.Errorf("session %s, line %d: a run record without its tool", id, i+1)
			}
			s.runs = append(s.runs, *r.Run)
		case recAgent:
			if r.Agent == nil || r.Agent.Call == "" {
				return nil, fmt.Errorf("session %s, line %d: an agent record without its call", id, i+1)
			}
			s.agents = append(s.agents, *r.Agent)
		case recEnd, recSession:
		default:
			logger.Warn("unknown record in session file", "session", id, "line", i+1, "type", r.Type)
		}
	}
	if s.header.Type == "" {
		return nil, fmt.Errorf("session %s: the file has no session header", id)
	}
	return s, nil
}

// List describes the stored sessions, most recently updated first. Files that are not
// session files are left out. A session file the store refuses (another's, or not
// private: see store_perm.go) fails the listing, with what to do about it.
func (st *Store) List() ([]Info, error) {
	if err := st.checkDir(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var infos []Info
	var unsafe []error
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || checkID(id) != nil {
			continue
		}
		info, err := st.info(id)
		var ue *unsafeError
		switch {
		case errors.As(err, &ue):
			// Said, not skipped: a session left out without a word would look lost,
			// and the fix is one chmod the error names.
			unsafe = append(unsafe, err)
		case err != nil:
			// Not a session file, or one damaged beyond its header.
		default:
			infos = append(infos, info)
		}
	}
	if len(unsafe) > 0 {
		return nil, errors.Join(unsafe...)
	}
	slices.SortFunc(infos, func(a, b Info) int {
		return cmp.Or(b.Updated.Compare(a.Updated), strings.Compare(b.ID, a.ID))
	})
	return infos, nil
}

// info reads the header of a session file and counts its prompts, decoding only the
// header and prompt lines.
func (st *Store) info(id string) (Info, error) {
	f, err := st.openFile(id, os.O_RDONLY)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	info := Info{ID: id, Updated: fi.ModTime()}
	r := bufio.NewReaderSize(f, 64<<10)
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			switch {
			case first:
				var h record
				if jerr := json.Unmarshal(line, &h); jerr != nil || h.Type != recSession || h.ID != id {
					return Info{}, fmt.Errorf("session %s: no session header", id)
				}
				info.Created = h.Created
				first = false
			case bytes.HasPrefix(line, []byte(`{"type":"prompt"`)):
				var p record
				if json.Unmarshal(line, &p) == nil {
					info.Prompts++
					if info.Title == "" {
						info.Title = title(p.Text)
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Info{}, err
		}
	}
	if first {
		return Info{}, fmt.Errorf("session %s: empty file", id)
	}
	return info, nil
}

// title shortens a prompt to its first non-empty line, at most 80 characters.
func title(prompt string) string {
	const max = 80
	for line := range strings.Lines(prompt) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > max {
			return string(r[:max-1]) + "…"
		}
		return line
	}
	return ""
}
