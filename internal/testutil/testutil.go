// Package testutil holds what the tests of several packages share: temporary
// workspaces, direct tool calls and snapshots of a tree for "nothing was written" checks.
package testutil

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Workspace makes a temporary directory holding files (slash path → content) and returns
// a workspace rooted there and the root's resolved path.
func Workspace(t testing.TB, files map[string]string) (*workspace.Workspace, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, root, files)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, root
}

// WriteFiles writes files (slash path → content) under dir, creating parents.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Call runs one call of tool the way the scheduler does, minus consent: the arguments
// are validated against the tool's schema, the call is built and executed. Live output
// goes to out (which may be nil).
func Call(ctx context.Context, t testing.TB, tool tools.Tool, args string, out io.Writer) (*tools.Result, error) {
	t.Helper()
	inv, err := Build(t, tool, args)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = io.Discard
	}
	return inv.Execute(ctx, out)
}

// Build validates args against tool's schema and builds the call.
func Build(t testing.TB, tool tools.Tool, args string) (tools.Invocation, error) {
	t.Helper()
	v, err := tools.NewValidator(tool.Info().Parameters)
	if err != nil {
		t.Fatalf("schema of %s: %v", tool.Info().Name, err)
	}
	if err := v.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	return tool.Build(json.RawMessage(args))
}

// Snapshot returns every regular file under root with its content and mode, to compare
// before and after a call that must write nothing.
func Snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			rel, _ := filepath.Rel(root, p)
			snap[filepath.ToSlash(rel)] = fi.Mode().String() + "\n" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// ErrorType returns the tools.ErrorType of err, or "" if err is not a *tools.Error.
func ErrorType(err error) tools.ErrorType {
	if te := tools.AsError(err, ""); te != nil {
		return te.Type
	}
	return ""
}

// Dirs returns a workspace root holding files and a user configuration directory
// holding the user's settings.json (none when user is empty).
func Dirs(t testing.TB, files map[string]string, user string) (root, config string) {
	t.Helper()
	_, root = Workspace(t, files)
	config = t.TempDir()
	if user != "" {
		WriteFiles(t, config, map[string]string{"settings.json": user})
	}
	return root, config
}

// ToolNames returns the names of the tools r lists, in its order.
func ToolNames(r *tools.Registry) []string {
	var out []string
	for _, info := range r.List() {
		out = append(out, info.Name)
	}
	return out
}
