package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/confirm"
)

// runAsync runs reqs in the background; the batch's results arrive on the channel.
// Receiving them with recv turns a deadlock into a failure rather than a hung test.
func runAsync(ctx context.Context, s *Scheduler, reqs []Request) <-chan []CallResult {
	done := make(chan []CallResult, 1)
	go func() { done <- s.Run(ctx, reqs) }()
	return done
}

func pathArgs(id string, paths ...string) string {
	b, err := json.Marshal(fakeArgs{ID: id, Paths: paths})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestSchedulerWritersOfDistinctFilesOverlap(t *testing.T) {
	for _, asked := range []bool{false, true} {
		t.Run(fmt.Sprintf("asked=%v", asked), func(t *testing.T) {
			const n = 3
			dir := t.TempDir()
			var arrived atomic.Int32
			all := make(chan struct{})
			writer := &fakeTool{name: "write", kind: KindEdit, confirm: asked, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
				if arrived.Add(1) == n {
					close(all)
				}
				// Every writer waits for all the others: only writers running at once
				// get past.
				select {
				case <-all:
					return &Result{Output: inv.args.ID}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}}
			env := newEnv(t, func(o *Options) { o.Asker = answer(confirm.ProceedOnce) }, writer)
			var reqs []Request
			for i := range n {
				id := fmt.Sprint("w", i)
				reqs = append(reqs, req(id, "write", pathArgs(id, filepath.Join(dir, id+".txt"))))
			}
			for _, r := range recv(t, "the writers of distinct files to run at once", runAsync(t.Context(), env.s, reqs)) {
				wantStatus(t, r, StatusSuccess, "")
			}
		})
	}
}

// TestSchedulerWriterWaitsForAskedWriter checks the order of two writers of one file
// when the first needs approval and the second does not: the second is proposed and
// run only once the first has ended, whatever the person answered, and the batch does
// not deadlock although the asking loop and the second call both wait for the first.
func TestSchedulerWriterWaitsForAskedWriter(t *testing.T) {
	cases := []struct {
		outcome     confirm.Outcome
		firstStatus Status
		log         []string
	}{
		{confirm.ProceedOnce, StatusSuccess, []string{"propose first", "ask first", "run first", "propose second", "run second"}},
		{confirm.Cancel, StatusCancelled, []string{"propose first", "ask first", "propose second", "run second"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.outcome), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "f.txt")
			var mu sync.Mutex
			var log []string
			note := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				log = append(log, s)
			}
			proposed := func(inv *fakeInv) { note("propose " + inv.args.ID) }
			exec := func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
				note("run " + inv.args.ID)
				return &Result{}, nil
			}
			asked := &fakeTool{name: "asked", kind: KindEdit, confirm: true, proposed: proposed, exec: exec}
			auto := &fakeTool{name: "auto", kind: KindEdit, proposed: proposed, exec: exec}
			var env *testEnv
			asker := askerFunc(func(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
				// The second call is held back while the first is being asked about.
				waitFor(t, "the second writer to wait for the first", func() bool { return env.s.queued.Load() == 1 })
				note("ask " + r.ToolCallID)
				return confirm.Answer{Outcome: tc.outcome}, nil
			})
			env = newEnv(t, func(o *Options) { o.Asker = asker }, asked, auto)
			results := recv(t, "the batch to end", runAsync(t.Context(), env.s, []Request{
				req("first", "asked", pathArgs("first", file)),
				req("second", "auto", pathArgs("second", file)),
			}))
			wantStatus(t, results[0], tc.firstStatus, map[Status]ErrorType{StatusCancelled: ErrCancelled}[tc.firstStatus])
			wantStatus(t, results[1], StatusSuccess, "")
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(log, tc.log) {
				t.Errorf("steps %q, want %q", log, tc.log)
			}
		})
	}
}

// TestSchedulerWritersOfOneFileInOrder checks a longer chain: writers of one file run
// one after another in request order, each proposed only after the one before ended,
// while a writer of another file and a reader of the same file are not held back.
func TestSchedulerWritersOfOneFileInOrder(t *testing.T) {
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, s)
	}
	// The reader and the writer of b.txt must both run while the first writer of a.txt
	// does: it waits for them.
	others := make(chan struct{}, 2)
	writer := &fakeTool{name: "write", kind: KindEdit, confirm: true,
		proposed: func(inv *fakeInv) { note("propose " + inv.args.ID) },
		exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
			switch inv.args.ID {
			case "a1":
				for range 2 {
					recv(t, "the writer of b.txt and the reader of a.txt", others)
				}
			case "b":
				others <- struct{}{}
				return &Result{}, nil
			}
			note("run " + inv.args.ID)
			return &Result{}, nil
		}}
	reader := &fakeTool{name: "read", kind: KindRead, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		others <- struct{}{}
		return &Result{}, nil
	}}
	// The person declines a2: a3 is proposed after that and runs.
	asker := askerFunc(func(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
		if r.ToolCallID == "a2" {
			return confirm.Answer{Outcome: confirm.Cancel}, nil
		}
		return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
	})
	env := newEnv(t, func(o *Options) { o.Asker = asker }, writer, reader)
	results := recv(t, "the batch to end", runAsync(t.Context(), env.s, []Request{
		req("a1", "write", pathArgs("a1", fileA)),
		req("b", "write", pathArgs("b", fileB)),
		req("r", "read", pathArgs("r", fileA)),
		req("a2", "write", pathArgs("a2", fileA)),
		req("a3", "write", pathArgs("a3", fileB, fileA)),
	}))
	for _, r := range results {
		if r.CallID == "a2" {
			wantStatus(t, r, StatusCancelled, ErrCancelled, "declined")
		} else {
			wantStatus(t, r, StatusSuccess, "")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var onA []string
	for _, s := range log {
		if s != "propose b" {
			onA = append(onA, s)
		}
	}
	if want := []string{"propose a1", "run a1", "propose a2", "propose a3", "run a3"}; !slices.Equal(onA, want) {
		t.Errorf("steps on a.txt %q, want %q", onA, want)
	}
}

// TestSchedulerLockAfterModify checks that the path locks still keep two writers apart
// when a person's modification moves a call onto a file another call is writing: the
// call was not ordered behind that one, as its file was another when it was proposed.
func TestSchedulerLockAfterModify(t *testing.T) {
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	entered := make(chan string, 2)
	release := make(chan struct{})
	aRuns := make(chan struct{})
	var inA atomic.Int32
	exec := func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if slices.Contains(inv.args.Paths, fileA) {
			if inA.Add(1) > 1 {
				return nil, errors.New("two writers of a.txt ran at once")
			}
			defer inA.Add(-1)
		}
		if inv.args.ID == "a" {
			close(aRuns)
		}
		entered <- inv.args.ID
		if inv.args.ID == "a" {
			recv(t, "the release of the first writer", release)
		}
		return &Result{}, nil
	}
	plain := &fakeTool{name: "write", kind: KindEdit, exec: exec}
	movable := &fakeTool{name: "movable", kind: KindEdit, confirm: true, modifiable: true, exec: exec}
	asker := askerFunc(func(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
		// The person answers once a is writing a.txt, so the moved call must wait for it.
		recv(t, "the first writer to run", aRuns)
		return confirm.Answer{Outcome: confirm.ModifyWithEditor, Content: "move to:" + fileA}, nil
	})
	env := newEnv(t, func(o *Options) { o.Asker = asker }, plain, movable)
	done := runAsync(t.Context(), env.s, []Request{
		req("a", "write", pathArgs("a", fileA)),
		req("moved", "movable", pathArgs("moved", fileB)),
	})
	if got := recv(t, "the first writer", entered); got != "a" {
		t.Fatalf("%s entered first", got)
	}
	waitFor(t, "the moved writer to queue for the lock of a.txt", func() bool { return env.s.ownWaits.Load() == 1 })
	select {
	case id := <-entered:
		t.Fatalf("%s entered while a was writing a.txt", id)
	default:
	}
	close(release)
	if got := recv(t, "the moved writer", entered); got != "moved" {
		t.Fatalf("%s entered, want moved", got)
	}
	for _, r := range recv(t, "the batch to end", done) {
		wantStatus(t, r, StatusSuccess, "")
	}
}
