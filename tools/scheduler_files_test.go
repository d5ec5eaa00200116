package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
	"github.com/agentls/agentls/workspace"
)

// These tests run the real file tools through the scheduler: what a model's batch of
// edits does to a file, and what a person is shown before each edit.

// askRecorder answers each confirmation with the outcome given for its call (proceed
// once by default) and records what was asked.
type askRecorder struct {
	outcomes map[string]confirm.Outcome
	// before, if set, runs before each answer, as the person's typing would.
	before func(req confirm.Request)
	// content is the person's version for a modify_with_editor answer.
	content string

	mu    sync.Mutex
	asked map[string]confirm.Details
	order []string
}

func (a *askRecorder) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	if a.before != nil {
		a.before(req)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asked == nil {
		a.asked = map[string]confirm.Details{}
	}
	a.asked[req.ToolCallID] = req.Details
	a.order = append(a.order, req.ToolCallID)
	o, ok := a.outcomes[req.ToolCallID]
	if !ok {
		o = confirm.ProceedOnce
	}
	return confirm.Answer{Outcome: o, Content: a.content}, nil
}

func replaceReq(id, path, old, new string) tools.Request {
	args, err := json.Marshal(map[string]string{"file_path": path, "old_string": old, "new_string": new})
	if err != nil {
		panic(err)
	}
	return tools.Request{CallID: id, Name: "replace", Args: args}
}

func newFileScheduler(t *testing.T, ws *workspace.Workspace, mode confirm.Mode, asker confirm.Asker) *tools.Scheduler {
	t.Helper()
	reg := tools.NewRegistry(nil, tools.Filter{})
	for _, tool := range files.Tools(ws) {
		reg.Register(tool)
	}
	policy, err := confirm.NewPolicy(mode, nil, ws.Roots)
	if err != nil {
		t.Fatal(err)
	}
	return tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, OutputDir: t.TempDir()})
}

// TestSchedulerReplacesInOrder checks that replaces of one file in one batch are
// proposed and applied one after another, in request order: a later one's old_string
// may be text an earlier one wrote, and the diff a person approves for it is against
// the file as the earlier ones left it.
func TestSchedulerReplacesInOrder(t *testing.T) {
	type step struct {
		id, old, new string
		outcome      confirm.Outcome // empty: proceed once
		// before is the file's text the call's proposal must be against; empty if the
		// call must not be proposed.
		before string
		status tools.Status
	}
	cases := []struct {
		name  string
		mode  confirm.Mode
		steps []step
		final string
	}{
		{
			name: "both asked and approved", mode: confirm.ModeDefault, final: "gamma\n",
			steps: []step{
				{id: "r1", old: "alpha", new: "beta", before: "alpha\n", status: tools.StatusSuccess},
				{id: "r2", old: "beta", new: "gamma", before: "beta\n", status: tools.StatusSuccess},
			},
		},
		{
			name: "neither asked", mode: confirm.ModeYolo, final: "gamma\n",
			steps: []step{
				{id: "r1", old: "alpha", new: "beta", before: "alpha\n", status: tools.StatusSuccess},
				{id: "r2", old: "beta", new: "gamma", before: "beta\n", status: tools.StatusSuccess},
			},
		},
		{
			// The first is declined: the second is proposed against the text unchanged.
			name: "first declined", mode: confirm.ModeDefault, final: "delta\n",
			steps: []step{
				{id: "r1", old: "alpha", new: "beta", outcome: confirm.Cancel, before: "alpha\n", status: tools.StatusCancelled},
				{id: "r2", old: "alpha", new: "delta", before: "alpha\n", status: tools.StatusSuccess},
			},
		},
		{
			name: "middle declined", mode: confirm.ModeDefault, final: "gamma\n",
			steps: []step{
				{id: "r1", old: "alpha", new: "beta", before: "alpha\n", status: tools.StatusSuccess},
				{id: "r2", old: "beta", new: "never", outcome: confirm.Cancel, before: "beta\n", status: tools.StatusCancelled},
				{id: "r3", old: "beta", new: "gamma", before: "beta\n", status: tools.StatusSuccess},
			},
		},
		{
			// The first fails to match: the second still runs, on the unchanged text.
			name: "first fails", mode: confirm.ModeDefault, final: "beta\n",
			steps: []step{
				{id: "r1", old: "missing", new: "x", status: tools.StatusError},
				{id: "r2", old: "alpha", new: "beta", before: "alpha\n", status: tools.StatusSuccess},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": "alpha\n"})
			asker := &askRecorder{outcomes: map[string]confirm.Outcome{}}
			var reqs []tools.Request
			for _, s := range tc.steps {
				reqs = append(reqs, replaceReq(s.id, "f.txt", s.old, s.new))
				if s.outcome != "" {
					asker.outcomes[s.id] = s.outcome
				}
			}
			results := newFileScheduler(t, ws, tc.mode, asker).Run(t.Context(), reqs)
			for i, s := range tc.steps {
				r := results[i]
				if r.Status != s.status {
					t.Fatalf("%s: status %s (%+v), want %s", s.id, r.Status, r.Error, s.status)
				}
				d, asked := asker.asked[s.id]
				if wantAsked := tc.mode == confirm.ModeDefault && s.before != ""; asked != wantAsked {
					t.Fatalf("%s: asked %v, want %v", s.id, asked, wantAsked)
				}
				if asked {
					if d.OriginalContent == nil || *d.OriginalContent != s.before {
						t.Errorf("%s: proposal against %v, want %q", s.id, d.OriginalContent, s.before)
					}
					if !strings.Contains(d.Diff, "-"+s.old+"\n") || !strings.Contains(d.Diff, "+"+s.new+"\n") {
						t.Errorf("%s: diff shown\n%s\ndoes not replace %q by %q", s.id, d.Diff, s.old, s.new)
					}
				}
				if r.Status == tools.StatusSuccess && (r.Diff == nil || r.Diff.OriginalContent == nil || *r.Diff.OriginalContent != s.before) {
					t.Errorf("%s: result diff %+v, want one against %q", s.id, r.Diff, s.before)
				}
			}
			data, err := os.ReadFile(filepath.Join(root, "f.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.final {
				t.Errorf("file %q, want %q", data, tc.final)
			}
		})
	}
}

// TestSchedulerEditedWhileAsked is the consent bug a Neovim test found: while the
// person looks at the proposed edit of an open buffer, they type in it; then they
// approve. The edit they approved was against text that is gone, so it must not be
// applied to the new text.
func TestSchedulerEditedWhileAsked(t *testing.T) {
	for _, outcome := range []confirm.Outcome{confirm.ProceedOnce, confirm.ModifyWithEditor} {
		t.Run(string(outcome), func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": "alpha\nbeta\n"})
			abs := filepath.Join(root, "f.txt")
			ws.Open(abs, 1, "alpha\nbeta\n")
			const typed = "alpha\nbeta\ntyped while asked\n"
			rec := &askRecorder{
				outcomes: map[string]confirm.Outcome{"e": outcome},
				// The editor reports the person's typing as a change of the document.
				before:  func(confirm.Request) { ws.Update(abs, 2, typed) },
				content: "alpha\nthe person's version\n",
			}
			r := newFileScheduler(t, ws, confirm.ModeDefault, rec).RunOne(t.Context(), replaceReq("e", "f.txt", "beta", "BETA"))
			if r.Status != tools.StatusError || r.Error == nil || r.Error.Type != tools.ErrStaleContent {
				t.Fatalf("result %+v, want a stale_content error", r)
			}
			if !strings.Contains(r.Output, "changed since the proposed change was shown") {
				t.Errorf("output %q", r.Output)
			}
			if d := rec.asked["e"]; d.OriginalContent == nil || *d.OriginalContent != "alpha\nbeta\n" {
				t.Errorf("asked about %+v", d)
			}
			if doc, _ := ws.Document(abs); doc.Text != typed {
				t.Errorf("overlay %q, want the person's typing kept", doc.Text)
			}
			data, err := os.ReadFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != "alpha\nbeta\n" {
				t.Errorf("disk %q, want it unchanged", data)
			}
		})
	}
}
