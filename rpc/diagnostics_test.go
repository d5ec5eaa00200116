package rpc_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tools"
)

// withDiagnostics returns caps with textDocument.publishDiagnostics (and code actions
// as objects) advertised.
func withDiagnostics(caps map[string]any) map[string]any {
	return withCaps(caps, "textDocument", map[string]any{
		"publishDiagnostics": map[string]any{"relatedInformation": true},
		"codeAction": map[string]any{"codeActionLiteralSupport": map[string]any{
			"codeActionKind": map[string]any{"valueSet": []string{"quickfix"}}}},
	})
}

// ofSource returns the diagnostics of source (and, when not 0, severity).
func ofSource(diags []lsptest.Diagnostic, source string, severity int) []lsptest.Diagnostic {
	var out []lsptest.Diagnostic
	for _, d := range diags {
		if d.Source == source && (severity == 0 || d.Severity == severity) {
			out = append(out, d)
		}
	}
	return out
}

// runToolAs starts agentls.runTool of a call named id.
func runToolAs(c *lsptest.Client, id, name string, args any) *lsptest.Pending {
	return c.Go("workspace/executeCommand", map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": name, "args": args, "toolCallId": id}}})
}

// TestCallLocationDiagnostics: a call that waits (here for approval) shows its file as
// an Information diagnostic naming it, cleared when the call ends.
func TestCallLocationDiagnostics(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"doc.txt": "first line\nsecond\n"})
	c := session(t, root, withDiagnostics(capsRich), nil)
	uri := lsptest.FileURI(filepath.Join(root, "doc.txt"))
	if err := c.Editor().Open(uri, "first line\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	c.Handle("agentls/confirm", func(ctx context.Context, _ json.RawMessage) (any, error) {
		select {
		case <-release:
			return map[string]any{"outcome": "proceed_once"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	p := runToolAs(c, "call-7", "replace", replaceArgs("doc.txt", "second", "2nd"))
	diags, seen, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool {
		return len(ofSource(d, "agentls", lsptest.SeverityInformation)) > 0
	})
	if err != nil {
		t.Fatal(err)
	}
	d := ofSource(diags, "agentls", lsptest.SeverityInformation)[0]
	if !contains(d.Message, "call-7", "replace", "approval") {
		t.Errorf("message %q does not name the call and its state", d.Message)
	}
	if want := (lsptest.Range{End: lsptest.Position{Character: 10}}); d.Range != want {
		t.Errorf("range %+v, want the file's first line %+v", d.Range, want)
	}
	close(release)
	var res tools.CallResult
	if err := p.Wait(ctx, &res); err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("replace: %+v %v", res, err)
	}
	if _, _, err := c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 0 }); err != nil {
		t.Errorf("the call ended, its diagnostic stayed: %v", err)
	}
}

// TestFailureDiagnostics: a failed call's file gets an Error diagnostic until the next
// call the editor runs; several sources on one file are published together.
func TestFailureDiagnostics(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"doc.txt": "alpha\nbeta\n"})
	c := session(t, root, withDiagnostics(capsEditor), yolo)
	uri := lsptest.FileURI(filepath.Join(root, "doc.txt"))
	if err := c.Editor().Open(uri, "alpha\nbeta\n"); err != nil {
		t.Fatal(err)
	}
	// A shell diagnostic on the file first.
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo 'doc.txt:2:1: warning: not greek enough'"}); res.Status != tools.StatusSuccess {
		t.Fatalf("shell: %+v", res)
	}
	_, seen, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool { return len(ofSource(d, "agentls/shell", 0)) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	res := runToolAs(c, "bad-1", "replace", replaceArgs("doc.txt", "gamma", "GAMMA"))
	var r tools.CallResult
	if err := res.Wait(ctx, &r); err != nil || r.Status != tools.StatusError {
		t.Fatalf("replace of a missing string: %+v %v", r, err)
	}
	diags, seen, err := c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool {
		return len(ofSource(d, "agentls", lsptest.SeverityError)) == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := ofSource(diags, "agentls", lsptest.SeverityError)[0]; !contains(f.Message, "bad-1", "failed", "gamma") {
		t.Errorf("failure message %q", f.Message)
	}
	if len(ofSource(diags, "agentls/shell", 0)) != 1 {
		t.Errorf("the shell diagnostic went when the failure came: %+v", diags)
	}
	// The next call is a new turn: the failure goes, the shell diagnostic stays until
	// the next shell run.
	runTool(ctx, t, c, "read_file", map[string]any{"file_path": "doc.txt"})
	diags, seen, err = c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool {
		return len(ofSource(d, "agentls", 0)) == 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ofSource(diags, "agentls/shell", 0)) != 1 {
		t.Errorf("after the next turn: %+v, want the shell diagnostic alone", diags)
	}
	runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "true"})
	if _, seen, err = c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 0 }); err != nil {
		t.Errorf("the next shell run did not clear the shell diagnostic: %v", err)
	}

	// A cancel makes the failures old news too.
	res = runToolAs(c, "bad-2", "replace", replaceArgs("doc.txt", "gamma", "GAMMA"))
	if err := res.Wait(ctx, &r); err != nil || r.Status != tools.StatusError {
		t.Fatalf("replace of a missing string: %+v %v", r, err)
	}
	if _, seen, err = c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 1 }); err != nil {
		t.Fatal(err)
	}
	if err := command(ctx, c, "agentls.cancel", map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 0 }); err != nil {
		t.Errorf("agentls.cancel left the failure diagnostic: %v", err)
	}
}

// TestShellDiagnostics: compiler-style lines of shell output that point into the
// workspace become agentls/shell diagnostics, relative to the command's directory,
// with their severity and the word at their column; the next run replaces them.
func TestShellDiagnostics(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{
		"a.go":     "package a\n\nvar x = undefinedThing + 1\n",
		"sub/b.go": "package sub\n// 😀 note\n",
		"c.go":     "package c\n",
	})
	c := session(t, root, withDiagnostics(capsEditor), map[string]any{"approvalMode": "yolo",
		"policy": map[string]any{"rules": []any{map[string]any{"toolName": "run_shell_command", "commandPrefix": []string{"rm"}, "decision": "deny"}}}})
	aURI := lsptest.FileURI(filepath.Join(root, "a.go"))
	bURI := lsptest.FileURI(filepath.Join(root, "sub", "b.go"))
	cURI := lsptest.FileURI(filepath.Join(root, "c.go"))
	out := strings.Join([]string{
		"# example",
		"a.go:3:9: undefined: undefinedThing",
		"\x1b[1msub/b.go:2:9:\x1b[0m warning: a note",
		"sub/b.go:1: error: something about the package",
		"/etc/passwd:1:1: outside the workspace",
		"missing.go:1:1: no such file",
		"a.go:99:1: past the end",
		"Exit Code: 1",
	}, "\n")
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "cat <<'EOF'\n" + out + "\nEOF"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("shell: %+v", res)
	}
	a, seen, err := c.WaitDiagnostics(ctx, aURI, 0, func(d []lsptest.Diagnostic) bool { return len(d) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0].Source != "agentls/shell" || a[0].Severity != lsptest.SeverityError ||
		a[0].Message != "undefined: undefinedThing" ||
		a[0].Range != (lsptest.Range{Start: lsptest.Position{Line: 2, Character: 8}, End: lsptest.Position{Line: 2, Character: 22}}) {
		t.Errorf("a.go diagnostics %+v", a)
	}
	b := c.Diagnostics(bURI)
	slices.SortFunc(b, func(x, y lsptest.Diagnostic) int { return int(x.Range.Start.Line) - int(y.Range.Start.Line) })
	if len(b) != 2 || b[0].Severity != lsptest.SeverityError || b[0].Range != (lsptest.Range{End: lsptest.Position{Character: 11}}) ||
		b[1].Severity != lsptest.SeverityWarning || b[1].Message != "warning: a note" ||
		// Column 9 is byte 8, the "n" after "// 😀 " (4 bytes, 2 UTF-16 units for the
		// emoji): UTF-16 character 6; the word "note" ends at 10.
		b[1].Range != (lsptest.Range{Start: lsptest.Position{Line: 1, Character: 6}, End: lsptest.Position{Line: 1, Character: 10}}) {
		t.Errorf("sub/b.go diagnostics %+v", b)
	}
	for _, m := range c.Received("textDocument/publishDiagnostics") {
		if strings.Contains(string(m.Params), "passwd") || strings.Contains(string(m.Params), "missing.go") {
			t.Errorf("a diagnostic for a file outside the workspace or missing: %s", m.Params)
		}
	}

	// A command that is refused does not run: the diagnostics stay. (What a call
	// publishes is sent before its result.)
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "rm -f a.go"}); res.Status == tools.StatusSuccess {
		t.Fatalf("the denied command ran: %+v", res)
	}
	if len(c.Diagnostics(aURI)) != 1 {
		t.Errorf("a refused command cleared the diagnostics of the last run: %+v", c.Diagnostics(aURI))
	}

	// Relative to the command's directory; and replacing the last run's.
	res = runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo '../c.go:1:9: x'", "dir_path": "sub"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("shell: %+v", res)
	}
	_, seen, err = c.WaitDiagnostics(ctx, cURI, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Diagnostics(aURI)) != 0 || len(c.Diagnostics(bURI)) != 0 {
		t.Errorf("the earlier run's diagnostics stayed: %+v %+v", c.Diagnostics(aURI), c.Diagnostics(bURI))
	}

	// Opening c.go sends its diagnostics again, for clients that drop those of files
	// they do not show.
	if err := c.Editor().Open(cURI, "package c\n"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitDiagnostics(ctx, cURI, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 1 }); err != nil {
		t.Errorf("no diagnostics sent again when c.go was opened: %v", err)
	}
}

// TestNoDiagnosticsUnadvertised: a client that does not advertise
// textDocument.publishDiagnostics is sent none.
func TestNoDiagnosticsUnadvertised(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.go": "package a\n"})
	c := session(t, root, capsEditor, yolo)
	runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo 'a.go:1:1: error'"})
	runTool(ctx, t, c, "replace", replaceArgs("a.go", "missing", "x"))
	if got := c.Received("textDocument/publishDiagnostics"); got != nil {
		t.Errorf("diagnostics sent to a client that did not advertise them: %v", got)
	}
}

// TestCancelledSessionFailures: the failure diagnostics a prompt's calls leave for a
// plain client go when that session is cancelled (agentls.cancel with its id), and a
// file that was not open when they were made gets them once it is opened.
func TestCancelledSessionFailures(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"doc.txt": "alpha\n", "other.txt": "other\n"})
	doc, other := filepath.Join(root, "doc.txt"), filepath.Join(root, "other.txt")
	a := newAgent(t, root, "",
		clients.Turn{Calls: []clients.ScriptCall{call("replace", map[string]any{"file_path": doc, "old_string": "gamma", "new_string": "GAMMA"}, "f1")}},
		clients.Turn{Text: "Working", Hang: true})
	c := a.serve(withDiagnostics(capsEditor), map[string]any{"approvalMode": "yolo"}, rpc.Options{})
	uri := lsptest.FileURI(doc)
	if err := c.Editor().Open(lsptest.FileURI(other), "other\n"); err != nil {
		t.Fatal(err)
	}
	p := c.Go("workspace/executeCommand", map[string]any{"command": "agentls.prompt", "arguments": []any{map[string]any{"prompt": "edit doc.txt"}}})
	diags, seen, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool {
		return len(ofSource(d, "agentls", lsptest.SeverityError)) == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := ofSource(diags, "agentls", lsptest.SeverityError)[0]; !contains(f.Message, "failed", "gamma") {
		t.Errorf("failure message %q", f.Message)
	}
	// doc.txt was not open: opening it sends its diagnostics again.
	if err := c.Editor().Open(uri, "alpha\n"); err != nil {
		t.Fatal(err)
	}
	if _, seen, err = c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool {
		return len(ofSource(d, "agentls", lsptest.SeverityError)) == 1
	}); err != nil {
		t.Errorf("no diagnostics sent again when doc.txt was opened: %v", err)
	}
	var sessions []struct {
		ID string `json:"id"`
	}
	if err := command(ctx, c, "agentls.listSessions", map[string]any{}, &sessions); err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %+v, %v", sessions, err)
	}
	if err := command(ctx, c, "agentls.cancel", map[string]any{"session": sessions[0].ID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(d) == 0 }); err != nil {
		t.Errorf("cancelling the session left its failure diagnostic: %v", err)
	}
	var res promptResult
	if err := p.Wait(ctx, &res); err != nil || res.StopReason != "cancelled" {
		t.Errorf("the prompt: %+v, %v", res, err)
	}
}
