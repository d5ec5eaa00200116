package workspace

import (
	"context"
	"testing"
	"time"
)

// patience bounds how long a test waits for something that must happen.
const patience = 20 * time.Second

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLockPaths(t *testing.T) {
	w := &Workspace{}
	ctx := t.Context()
	unlockA, err := w.LockPaths(ctx, "/w/a", "/w/./a", "/w/b")
	if err != nil {
		t.Fatal(err)
	}
	// A holder of b and c waits for the holder of a and b, in whichever order it
	// names them.
	got := make(chan func(), 1)
	go func() {
		unlock, err := w.LockPaths(ctx, "/w/c", "/w/b")
		if err != nil {
			t.Error(err)
		}
		got <- unlock
	}()
	waitUntil(t, "the second holder to wait for b", func() bool { return w.locks.refs("/w/b") == 2 })
	select {
	case <-got:
		t.Fatal("b was taken twice")
	default:
	}
	// A path nobody holds is free.
	unlockD, err := w.LockPaths(ctx, "/w/d")
	if err != nil {
		t.Fatal(err)
	}
	unlockD()

	unlockA()
	unlockA() // releasing twice is harmless
	var unlockB func()
	select {
	case unlockB = <-got:
	case <-time.After(patience):
		t.Fatal("the second holder never got b")
	}
	if n := w.locks.refs("/w/a"); n != 0 {
		t.Errorf("a: %d holders after its release", n)
	}
	unlockB()
	for _, p := range []string{"/w/a", "/w/b", "/w/c", "/w/d"} {
		if n := w.locks.refs(p); n != 0 {
			t.Errorf("%s: %d holders left behind", p, n)
		}
	}
}

func TestLockPathsCancelled(t *testing.T) {
	w := &Workspace{}
	unlock, err := w.LockPaths(t.Context(), "/w/a")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := w.LockPaths(ctx, "/w/0", "/w/a") // takes 0, then waits for a
		errc <- err
	}()
	waitUntil(t, "the waiter to queue for a", func() bool { return w.locks.refs("/w/a") == 2 })
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Fatalf("err %v, want %v", err, context.Canceled)
		}
	case <-time.After(patience):
		t.Fatal("the cancelled waiter never returned")
	}
	// It holds nothing it took on the way.
	if n := w.locks.refs("/w/0"); n != 0 {
		t.Errorf("0: %d holders after a cancelled wait", n)
	}
	if n := w.locks.refs("/w/a"); n != 1 {
		t.Errorf("a: %d holders and waiters, want 1", n)
	}
}
