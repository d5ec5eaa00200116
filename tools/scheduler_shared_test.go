package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
	"github.com/agentls/agentls/workspace"
)

// heldWriter holds every write until release is closed, after telling arrived. With
// checkFirst it is like the editor writer: it compares the file with the text the tool
// read before it waits (the editor's round trip), and writes without a lock after;
// otherwise it hands the write to the disk writer, which compares under its file lock.
type heldWriter struct {
	checkFirst bool
	arrived    chan string
	release    chan struct{}
}

func (w *heldWriter) Write(ctx context.Context, c workspace.Change) error {
	if w.checkFirst {
		data, err := os.ReadFile(c.Path)
		if err != nil {
			return err
		}
		if string(data) != c.Old.Text {
			return fmt.Errorf("%s changed since it was read: %w", c.Path, workspace.ErrStale)
		}
	}
	w.arrived <- c.New
	select {
	case <-w.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if w.checkFirst {
		return os.WriteFile(c.Path, []byte(c.New), 0o644)
	}
	return workspace.DiskWriter{}.Write(ctx, c)
}

// lockSpy tells entered when its scheduler asks for path locks.
type lockSpy struct {
	tools.PathLocker
	entered chan struct{}
}

func (l lockSpy) LockPaths(ctx context.Context, paths ...string) (func(), error) {
	select {
	case l.entered <- struct{}{}:
	default:
	}
	return l.PathLocker.LockPaths(ctx, paths...)
}

// TestSchedulersShareLocks checks that two schedulers of one workspace (two sessions, or
// a session and the editor's own tool runs) keep their edits of one file apart as one
// scheduler does: of "a→A" and "b→B" on "a\nb\n", the second is proposed against what
// the first wrote, so the file ends "A\nB\n". It is never an edit lost while both report
// success, whichever writer commits them: the first write is held until the second is
// in flight too, or until the second scheduler provably waits for the first.
func TestSchedulersShareLocks(t *testing.T) {
	for _, checkFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("checkFirst=%v", checkFirst), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ws, err := workspace.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			w := &heldWriter{checkFirst: checkFirst, arrived: make(chan string, 2), release: make(chan struct{})}
			ws.SetWriter(w)
			spy := lockSpy{PathLocker: ws, entered: make(chan struct{}, 1)}
			newScheduler := func(locks tools.PathLocker) *tools.Scheduler {
				reg := tools.NewRegistry(nil, tools.Filter{})
				for _, tool := range files.Tools(ws) {
					reg.Register(tool)
				}
				policy, err := confirm.NewPolicy(confirm.ModeYolo, nil, ws.Roots)
				if err != nil {
					t.Fatal(err)
				}
				return tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Locks: locks, OutputDir: t.TempDir()})
			}
			s1, s2 := newScheduler(ws), newScheduler(spy)

			first, second := make(chan tools.CallResult, 1), make(chan tools.CallResult, 1)
			go func() { first <- s1.RunOne(t.Context(), replaceReq("first", path, "a", "A")) }()
			waitRecv(t, "the first write", w.arrived)
			go func() { second <- s2.RunOne(t.Context(), replaceReq("second", path, "b", "B")) }()
			select {
			case <-w.arrived: // both writes are in flight
			case <-spy.entered: // the second scheduler waits for the first's lock
			case <-time.After(sharedPatience):
				t.Fatal("the second call neither wrote nor waited for the first")
			}
			close(w.release)
			r1, r2 := waitRecv(t, "the first result", first), waitRecv(t, "the second result", second)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if r1.Status != tools.StatusSuccess {
				t.Fatalf("first: %s %+v", r1.Status, r1.Error)
			}
			switch {
			case r2.Status == tools.StatusSuccess && string(data) != "A\nB\n":
				t.Fatalf("both edits reported success, but the file holds %q", data)
			case r2.Status != tools.StatusSuccess && (r2.Error == nil || r2.Error.Type != tools.ErrStaleContent):
				t.Fatalf("second: %s %+v, want success or stale_content", r2.Status, r2.Error)
			case r2.Status != tools.StatusSuccess && string(data) != "A\nb\n":
				t.Fatalf("the second edit failed, but the file holds %q", data)
			}
		})
	}
}

func waitRecv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(sharedPatience):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

// sharedPatience bounds how long TestSchedulersShareLocks waits for what must happen;
// reaching it means a deadlock or a lost wake-up, never slowness.
const sharedPatience = 20 * time.Second
