package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
)

// hunkAsker answers with the given answer and records the details it was shown.
type hunkAsker struct {
	answer confirm.Answer
	shown  confirm.Details
}

func (a *hunkAsker) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	a.shown = req.Details
	return a.answer, nil
}

// TestSchedulerAcceptedHunks runs write_file and replace through the scheduler with a
// person accepting some hunks of the proposal: only those are written, the rest of the
// file stays as it was (CRLF line endings included), and the model is told which were
// taken. Invalid choices are refusals that write nothing.
func TestSchedulerAcceptedHunks(t *testing.T) {
	var orig, all strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&orig, "line %d\r\n", i)
		switch i {
		case 3:
			all.WriteString("three\r\n")
		case 15:
			all.WriteString("fifteen\r\n")
		case 28:
			all.WriteString("twenty-eight\r\n")
		default:
			fmt.Fprintf(&all, "line %d\r\n", i)
		}
	}
	lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	only := func(keep ...string) string {
		out := orig.String()
		for _, k := range keep {
			switch k {
			case "three":
				out = strings.Replace(out, "line 3\r\n", "three\r\n", 1)
			case "fifteen":
				out = strings.Replace(out, "line 15\r\n", "fifteen\r\n", 1)
			case "twenty-eight":
				out = strings.Replace(out, "line 28\r\n", "twenty-eight\r\n", 1)
			}
		}
		return out
	}
	writeReq := func() tools.Request {
		args, _ := json.Marshal(map[string]string{"file_path": "f.txt", "content": lf(all.String())})
		return tools.Request{CallID: "w", Name: "write_file", Args: args}
	}
	tests := []struct {
		name     string
		req      tools.Request
		answer   confirm.Answer
		status   tools.Status
		want     string
		wantOut  []string
		wantNots []string
	}{
		{"write_file, hunks 1 and 3", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{0, 2}},
			tools.StatusSuccess, only("three", "twenty-eight"),
			[]string{"The user accepted hunks 1 and 3 of 3; hunk 2 was not applied: @@ -12,7 +12,7 @@"}, nil},
		{"write_file, all hunks", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{2, 0, 1}},
			tools.StatusSuccess, all.String(), nil, []string{"accepted", "modified"}},
		{"write_file, whole proposal", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce},
			tools.StatusSuccess, all.String(), nil, []string{"accepted"}},
		{"write_file, no hunk", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{}},
			tools.StatusCancelled, orig.String(), []string{"rejected all 3 hunks"}, nil},
		{"replace, hunk 2", replaceReq("r", "f.txt", "line 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\n",
			"three\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nfifteen\n"),
			confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{1}},
			tools.StatusSuccess, only("fifteen"), []string{"The user accepted hunk 2 of 2; hunk 1 was not applied: @@ -1,6 +1,6 @@"}, nil},
		{"out of range", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{3}},
			tools.StatusCancelled, orig.String(), []string{"invalid answer", "hunk 3 does not exist"}, nil},
		{"duplicate", writeReq(), confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{1, 1}},
			tools.StatusCancelled, orig.String(), []string{"invalid answer", "given twice"}, nil},
		{"with always", writeReq(), confirm.Answer{Outcome: confirm.ProceedAlways, AcceptedHunks: []int{1}},
			tools.StatusCancelled, orig.String(), []string{"invalid answer", "only with proceed_once"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": orig.String()})
			asker := &hunkAsker{answer: tt.answer}
			s := newFileScheduler(t, ws, confirm.ModeDefault, asker)
			res := s.RunOne(context.Background(), tt.req)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tt.status, res.Output)
			}
			if len(asker.shown.Hunks) == 0 {
				t.Fatalf("no hunks shown: %+v", asker.shown)
			}
			got, err := os.ReadFile(filepath.Join(root, "f.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file is\n%q\nwant\n%q", got, tt.want)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output %q lacks %q", res.Output, w)
				}
			}
			for _, w := range tt.wantNots {
				if strings.Contains(res.Output, w) {
					t.Errorf("output %q has %q", res.Output, w)
				}
			}
		})
	}
}

// wholeTool wraps a tool whose calls cannot take a modified version: they drop the
// Modify capability, as a tool that cannot apply a part of its proposal has none.
type wholeTool struct{ tools.Tool }

func (t wholeTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil {
		return nil, err
	}
	return wholeCall{inv}, nil
}

type wholeCall struct{ tools.Invocation }

func (wholeCall) Capabilities() tools.Capabilities { return tools.Capabilities{} }

// TestSchedulerNoHunksWithoutModify: a call that cannot apply a part of its proposal is
// asked without hunks, and an answer choosing hunks anyway is a refusal.
func TestSchedulerNoHunksWithoutModify(t *testing.T) {
	old := "a\n" + strings.Repeat("x\n", 20) + "b\n"
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": old})
	reg := tools.NewRegistry(nil, tools.Filter{})
	for _, tool := range files.Tools(ws) {
		reg.Register(wholeTool{tool})
	}
	policy, err := confirm.NewPolicy(confirm.ModeDefault, nil, ws.Roots)
	if err != nil {
		t.Fatal(err)
	}
	asker := &hunkAsker{answer: confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{0}}}
	s := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, Locks: ws, OutputDir: t.TempDir()})
	args, _ := json.Marshal(map[string]string{"file_path": "f.txt", "content": "A\n" + strings.Repeat("x\n", 20) + "B\n"})
	res := s.RunOne(t.Context(), tools.Request{CallID: "w", Name: "write_file", Args: args})
	if res.Status != tools.StatusCancelled || !strings.Contains(res.Output, "hunk 0 does not exist") {
		t.Fatalf("result %s %q, want a refusal", res.Status, res.Output)
	}
	if asker.shown.Diff == "" || asker.shown.Hunks != nil {
		t.Errorf("asked with hunks %+v (diff %q), want the diff without hunks", asker.shown.Hunks, asker.shown.Diff)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(got) != old {
		t.Errorf("the file was written: %q", got)
	}
}
