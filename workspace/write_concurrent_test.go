//go:build unix && !aix

package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// TestConcurrentWriters commits two changes computed from the same old text at the same
// moment, as two schedulers over one workspace would: exactly one is written and the
// other refused, whatever the interleaving. Without a lock held across the re-read, the
// comparison and the rename, both can pass the comparison and both report success while
// one edit is lost; the rounds give that interleaving many chances to happen. (The lock
// is flock(2), see write_unix.go; other systems have none yet.)
func TestConcurrentWriters(t *testing.T) {
	const rounds = 60
	tests := []struct {
		name    string
		initial string // "" with create: no file
		create  bool
		link    bool // the second writer writes through a symlink to the file
		wantErr error
	}{
		{name: "edit", initial: "line 1\nline 2\nline 3\n", wantErr: workspace.ErrStale},
		{name: "edit of a mixed CRLF and LF file", initial: "line 1\r\nline 2\nline 3\r\n", wantErr: workspace.ErrStale},
		{name: "edit through a symlink", initial: "line 1\nline 2\n", link: true, wantErr: workspace.ErrStale},
		{name: "create", create: true, wantErr: workspace.ErrExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, nil)
			for round := range rounds {
				path := filepath.Join(root, fmt.Sprintf("f%d.txt", round))
				paths := [2]string{path, path}
				var old *workspace.File
				if !tt.create {
					if err := os.WriteFile(path, []byte(tt.initial), 0o644); err != nil {
						t.Fatal(err)
					}
					f, err := ws.ReadText(path, 0)
					if err != nil {
						t.Fatal(err)
					}
					old = f
				}
				if tt.link {
					paths[1] = path + ".link"
					symlink(t, filepath.Base(path), paths[1])
				}
				var (
					wg    sync.WaitGroup
					start = make(chan struct{})
					errs  [2]error
					texts [2]string
				)
				for i := range 2 {
					texts[i] = fmt.Sprintf("writer %d wrote this\n", i)
					wg.Go(func() {
						<-start
						errs[i] = ws.Commit(context.Background(), workspace.Change{Path: paths[i], Old: old, New: texts[i]})
					})
				}
				close(start)
				wg.Wait()

				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("round %d: both writers report success; the file holds only one edit", round)
					case err == nil:
						winner = i
					case !errors.Is(err, tt.wantErr):
						t.Fatalf("round %d: writer %d: %v, want success or %v", round, i, err, tt.wantErr)
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: both writers failed: %v; %v", round, errs[0], errs[1])
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if text, _, err := workspace.Decode(got); err != nil || text != texts[winner] {
					t.Fatalf("round %d: the file holds %q, want the successful writer's %q", round, got, texts[winner])
				}
			}
			noTempFiles(t, root)
		})
	}
}
