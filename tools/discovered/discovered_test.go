package discovered

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/tools"
)

func TestDiscoverForms(t *testing.T) {
	t.Parallel()
	decl := func(name string) string {
		return `{"name": "` + name + `", "description": "Does ` + name + `.", "parametersJsonSchema": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}`
	}
	tests := []struct {
		name string
		out  string
		want []string
	}{
		{"function_declarations", `[{"function_declarations": [` + decl("a") + `, ` + decl("b") + `]}]`, []string{"a", "b"}},
		{"functionDeclarations", `[{"functionDeclarations": [` + decl("c") + `]}]`, []string{"c"}},
		{"bare declarations", `[` + decl("d") + `, ` + decl("e") + `]`, []string{"d", "e"}},
		{"mixed", `[{"function_declarations": [` + decl("a") + `]}, ` + decl("b") + `, {"functionDeclarations": [` + decl("c") + `]}]`, []string{"a", "b", "c"}},
		{"empty array", `[]`, nil},
		{"empty list", `[{"function_declarations": []}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := discoverJSON(t, tt.out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(names(got), tt.want) {
				t.Fatalf("tools %q, want %q", names(got), tt.want)
			}
			for _, tool := range got {
				info := tool.Info()
				if info.Source != tools.SourceDiscovered || info.Kind != tools.KindOther {
					t.Errorf("%s: source %q kind %q, want discovered, other", info.Name, info.Source, info.Kind)
				}
				if !strings.HasPrefix(info.Description, "Does "+info.Name+".\n\n") {
					t.Errorf("%s: description does not start with the declared one:\n%s", info.Name, info.Description)
				}
				var schema map[string]any
				if err := json.Unmarshal(info.Parameters, &schema); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(schema["required"], []any{"x"}) {
					t.Errorf("%s: schema %s lost its required list", info.Name, info.Parameters)
				}
			}
		})
	}
}

func TestDiscoverSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		decl string
		want string // the schema, as JSON
		warn string // a warning the log must hold, if any
	}{
		{
			name: "parametersJsonSchema",
			decl: `"parametersJsonSchema": {"type": "object", "properties": {"n": {"type": ["integer", "null"], "maximum": 1e100}}}`,
			want: `{"type": "object", "properties": {"n": {"type": ["integer", "null"], "maximum": 1e100}}}`,
		},
		{
			name: "parameters in Gemini's form",
			decl: `"parameters": {"type": "OBJECT", "properties": {"s": {"type": "STRING", "nullable": true}, "l": {"type": "ARRAY", "items": {"type": "NUMBER"}, "minItems": "1"}}, "required": ["s"]}`,
			want: `{"type": "object", "properties": {"s": {"type": ["string", "null"]}, "l": {"type": "array", "items": {"type": "number"}, "minItems": 1}}, "required": ["s"]}`,
		},
		{
			name: "parameters as JSON Schema",
			decl: `"parameters": {"type": "object", "properties": {"s": {"type": "string"}}}`,
			want: `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		},
		{
			name: "parametersJsonSchema wins over parameters",
			decl: `"parameters": {"type": "OBJECT", "properties": {"old": {"type": "STRING"}}}, "parametersJsonSchema": {"type": "object", "properties": {"new": {"type": "string"}}}`,
			want: `{"type": "object", "properties": {"new": {"type": "string"}}}`,
		},
		{
			name: "no type gets object",
			decl: `"parametersJsonSchema": {"properties": {"s": {"type": "string"}}}`,
			want: `{"type": "object", "properties": {"s": {"type": "string"}}}`,
		},
		{
			name: "missing",
			decl: `"description": "no schema"`,
			want: `{"type": "object", "properties": {}}`,
		},
		{
			name: "null",
			decl: `"parametersJsonSchema": null`,
			want: `{"type": "object", "properties": {}}`,
		},
		{
			name: "not an object",
			decl: `"parametersJsonSchema": "object"`,
			want: `{"type": "object", "properties": {}}`,
			warn: "not a JSON object",
		},
		{
			name: "not an object schema",
			decl: `"parametersJsonSchema": {"type": "string"}`,
			want: `{"type": "object", "properties": {}}`,
			warn: `schema has type \"string\"`,
		},
		{
			name: "does not compile",
			decl: `"parametersJsonSchema": {"type": "object", "properties": {"x": {"type": "integer", "minimum": "zero"}}}`,
			want: `{"type": "object", "properties": {}}`,
			warn: "replaced by an empty object schema",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logger, log := logBuffer()
			got, err := discoverJSON(t, `[{"name": "t", `+tt.decl+`}]`, Options{Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d tools, want 1", len(got))
			}
			var have, want any
			if err := json.Unmarshal(got[0].Info().Parameters, &have); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(have, want) {
				t.Errorf("schema %s\nwant %s", got[0].Info().Parameters, tt.want)
			}
			if tt.warn != "" && !strings.Contains(log.String(), tt.warn) {
				t.Errorf("log does not mention %q:\n%s", tt.warn, log)
			}
			if tt.warn == "" && log.String() != "" {
				t.Errorf("unexpected log:\n%s", log)
			}
			if _, err := tools.NewValidator(got[0].Info().Parameters); err != nil {
				t.Errorf("the validator refuses the schema: %v", err)
			}
		})
	}
}

func TestDiscoverSkipsAndDuplicates(t *testing.T) {
	t.Parallel()
	logger, log := logBuffer()
	got, err := discoverJSON(t, `[
		{"description": "nameless"},
		{"name": ""},
		{"name": 7},
		42,
		{"function_declarations": "not a list"},
		{"name": "dup", "description": "first"},
		{"name": "keep", "description": "kept", "parametersJsonSchema": {"type": "object"}},
		{"functionDeclarations": [{"name": "dup", "description": "second"}, {"name": "other", "description": 5}]}
	]`, Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dup", "keep", "other"}; !reflect.DeepEqual(names(got), want) {
		t.Fatalf("tools %q, want %q", names(got), want)
	}
	if d := byName(got)["dup"].Info().Description; !strings.HasPrefix(d, "second\n") {
		t.Errorf("the later duplicate should win; description:\n%s", d)
	}
	for _, w := range []string{
		"it has no name",
		"is not a JSON object",
		"its function_declarations is not a JSON array",
		"declared more than once",
		"description ignored",
	} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log does not mention %q:\n%s", w, log)
		}
	}
	if n := strings.Count(log.String(), "it has no name"); n != 3 {
		t.Errorf("%d nameless declarations warned about, want 3:\n%s", n, log)
	}
}

func TestDiscoverBuiltinCollision(t *testing.T) {
	t.Parallel()
	builtin := func(name string) bool {
		return name == "read_file" || name == "glob" || name == "discovered_glob"
	}
	logger, log := logBuffer()
	got, err := discoverJSON(t, `[{"name": "read_file"}, {"name": "mine"}, {"name": "glob"}]`,
		Options{Builtin: builtin, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	// glob cannot become discovered_glob either: a built-in has that name too.
	if want := []string{"discovered_read_file", "mine"}; !reflect.DeepEqual(names(got), want) {
		t.Fatalf("tools %q, want %q", names(got), want)
	}
	if !strings.Contains(log.String(), "renamed") || !strings.Contains(log.String(), "name=discovered_read_file") {
		t.Errorf("no warning about the rename:\n%s", log)
	}
	if !strings.Contains(log.String(), "tool=glob prefixed=discovered_glob") {
		t.Errorf("no warning about skipping glob:\n%s", log)
	}
	// The call command receives the declared name; the description shows it.
	if d := byName(got)["discovered_read_file"].Info().Description; !strings.Contains(d, "`false read_file`") {
		t.Errorf("description does not show the call of the declared name:\n%s", d)
	}
}

func TestDiscoverPrefixTakenByDiscoveredTool(t *testing.T) {
	t.Parallel()
	logger, log := logBuffer()
	got, err := discoverJSON(t, `[{"name": "shell"}, {"name": "discovered_shell"}]`,
		Options{Builtin: func(n string) bool { return n == "shell" }, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"discovered_shell"}; !reflect.DeepEqual(names(got), want) {
		t.Fatalf("tools %q, want %q", names(got), want)
	}
	if !strings.Contains(byName(got)["discovered_shell"].Info().Description, "`false discovered_shell`") {
		t.Errorf("the tool keeping its own name was replaced")
	}
	if !strings.Contains(log.String(), "skipped") {
		t.Errorf("no warning about the skipped tool:\n%s", log)
	}
}

func TestDiscoverErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		opts Options
		want []string
	}{
		{"invalid JSON", printing(`[{"name": "a"`), Options{}, []string{"not valid JSON", `[{"name": "a"`}},
		{"trailing data", printing(`[] []`), Options{}, []string{"not valid JSON"}},
		{"an object", printing(`{"function_declarations": []}`), Options{}, []string{"must be a JSON array", "not an object"}},
		{"null", printing(`null`), Options{}, []string{"must be a JSON array", "not null"}},
		{"nothing", "", Options{}, []string{"wrote nothing"}},
		{
			"non-zero exit",
			"echo '[]'\necho 'first problem' >&2\necho 'second problem' >&2\nexit 7\n",
			Options{},
			[]string{"failed with exit code 7", "first problem\nsecond problem"},
		},
		{
			"many stderr lines",
			"i=0; while [ $i -lt 50 ]; do echo \"line $i\" >&2; i=$((i+1)); done; exit 1\n",
			Options{},
			[]string{"exit code 1", "line 0\n", "line 9\n…"},
		},
		{"killed", "kill -KILL $$\n", Options{}, []string{"was killed by SIGKILL"}},
		{
			"output over the cap",
			"echo 'writing a lot' >&2\nwhile :; do echo '[{\"name\": \"x\"}]'; done\n",
			Options{MaxOutput: 1000},
			[]string{"more than 1000 bytes", "writing a lot"},
		},
		{
			"output just over the cap, then exit",
			"printf '%01001d' 0\n",
			Options{MaxOutput: 1000},
			[]string{"more than 1000 bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.DiscoveryCommand = script(t, t.TempDir(), "discover", tt.body)
			opts.CallCommand = "false"
			opts.Dir = t.TempDir()
			got, err := Discover(context.Background(), opts)
			if err == nil {
				t.Fatalf("no error; tools %q", names(got))
			}
			if got != nil {
				t.Errorf("tools %q returned with the error", names(got))
			}
			msg := err.Error()
			if !strings.Contains(msg, opts.DiscoveryCommand) {
				t.Errorf("error does not name the command: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q: %v", w, err)
				}
			}
			if strings.Contains(tt.name, "many") && strings.Contains(msg, "line 10") {
				t.Errorf("error quotes more than the first lines: %v", err)
			}
		})
	}
}

func TestDiscoverTimeoutStopsTheCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	childFile := filepath.Join(dir, "child")
	disc := script(t, dir, "discover", "echo $$ > "+pidFile+"\nsleep 1000 &\necho $! > "+childFile+"\nwait\n")
	_, err := Discover(context.Background(), Options{
		DiscoveryCommand: disc,
		CallCommand:      "false",
		Dir:              dir,
		DiscoveryTimeout: 200 * time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 200ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
	waitGone(t, readPID(t, pidFile))
	waitGone(t, readPID(t, childFile))
}

func TestDiscoverCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	disc := script(t, dir, "discover", "echo $$ > "+pidFile+"\nexec sleep 1000\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Discover(ctx, Options{DiscoveryCommand: disc, CallCommand: "false", Dir: dir})
		done <- err
	}()
	pid := readPID(t, pidFile)
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("error %v, want cancelled", err)
	}
	waitGone(t, pid)
}

func TestDiscoverSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no call command", Options{DiscoveryCommand: "true", Dir: dir}, "tools.callCommand is empty"},
		{"no directory", Options{DiscoveryCommand: "true", CallCommand: "true"}, "workspace root"},
		{"substitution in discovery", Options{DiscoveryCommand: "echo $(id)", CallCommand: "true", Dir: dir}, "tools.discoveryCommand"},
		{"pipe in call", Options{DiscoveryCommand: "true", CallCommand: "a | b", Dir: dir}, "tools.callCommand"},
		{"missing program", Options{DiscoveryCommand: filepath.Join(dir, "nonexistent"), CallCommand: "true", Dir: dir}, "starting"},
		{"missing directory", Options{DiscoveryCommand: "true", CallCommand: "true", Dir: filepath.Join(dir, "nonexistent")}, "nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Discover(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}

	got, err := Discover(context.Background(), Options{CallCommand: "true", Dir: dir})
	if err != nil || got != nil {
		t.Fatalf("no discovery command: tools %v, error %v; want neither", got, err)
	}
}

func TestDiscoverRunsInDir(t *testing.T) {
	t.Parallel()
	bin, dir := t.TempDir(), t.TempDir()
	// The discovery command names a tool after the directory it runs in.
	disc := script(t, bin, "discover", `printf '[{"name": "%s"}]' "$(basename "$PWD")"`+"\n")
	got, err := Discover(context.Background(), Options{DiscoveryCommand: disc, CallCommand: "true", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Base(dir)}; !reflect.DeepEqual(names(got), want) {
		t.Fatalf("tools %q, want %q", names(got), want)
	}
}
