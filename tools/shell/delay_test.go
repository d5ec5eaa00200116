package shell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// TestBackgroundDelay checks delay_ms of a background command as Gemini CLI defines
// it: the call waits up to delay_ms (200 ms when not given, which no test here relies
// on: a loaded machine may start bash slower) for the command's early
// output; a command that ends by then is reported with its output and exit code, one
// still running with what it printed so far; delay_ms 0 returns at once. The waits are
// bounded by the command's own end or marker, never by a clock in the assertions.
func TestBackgroundDelay(t *testing.T) {
	cases := []struct {
		name    string
		command string
		delay   any
		// want are parts of the output; exit is its Exit Code field.
		want []string
		exit string
	}{
		{name: "ends within the delay", command: "echo first; echo second >&2; exit 3", delay: 600_000,
			want: []string{"first\nsecond", "finished within 10m0s", "Background PIDs: (none)"}, exit: "3"},
		{name: "still running", command: "echo early; exec sleep 100", delay: 3_000,
			want: []string{"Output: (running in the background)", "Output in its first 3s:\n<untrusted_context>\nearly\n</untrusted_context>"}, exit: "(none)"},
		{name: "no delay", command: "exec sleep 100", delay: 0,
			want: []string{"Output: (running in the background)"}, exit: "(none)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newShell(t, Options{}, nil)
			s.grace = 5 * time.Second
			extra := map[string]any{"is_background": true, "delay_ms": tc.delay}
			res, err := run(t.Context(), t, s, tc.command, extra, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, res.Output)
				}
			}
			if got := field(t, res, "Exit Code"); got != tc.exit {
				t.Errorf("Exit Code %q, want %q", got, tc.exit)
			}
			if jobs := s.snapshot(); len(jobs) != 1 {
				t.Errorf("%d jobs, want the command listed as one", len(jobs))
			}
		})
	}
}

// TestDelayOutOfRange checks that a delay_ms out of range — negative, beyond ten
// minutes, so large that it would overflow a time.Duration into a negative one (which
// ran the command and returned at once), or not an integer — is refused as an invalid
// parameter of run_shell_command and read_background_output, saying the range, and the
// command never starts: its marker file is never made.
func TestDelayOutOfRange(t *testing.T) {
	for _, delay := range []any{-1, 600_001, 10_000_000_000_000, 1.5, "10"} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			s, root := newShell(t, Options{}, nil)
			t.Cleanup(func() { s.Close() })
			marker := filepath.Join(root, "marker")
			_, err := run(t.Context(), t, s, "touch "+marker, map[string]any{"is_background": true, "delay_ms": delay}, nil)
			if te := tools.AsError(err, ""); err == nil || te.Type != tools.ErrInvalidParams {
				t.Errorf("run_shell_command: error %v, want invalid parameters", err)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran (stat %s: %v)", marker, err)
			}
			_, err = testutil.Call(t.Context(), t, tool(t, s, ReadToolName), args(t, map[string]any{"pid": 1, "delay_ms": delay}), nil)
			if te := tools.AsError(err, ""); err == nil || te.Type != tools.ErrInvalidParams {
				t.Errorf("read_background_output: error %v, want invalid parameters", err)
			}
		})
	}
}
