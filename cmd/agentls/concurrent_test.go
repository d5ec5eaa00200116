package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentReplaceNeverLosesAnEdit runs two loops of agentls run replace at once on
// one file, as two agentls processes on one repository do (the editor server and agentls
// prompt, two editors): each process marks one of its own lines done, and an edit
// refused as stale is tried again in a new process. Every edit reported done must be in
// the final file, and every refusal must be a stale-file error that says what to do.
func TestConcurrentReplaceNeverLosesAnEdit(t *testing.T) {
	const perWriter = 25
	writers := []string{"a", "b"}
	root := workspaceDir(t)
	path := filepath.Join(root, "shared.txt")
	line := func(w string, i int, state string) string { return fmt.Sprintf("%s%03d %s", w, i, state) }
	var initial strings.Builder
	for i := range perWriter {
		for _, w := range writers {
			initial.WriteString(line(w, i, "todo") + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(initial.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	binary := agentlsBinary(t)

	// replace runs one agentls process that marks line i of writer w done.
	replace := func(w string, i int) (code int, stderr string, err error) {
		args, _ := json.Marshal(map[string]string{
			"file_path":  "shared.txt",
			"old_string": line(w, i, "todo"),
			"new_string": line(w, i, "done"),
		})
		cmd := exec.Command(binary, "run", "replace", string(args), "--approval-mode", "yolo", "--root", root)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "GORACE=atexit_sleep_ms=10")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err = cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), errOut.String(), nil
		}
		return 0, errOut.String(), err
	}

	type report struct {
		done    []int    // lines reported done
		refused []string // stale refusals, retried
		wrong   []string // anything else
	}
	reports := make([]report, len(writers))
	var wg sync.WaitGroup
	for k, w := range writers {
		wg.Go(func() {
			r := &reports[k]
			for i := range perWriter {
				for attempt := 0; ; attempt++ {
					if attempt == 20 {
						r.wrong = append(r.wrong, fmt.Sprintf("line %d: refused %d times in a row", i, attempt))
						return
					}
					code, stderr, err := replace(w, i)
					switch {
					case err != nil:
						r.wrong = append(r.wrong, fmt.Sprintf("line %d: %v", i, err))
						return
					case code == 0:
						r.done = append(r.done, i)
					case code == 1 && strings.Contains(stderr, "stale_content") && strings.Contains(stderr, "nothing was written") &&
						strings.Contains(stderr, "Read the file again"):
						r.refused = append(r.refused, stderr)
						continue
					default:
						r.wrong = append(r.wrong, fmt.Sprintf("line %d: exit code %d, stderr %q", i, code, stderr))
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()

	final, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for k, w := range writers {
		r := reports[k]
		for _, msg := range r.wrong {
			t.Errorf("writer %s: %s", w, msg)
		}
		for _, i := range r.done {
			if !strings.Contains(string(final), line(w, i, "done")+"\n") {
				t.Errorf("writer %s: agentls reported the edit of line %d done, but the file lacks it", w, i)
			}
		}
		if len(r.wrong) == 0 && len(r.done) != perWriter {
			t.Errorf("writer %s: %d edits done, want %d", w, len(r.done), perWriter)
		}
		refused += len(r.refused)
		if len(r.refused) > 0 {
			t.Logf("writer %s: e.g. %s", w, strings.TrimSpace(r.refused[0]))
		}
	}
	t.Logf("%d edits refused as stale and retried", refused)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".agentls-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
