package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
	"github.com/agentls/agentls/workspace"
)

// notingTool wraps a tool the way a front end adapts one: its calls add a note to the
// output and leave the rest to the wrapped call, which they embed.
type notingTool struct{ tools.Tool }

func (t notingTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil {
		return nil, err
	}
	return notingCall{inv}, nil
}

type notingCall struct{ tools.Invocation }

func (c notingCall) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	res, err := c.Invocation.Execute(ctx, out)
	if err == nil {
		res.Output += "\n(noted)"
	}
	return res, err
}

// TestWrappedCallKeepsModification checks that a wrapper of replace passes on what the
// call can do: the person's modified version is what the wrapped call writes, not the
// proposal.
func TestWrappedCallKeepsModification(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(nil, tools.Filter{})
	for _, tool := range files.Tools(ws) {
		if tool.Info().Name == "replace" {
			tool = notingTool{tool}
		}
		reg.Register(tool)
	}
	policy, err := confirm.NewPolicy(confirm.ModeDefault, nil, ws.Roots)
	if err != nil {
		t.Fatal(err)
	}
	asker := &askRecorder{outcomes: map[string]confirm.Outcome{"edit": confirm.ModifyWithEditor}, content: "a\nmine\n"}
	s := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, Locks: ws, OutputDir: t.TempDir()})
	r := s.RunOne(t.Context(), replaceReq("edit", path, "b", "B"))
	if r.Status != tools.StatusSuccess {
		t.Fatalf("%s %+v", r.Status, r.Error)
	}
	if !strings.Contains(r.Output, "(noted)") {
		t.Errorf("output %q lacks the wrapper's note", r.Output)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "a\nmine\n" {
		t.Errorf("the file holds %q, want the person's version %q", data, "a\nmine\n")
	}
}
