package rpc_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/lsptest"
)

// TestCloseLargeDocumentReleasesMemory opens a 100 MB document in the real server over
// real pipes, closes it, and requires the server's resident memory to come back to
// within twice what it was before the didOpen, within a few seconds: an editor that
// opened a huge log file once must not leave agentls holding hundreds of megabytes for
// the rest of the session.
func TestCloseLargeDocumentReleasesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 100 MB document; not in -short mode")
	}
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"small.go": "package small\n"})
	c := startPlain(t, root)
	if _, err := c.Initialize(ctx, initParams(root, capsEditor, nil)); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	pid := serverPID(t, root)
	// A request after the notifications before it returns once they were handled:
	// notifications are handled in order on the server's read loop.
	roundTrip := func(what string) {
		t.Helper()
		var tools []any
		if err := c.Call(ctx, "agentls/tools", map[string]any{}, &tools); err != nil {
			t.Fatalf("agentls/tools after %s: %v", what, err)
		}
	}
	roundTrip("initialize")
	// The baseline is an initialized, idle server.
	time.Sleep(200 * time.Millisecond)
	baseline := vmRSS(t, pid)

	const size = 100 << 20
	uri := lsptest.FileURI(filepath.Join(root, "huge.go"))
	start := time.Now()
	if err := c.WriteRaw(didOpenFrame(uri, size)); err != nil {
		t.Fatalf("didOpen: %v", err)
	}
	roundTrip("didOpen")
	opened := vmRSS(t, pid)
	t.Logf("didOpen of a %d MB document handled in %v", size>>20, time.Since(start).Round(time.Millisecond))
	// The server must hold the text at least once while it is open; if it did not grow
	// by that much, the document never reached it and the rest proves nothing.
	if opened-baseline < size {
		t.Fatalf("resident memory went from %s to %s after the didOpen of %s: the document was not held",
			mb(baseline), mb(opened), mb(size))
	}

	closed := time.Now()
	if err := c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}}); err != nil {
		t.Fatalf("didClose: %v", err)
	}
	roundTrip("didClose")
	const within = 10 * time.Second
	var now int64
	for {
		now = vmRSS(t, pid)
		if now <= 2*baseline {
			break
		}
		if time.Since(closed) > within {
			t.Fatalf("resident memory: %s before the didOpen, %s with the document open, still %s %v after the didClose (limit %s, twice the baseline)",
				mb(baseline), mb(opened), mb(now), within, mb(2*baseline))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("resident memory: %s before the didOpen, %s with the document open, %s %v after the didClose",
		mb(baseline), mb(opened), mb(now), time.Since(closed).Round(time.Millisecond))

	// The server goes on serving documents as before.
	small := filepath.Join(root, "small.go")
	if err := c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lsptest.FileURI(small), "languageId": "go", "version": 1, "text": "package small // unsaved\n"}}); err != nil {
		t.Fatal(err)
	}
	if got := readOverlay(ctx, t, c, small); !strings.Contains(got, "unsaved") {
		t.Errorf("read_file of an open document after a large one was closed = %q, want the editor's text", got)
	}
}

// didOpenFrame returns a framed didOpen of uri with a Go-like text of about size bytes,
// built in its JSON form directly: the test need not hold the text and its encoding
// both. The lines hold tabs and quotes, which JSON escapes, as real code does.
func didOpenFrame(uri string, size int) []byte {
	const line = `\tfmt.Println(\"a line of a very large generated file\", i, j) // with a comment\n`
	const decoded = len(line) - 4 // \t, two \" and \n are one byte each
	head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":%q,"languageId":"go","version":1,"text":"`, uri)
	const tail = `"}}}`
	n := size/decoded + 1
	bodyLen := len(head) + n*len(line) + len(tail)
	var b bytes.Buffer
	b.Grow(bodyLen + 64)
	b.WriteString("Content-Length: " + strconv.Itoa(bodyLen) + "\r\n\r\n")
	b.WriteString(head)
	for range n {
		b.WriteString(line)
	}
	b.WriteString(tail)
	return b.Bytes()
}

// startPlain starts agentls serve in root as start does, but built without the race
// detector even when the tests run under it: the detector's shadow memory is never given
// back, so the resident memory of a race-enabled server says nothing about agentls's.
func startPlain(t testing.TB, root string) *lsptest.Client {
	t.Helper()
	if !raceEnabled {
		return start(t, root)
	}
	bin := filepath.Join(t.TempDir(), "agentls")
	build := exec.Command("go", "build", "-o", bin, "github.com/agentls/agentls/cmd/agentls")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building agentls without -race: %v\n%s", err, out)
	}
	cfg := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(modelEnv, name)
	})
	env = append(env, "XDG_CONFIG_HOME="+cfg, "HOME="+cfg, "XDG_STATE_HOME="+filepath.Join(cfg, "state"), "AGENTLS_LOG_LEVEL=debug")
	return lsptest.Start(t, bin, lsptest.Options{Args: []string{"serve"}, Dir: root, Env: env})
}

// serverPID returns the process id of the server started in root: the child of this
// process whose working directory is root (lsptest does not expose the process).
func serverPID(t testing.TB, root string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || statusField(status, "PPid") != strconv.Itoa(os.Getpid()) {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == root {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("looking for the server among this process's children with working directory %s: found %v", root, found)
	}
	return found[0]
}

// vmRSS returns the resident memory of process pid in bytes, from /proc/pid/status.
func vmRSS(t testing.TB, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's memory: %v", err)
	}
	kb, err := strconv.ParseInt(strings.TrimSuffix(statusField(status, "VmRSS"), " kB"), 10, 64)
	if err != nil {
		t.Fatalf("VmRSS of process %d: %v", pid, err)
	}
	return kb << 10
}

// statusField returns the value of a field of /proc/pid/status, trimmed.
func statusField(status []byte, name string) string {
	for line := range strings.SplitSeq(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
