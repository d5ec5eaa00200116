package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
)

// Long sessions: the work agentls does per prompt outside the model must not grow with
// the session's length, and a long session must resume quickly. The model is the
// in-process Scripted client, which costs next to nothing, so what is timed is
// agentls's own work: the loop, the history, the store, the tool call.

// longSessionTurns are the session lengths compared: the target is the prompt after
// 500 earlier ones within 1.2× of the prompt after 10.
var longSessionTurns = []int{10, 500}

// BenchmarkLongSessionPrompt times one prompt (a read_file call, then the answer) of a
// live session after n earlier prompts like it. Each iteration, with the timer stopped,
// resumes the session from its stored copy and runs one prompt (what a live session
// has done before its next), and lets the garbage of that be collected.
func BenchmarkLongSessionPrompt(b *testing.B) {
	for _, n := range longSessionTurns {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			ls := newLongSession(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				store := ls.freshStore(b)
				s, err := New(context.Background(), ls.options(store, clients.NewScripted(promptScript(2))))
				if err != nil {
					b.Fatal(err)
				}
				prompt := func() {
					res, err := s.Prompt(context.Background(), "Read a.txt again and say what it holds.", nil)
					if err != nil || res.StopReason != StopEndTurn {
						b.Fatalf("prompt: %v, %s", err, res.StopReason)
					}
				}
				prompt()
				runtime.GC()
				b.StartTimer()
				prompt()
			}
		})
	}
}

// BenchmarkLongSessionResume times resuming a stored session of 500 prompts (target:
// ≤ 100 ms): reading its file and rebuilding the history the model is sent.
func BenchmarkLongSessionResume(b *testing.B) {
	ls := newLongSession(b, 500)
	store := ls.freshStore(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := New(context.Background(), ls.options(store, clients.NewScripted(clients.Script{})))
		if err != nil {
			b.Fatal(err)
		}
		if got := len(s.History()); got < 4*500 {
			b.Fatalf("resumed %d contents, want at least %d", got, 4*500)
		}
	}
}

// longSession is a stored session of n prompts over a small workspace.
type longSession struct {
	tb    *toolbox.Toolbox
	id    string
	dir   string // the store with the session as it was made
	file  []byte // the session's file
	name  string // its name in the store
	store string // where fresh copies go
}

// newLongSession makes a session of n prompts, each a read_file call and an answer.
func newLongSession(b *testing.B, n int) *longSession {
	b.Helper()
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("the text of a.txt\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	tb, err := toolbox.New(toolbox.Options{Roots: []string{root}, ConfigDir: b.TempDir(), GeminiDir: b.TempDir(), Mode: "yolo", Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.Close() })
	ls := &longSession{tb: tb, dir: b.TempDir(), store: b.TempDir()}
	s, err := New(context.Background(), ls.options(NewStore(ls.dir), clients.NewScripted(promptScript(n))))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		res, err := s.Prompt(context.Background(), fmt.Sprintf("Prompt %d: read a.txt and say what it holds.", i), nil)
		if err != nil || res.StopReason != StopEndTurn {
			b.Fatalf("prompt %d: %v, %s", i, err, res.StopReason)
		}
	}
	ls.id = s.ID()
	entries, err := os.ReadDir(ls.dir)
	if err != nil || len(entries) != 1 {
		b.Fatalf("the store holds %d entries (%v), want the session's file", len(entries), err)
	}
	ls.name = entries[0].Name()
	if ls.file, err = os.ReadFile(filepath.Join(ls.dir, ls.name)); err != nil {
		b.Fatal(err)
	}
	return ls
}

// freshStore returns a store holding the session as it was made.
func (ls *longSession) freshStore(b *testing.B) *Store {
	if err := os.WriteFile(filepath.Join(ls.store, ls.name), ls.file, 0o644); err != nil {
		b.Fatal(err)
	}
	return NewStore(ls.store)
}

func (ls *longSession) options(store *Store, client clients.Client) Options {
	return Options{
		ID:           ls.id,
		Client:       client,
		Declarations: ls.tb.Declarations,
		Runner:       ls.tb.Scheduler(nil, nil, nil),
		Store:        store,
		Env:          Environment{Roots: ls.tb.Workspace.Roots(), ConfigDir: ls.tb.ConfigDir},
		Logger:       discard(),
		MaxTurns:     4,
	}
}

// promptScript is the model's side of n prompts: a read_file call, then an answer of a
// few hundred characters, with usage as a model reports it.
func promptScript(n int) clients.Script {
	var s clients.Script
	answer := "a.txt holds one line, \"the text of a.txt\". " + strings.Repeat("It is a short text file with nothing else in it. ", 8)
	for i := range n {
		args, _ := json.Marshal(map[string]string{"file_path": "a.txt"})
		s.Turns = append(s.Turns,
			clients.Turn{Calls: []clients.ScriptCall{{ID: fmt.Sprintf("r%d", i), Name: "read_file", Args: args}},
				Usage: &clients.Usage{PromptTokens: 1000 + 200*i, OutputTokens: 20}},
			clients.Turn{Text: answer, Usage: &clients.Usage{PromptTokens: 1100 + 200*i, OutputTokens: 120}})
	}
	return s
}

// BenchmarkSystemInstructionLarge makes the system instruction of a prompt in a
// workspace of 200,000 files (testutil.LargeTree), whose listing is bounded.
func BenchmarkSystemInstructionLarge(b *testing.B) {
	env := Environment{Roots: []string{testutil.LargeTree(b, 200_000)}, ConfigDir: b.TempDir()}
	var n int
	for b.Loop() {
		n = len(systemInstruction(env, nil, discard()))
	}
	b.ReportMetric(float64(n), "bytes")
}
