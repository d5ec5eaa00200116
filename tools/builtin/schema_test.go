package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/web"
	"github.com/agentls/agentls/workspace"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas.json from the tools' schemas")

type noSearch struct{}

func (noSearch) Search(context.Context, string) (string, []web.Source, error) { return "", nil, nil }

// TestParameterSchemas holds the parameter schema of every built-in tool to the one
// recorded in testdata/schemas.json: the schemas are what a model sees, written to
// match Gemini CLI's, so a change in how they are produced must not change them. Only
// the order of keys is free (the record has them sorted).
func TestParameterSchemas(t *testing.T) {
	ws, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set := builtin.New(builtin.Options{Workspace: ws, ConfigDir: t.TempDir(), Web: web.Options{Searcher: noSearch{}}})
	t.Cleanup(func() { set.Close() })
	got := map[string]any{}
	for _, tool := range set.Tools() {
		info := tool.Info()
		var schema any
		if err := json.Unmarshal(info.Parameters, &schema); err != nil {
			t.Fatalf("%s: parameter schema: %v", info.Name, err)
		}
		got[info.Name] = schema
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	golden := filepath.Join("testdata", "schemas.json")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("parameter schemas differ from %s (go test -update rewrites it); got:\n%s", golden, data)
	}
}
