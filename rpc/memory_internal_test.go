package rpc

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseReleasesMemoryOfLargeDocuments checks that closing a document gives memory
// back to the system when the document was large, and only then: normal traffic must
// not pay for a collection.
func TestCloseReleasesMemoryOfLargeDocuments(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := runningServer(t, root)
	var freed atomic.Int32
	done := make(chan struct{}, 10)
	s.memory.free = func() {
		freed.Add(1)
		done <- struct{}{}
	}
	ctx := context.Background()
	openClose := func(name, text string) {
		t.Helper()
		uri := "file://" + filepath.Join(root, name)
		if err := s.didOpen(ctx, params(t, map[string]any{"textDocument": map[string]any{"uri": uri, "version": 1, "text": text}})); err != nil {
			t.Fatal(err)
		}
		if err := s.didChange(ctx, params(t, map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
			"contentChanges": []any{map[string]any{"text": text + "// more\n"}}})); err != nil {
			t.Fatal(err)
		}
		if err := s.didClose(ctx, params(t, map[string]any{"textDocument": map[string]any{"uri": uri}})); err != nil {
			t.Fatal(err)
		}
	}
	line := "func f() {} // a line of a document\n"
	openClose("small.go", strings.Repeat(line, 1000))
	openClose("almost.go", strings.Repeat(line, (largeDocument-100)/len(line)))
	openClose("large.go", strings.Repeat(line, largeDocument/len(line)+1))
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("closing a large document gave no memory back")
	}
	// A release for either small document would have started before the large one's
	// and made it run twice.
	waitReleased(t, &s.memory)
	if n := freed.Load(); n != 1 {
		t.Errorf("closing two small documents and a large one released memory %d times, want once", n)
	}
}

// TestMemoryReleaserCoalesces checks that documents closed while memory is being given
// back cost one more release between them, not one each, and are not forgotten.
func TestMemoryReleaserCoalesces(t *testing.T) {
	t.Parallel()
	var freed atomic.Int32
	started, proceed := make(chan struct{}), make(chan struct{})
	m := memoryReleaser{free: func() {
		if freed.Add(1) == 1 {
			close(started)
			<-proceed
		}
	}}
	m.release()
	<-started
	for range 5 {
		m.release()
	}
	close(proceed)
	waitReleased(t, &m)
	if n := freed.Load(); n != 2 {
		t.Errorf("six releases, five of them during the first, freed %d times; want 2", n)
	}
}

// waitReleased waits until m has no release running or pending.
func waitReleased(t *testing.T, m *memoryReleaser) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		running := m.running
		m.mu.Unlock()
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the memory release did not finish")
		}
		time.Sleep(time.Millisecond)
	}
}
