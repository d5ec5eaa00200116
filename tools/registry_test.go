package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/confirm"
)

// stubTool is a tool that only has an identity; the scheduler tests use richer fakes.
type stubTool struct{ info Info }

func (t stubTool) Info() Info { return t.info }

func (t stubTool) Build(json.RawMessage) (Invocation, error) { return stubInv{}, nil }

type stubInv struct{ NoCapabilities }

func (stubInv) Describe() string                                       { return "stub" }
func (stubInv) Locations() []Location                                  { return nil }
func (stubInv) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }
func (stubInv) Execute(context.Context, io.Writer) (*Result, error)    { return &Result{}, nil }

func stub(name string, src Source, server string) stubTool {
	return stubTool{Info{Name: name, Source: src, Server: server}}
}

func stubWithSchema(name string, src Source, schema string) stubTool {
	t := stub(name, src, "")
	t.info.Parameters = json.RawMessage(schema)
	return t
}

func registryWith(filter Filter, tools ...Tool) *Registry {
	r := NewRegistry(nil, filter)
	for _, t := range tools {
		r.Register(t)
	}
	return r
}

func names(infos []Info) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.Name
	}
	return out
}

func TestRegistryListOrder(t *testing.T) {
	r := registryWith(Filter{},
		stub("srv__b", SourceMCP, "srv"),
		stub("zeta", SourceBuiltin, ""),
		stub("disc_a", SourceDiscovered, ""),
		stub("alpha", SourceBuiltin, ""),
		stub("srv__a", SourceMCP, "srv"),
		stub("disc_0", SourceDiscovered, ""),
	)
	want := []string{"alpha", "zeta", "disc_0", "disc_a", "srv__a", "srv__b"}
	if got := names(r.List()); !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
}

func TestRegistryFilter(t *testing.T) {
	all := []Tool{
		stub("read_file", SourceBuiltin, ""),
		stub("write_file", SourceBuiltin, ""),
		stub("run_shell_command", SourceBuiltin, ""),
		stub("srv__search", SourceMCP, "srv"),
	}
	tests := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"no filter", Filter{}, []string{"read_file", "run_shell_command", "write_file", "srv__search"}},
		{"core", Filter{Core: []string{"read_file", "srv__search"}}, []string{"read_file", "srv__search"}},
		{"exclude", Filter{Exclude: []string{"write_file"}}, []string{"read_file", "run_shell_command", "srv__search"}},
		{"core and exclude", Filter{Core: []string{"read_file", "write_file"}, Exclude: []string{"write_file"}}, []string{"read_file"}},
		{"parameterised core enables", Filter{Core: []string{"run_shell_command(git status)"}}, []string{"run_shell_command"}},
		{"parameterised exclude keeps enabled", Filter{Exclude: []string{"run_shell_command(rm)"}}, []string{"read_file", "run_shell_command", "write_file", "srv__search"}},
		{"spaces around entries", Filter{Core: []string{" read_file ", " run_shell_command ( ls ) "}}, []string{"read_file", "run_shell_command"}},
		{"blank core entries mean no core list", Filter{Core: []string{"", "  "}}, []string{"read_file", "run_shell_command", "write_file", "srv__search"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registryWith(tt.filter, all...)
			if got := names(r.List()); !slices.Equal(got, tt.want) {
				t.Errorf("List = %v, want %v", got, tt.want)
			}
			for _, tool := range all {
				name := tool.Info().Name
				_, ok := r.Get(name)
				if want := slices.Contains(tt.want, name); ok != want {
					t.Errorf("Get(%q) found = %v, want %v", name, ok, want)
				}
			}
			if got := len(r.Declarations()); got != len(tt.want) {
				t.Errorf("Declarations has %d tools, want %d", got, len(tt.want))
			}
		})
	}
}

func TestRegistryCheckCommand(t *testing.T) {
	const shell = "run_shell_command"
	tests := []struct {
		name    string
		filter  Filter
		command string
		wantErr string // substring of the policy_violation message; "" means allowed
	}{
		{"no filter", Filter{}, "rm -rf /", ""},
		{"allowed prefix", Filter{Core: []string{"run_shell_command(git status)"}}, "git status", ""},
		{"allowed prefix with args", Filter{Core: []string{"run_shell_command(git status)"}}, "git   status --short", ""},
		{"not at word boundary", Filter{Core: []string{"run_shell_command(git status)"}}, "git statusx", `"git statusx"`},
		{"other command", Filter{Core: []string{"run_shell_command(git status)"}}, "git push", `"git push"`},
		{"every simple command checked", Filter{Core: []string{"run_shell_command(git status)"}}, "git status && rm -rf x", `"rm -rf x"`},
		{"pipeline checked", Filter{Core: []string{"run_shell_command(git status)"}}, "git status | sh", `"sh"`},
		{"entries accumulate", Filter{Core: []string{"run_shell_command(git status)", "run_shell_command(ls)"}}, "git status; ls -la", ""},
		{"substitution refused", Filter{Core: []string{"run_shell_command(echo)"}}, "echo $(whoami)", "command substitution"},
		{"backticks refused", Filter{Core: []string{"run_shell_command(echo)"}}, "echo `whoami`", "command substitution"},
		{"wrappers looked through", Filter{Core: []string{"run_shell_command(git status)"}}, "timeout 5 git status", ""},
		{"wrapped command checked", Filter{Core: []string{"run_shell_command(git status)"}}, "bash -c 'git status; rm x'", `"rm x"`},
		{"sudo refused by allowlist", Filter{Core: []string{"run_shell_command(git status)"}}, "sudo git status", "another user"},
		{"sudo does not hide excluded prefix", Filter{Exclude: []string{"run_shell_command(rm)"}}, "sudo rm -rf /", `"rm -rf /"`},
		{"plain entry lifts restriction", Filter{Core: []string{"run_shell_command(git status)", "run_shell_command"}}, "rm -rf x", ""},
		{"plain entry lifts restriction on substitution", Filter{Core: []string{"run_shell_command", "run_shell_command(ls)"}}, "echo $(whoami)", ""},
		{"excluded prefix", Filter{Exclude: []string{"run_shell_command(rm)"}}, "rm -rf x", `"rm -rf x"`},
		{"excluded prefix later in line", Filter{Exclude: []string{"run_shell_command(rm)"}}, "ls; rm x", `"rm x"`},
		{"excluded prefix not at boundary", Filter{Exclude: []string{"run_shell_command(rm)"}}, "rmdir x", ""},
		{"excluded prefix other command", Filter{Exclude: []string{"run_shell_command(rm)"}}, "ls -la", ""},
		{"exclude wins over core", Filter{Core: []string{"run_shell_command(git)"}, Exclude: []string{"run_shell_command(git push)"}}, "git push origin", "excluded"},
		{"unparsable line refused when restricted", Filter{Core: []string{"run_shell_command(ls)"}}, "ls (", "cannot be checked"},

		// Every class of hidden command fails closed against an excluded prefix.
		{"ansi-c name", Filter{Exclude: []string{"run_shell_command(rm)"}}, `$'\x72m' -rf x`, "not known until run time"},
		{"quoted ansi-c piece", Filter{Exclude: []string{"run_shell_command(rm)"}}, `r$'m' -rf x`, "not known until run time"},
		{"variable name", Filter{Exclude: []string{"run_shell_command(rm)"}}, `$RM -rf x`, "not known until run time"},
		{"glob name", Filter{Exclude: []string{"run_shell_command(rm)"}}, `/bin/r[m] -rf x`, "not known until run time"},
		{"opaque wrapper", Filter{Exclude: []string{"run_shell_command(rm)"}}, `strace -f rm -rf x`, "not known until run time"},
		{"pipe into shell", Filter{Exclude: []string{"run_shell_command(rm)"}}, `echo 'rm -rf x' | bash`, "not known until run time"},
		{"pipe into python", Filter{Exclude: []string{"run_shell_command(rm)"}}, `echo 'import os' | python3`, "not known until run time"},
		{"inline python", Filter{Exclude: []string{"run_shell_command(rm)"}}, `python3 -c 'import os; os.system("rm -rf x")'`, "not known until run time"},
		{"eval of a variable", Filter{Exclude: []string{"run_shell_command(rm)"}}, `eval "$CMD"`, "not known until run time"},
		{"source", Filter{Exclude: []string{"run_shell_command(rm)"}}, `source ./x.sh`, "not known until run time"},
		{"known wrapper seen through", Filter{Exclude: []string{"run_shell_command(rm)"}}, `stdbuf -o0 setsid nohup flock /tmp/l ionice -c3 chrt 5 taskset 1 busybox rm x`, `starts with "rm"`},
		{"flock -c seen through", Filter{Exclude: []string{"run_shell_command(rm)"}}, `flock /tmp/l -c 'rm x'`, `starts with "rm"`},
		{"assignment in front", Filter{Exclude: []string{"run_shell_command(rm)"}}, `FOO=1 rm x`, `starts with "rm"`},
		{"env assignment in front", Filter{Exclude: []string{"run_shell_command(rm)"}}, `env -i FOO=1 rm x`, `starts with "rm"`},
		{"git global options", Filter{Exclude: []string{"run_shell_command(git push)"}}, `git -C . -c x=y --no-pager push`, `starts with "git push"`},
		{"go global option", Filter{Exclude: []string{"run_shell_command(go test)"}}, `go -C sub test ./...`, `starts with "go test"`},
		{"assignment not named by core", Filter{Core: []string{"run_shell_command(git status)"}}, "GIT_EXTERNAL_DIFF=x git status", "not allowed"},
		{"export not named by core", Filter{Core: []string{"run_shell_command(git status)"}}, "export GIT_DIR=/x; git status", "not allowed"},
		{"arithmetic refused by core", Filter{Core: []string{"run_shell_command(echo)"}}, "echo $((x))", "as code"},
		{"prompt expansion refused by core", Filter{Core: []string{"run_shell_command(echo)"}}, "echo ${x@P}", "as code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registryWith(tt.filter, stub(shell, SourceBuiltin, ""))
			err := r.CheckCommand(shell, tt.command)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckCommand(%q) = %v, want nil", tt.command, err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Type != ErrPolicyViolation {
				t.Fatalf("CheckCommand(%q) = %v, want a policy_violation", tt.command, err)
			}
			if !strings.Contains(te.Message, tt.wantErr) {
				t.Errorf("message %q does not contain %q", te.Message, tt.wantErr)
			}
		})
	}
}

// TestRegistrySubset: a subset holds the named tools the registry enables, names the
// rest, and keeps the registry's filter: its command restrictions and its allowlist.
func TestRegistrySubset(t *testing.T) {
	const shell = "run_shell_command"
	for _, tt := range []struct {
		name        string
		filter      Filter
		want        []string
		missing     []string
		command     string
		commandErrs bool
	}{
		{"no filter", Filter{}, []string{"read_file", shell}, []string{"nope"}, "touch x", false},
		{"excluded command", Filter{Exclude: []string{"run_shell_command(touch)"}}, []string{"read_file", shell}, []string{"nope"}, "touch x", true},
		{"excluded tool", Filter{Exclude: []string{"read_file"}}, []string{shell}, []string{"read_file", "nope"}, "touch x", false},
		{"allowlist", Filter{Core: []string{"run_shell_command(git status)"}}, []string{shell}, []string{"read_file", "nope"}, "touch x", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := registryWith(tt.filter, stub(shell, SourceBuiltin, ""), stub("read_file", SourceBuiltin, ""), stub("glob", SourceBuiltin, ""))
			sub, missing := r.Subset([]string{"read_file", shell, "nope"})
			if got := names(sub.List()); !slices.Equal(got, tt.want) {
				t.Errorf("tools %v, want %v", got, tt.want)
			}
			if !slices.Equal(missing, tt.missing) {
				t.Errorf("missing %v, want %v", missing, tt.missing)
			}
			if err := sub.CheckCommand(shell, tt.command); (err != nil) != tt.commandErrs {
				t.Errorf("CheckCommand(%q) = %v, want an error: %v", tt.command, err, tt.commandErrs)
			}
		})
	}
}

func TestRegistryOverwriteWarns(t *testing.T) {
	var buf bytes.Buffer
	r := NewRegistry(slog.New(slog.NewTextHandler(&buf, nil)), Filter{})
	r.Register(stub("search", SourceBuiltin, ""))
	if buf.Len() != 0 {
		t.Fatalf("first registration logged %q", buf.String())
	}
	r.Register(stub("search", SourceMCP, "srv"))
	log := buf.String()
	for _, want := range []string{"level=WARN", "registered twice", "tool=search", "oldSource=builtin", "newSource=mcp"} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}
	got, ok := r.Get("search")
	if !ok || got.Info().Source != SourceMCP {
		t.Errorf("Get after overwrite = %+v, %v; want the MCP tool", got, ok)
	}
	if n := len(r.List()); n != 1 {
		t.Errorf("List has %d tools after overwrite, want 1", n)
	}
}

func TestRegistryRemove(t *testing.T) {
	r := registryWith(Filter{},
		stub("read_file", SourceBuiltin, ""),
		stub("d1", SourceDiscovered, ""),
		stub("d2", SourceDiscovered, ""),
		stub("a__x", SourceMCP, "a"),
		stub("a__y", SourceMCP, "a"),
		stub("b__x", SourceMCP, "b"),
	)
	r.RemoveSource(SourceMCP, "a")
	if got, want := names(r.List()), []string{"read_file", "d1", "d2", "b__x"}; !slices.Equal(got, want) {
		t.Errorf("after removing server a: %v, want %v", got, want)
	}
	r.RemoveSource(SourceDiscovered, "")
	if got, want := names(r.List()), []string{"read_file", "b__x"}; !slices.Equal(got, want) {
		t.Errorf("after removing discovered: %v, want %v", got, want)
	}
	r.Unregister("read_file")
	r.Unregister("no_such_tool")
	if got, want := names(r.List()), []string{"b__x"}; !slices.Equal(got, want) {
		t.Errorf("after Unregister: %v, want %v", got, want)
	}
	r.RemoveSource(SourceMCP, "")
	if got := r.List(); len(got) != 0 {
		t.Errorf("after removing all MCP tools: %v", names(got))
	}
}

func TestRegistrySuggest(t *testing.T) {
	r := registryWith(Filter{Exclude: []string{"read_many_files"}},
		stub("read_file", SourceBuiltin, ""),
		stub("write_file", SourceBuiltin, ""),
		stub("read_many_files", SourceBuiltin, ""),
		stub("replace", SourceBuiltin, ""),
		stub("glob", SourceBuiltin, ""),
		stub("search_file_content", SourceBuiltin, ""),
		stub("run_shell_command", SourceBuiltin, ""),
	)
	tests := []struct {
		name  string
		want  []string // leading suggestions, in order
		never []string
	}{
		{"read_fil", []string{"read_file"}, []string{"read_many_files"}},
		{"READ_FILE", []string{"read_file"}, nil},
		{"wirte_file", []string{"write_file"}, nil},
		{"shell", []string{"run_shell_command"}, nil},
		{"file", []string{"read_file", "write_file", "search_file_content"}, []string{"read_many_files"}},
		{"globb", []string{"glob"}, nil},
		{"qqqqqqqqqqq", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Suggest(tt.name)
			if len(got) > 3 {
				t.Errorf("Suggest(%q) = %v, more than 3", tt.name, got)
			}
			if tt.want == nil && len(got) != 0 {
				t.Errorf("Suggest(%q) = %v, want none", tt.name, got)
			}
			if len(got) < len(tt.want) || !slices.Equal(got[:len(tt.want)], tt.want) {
				t.Errorf("Suggest(%q) = %v, want it to start with %v", tt.name, got, tt.want)
			}
			for _, n := range tt.never {
				if slices.Contains(got, n) {
					t.Errorf("Suggest(%q) = %v suggests %q", tt.name, got, n)
				}
			}
		})
	}
}

func TestRegistryClosest(t *testing.T) {
	r := registryWith(Filter{Exclude: []string{"read_many_files"}},
		stub("read_file", SourceBuiltin, ""),
		stub("write_file", SourceBuiltin, ""),
		stub("read_many_files", SourceBuiltin, ""),
		stub("glob", SourceBuiltin, ""),
		stub("write_todos", SourceBuiltin, ""),
	)
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"no_such_tool", 3, []string{"write_todos", "glob", "read_file"}},
		{"qqqq", 2, []string{"glob", "read_file"}},
		{"write_file", 1, []string{"write_file"}},
		{"x", 10, []string{"glob", "read_file", "write_file", "write_todos"}}, // never a disabled tool
	}
	for _, tt := range tests {
		if got := r.Closest(tt.name, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q, %d) = %v, want %v", tt.name, tt.n, got, tt.want)
		}
	}
}

func TestRegistryDeclarations(t *testing.T) {
	long := func(mid string) string { return strings.Repeat("a", 40) + mid + strings.Repeat("b", 40) }
	var buf bytes.Buffer
	r := NewRegistry(slog.New(slog.NewTextHandler(&buf, nil)), Filter{})
	for _, tool := range []Tool{
		stubWithSchema("read_file", SourceBuiltin, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"p":{"type":["string","null"]}}}`),
		stubWithSchema("my server__do it", SourceMCP, `{"type":"object"}`),
		stubWithSchema("my_server__do_it", SourceMCP, `{"type":"object"}`),
		stubWithSchema("my server__do/it", SourceMCP, `{"type":"object"}`),
		stubWithSchema(long("_x_"), SourceMCP, `{"type":"object"}`),
		stubWithSchema(long("_y_"), SourceMCP, `{"type":"object"}`),
		stubWithSchema("broken", SourceMCP, `[1,2]`),
	} {
		r.Register(tool)
	}
	decls := r.Declarations()
	got := make([]string, len(decls))
	for i, d := range decls {
		got[i] = d.Name
	}
	cut := strings.Repeat("a", 30) + "___" + strings.Repeat("b", 30)
	want := []string{
		"read_file",
		cut,
		cut[:61] + "_2",
		"my_server__do_it_2", // "my server__do it": the valid real name keeps its own
		"my_server__do_it_3", // "my server__do/it"
		"my_server__do_it",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("declared names = %q, want %q", got, want)
	}
	for _, n := range got {
		if len(n) > 63 {
			t.Errorf("declared name %q is longer than 63", n)
		}
	}
	if !strings.Contains(buf.String(), "tool=broken") {
		t.Errorf("the broken schema was not logged: %q", buf.String())
	}
	// The model calls tools by their declared names.
	for decl, real := range map[string]string{
		"my_server__do_it_2": "my server__do it",
		"my_server__do_it_3": "my server__do/it",
		"my_server__do_it":   "my_server__do_it",
		cut:                  long("_x_"),
		cut[:61] + "_2":      long("_y_"),
	} {
		tool, ok := r.Get(decl)
		if !ok || tool.Info().Name != real {
			t.Errorf("Get(%q) = %v, %v; want %q", decl, tool, ok, real)
		}
	}
	if _, ok := r.Get("read_file_2"); ok {
		t.Error("Get found a tool under a name nobody declared")
	}
	var params map[string]any
	if err := json.Unmarshal(decls[0].Parameters, &params); err != nil {
		t.Fatal(err)
	}
	if _, ok := params["$schema"]; ok {
		t.Error("$schema was not stripped")
	}
	p := params["properties"].(map[string]any)["p"].(map[string]any)
	if p["type"] != "string" || p["nullable"] != true {
		t.Errorf("property p = %v, want a nullable string", p)
	}
	// A registration invalidates the aliases and the declarations.
	r.Unregister("my_server__do_it")
	if n := len(r.Declarations()); n != len(decls)-1 {
		t.Errorf("%d declarations after unregistering one of %d", n, len(decls))
	}
	if tool, ok := r.Get("my_server__do_it"); !ok || tool.Info().Name != "my server__do it" {
		t.Errorf("after unregistering the valid name, Get(my_server__do_it) = %v, %v", tool, ok)
	}
}

// TestRegistryAliases: a tool's aliases reach it through Get and the filter, and are
// never declared; a tool's own name wins over another's alias.
func TestRegistryAliases(t *testing.T) {
	grep := stubWithSchema("grep_search", SourceBuiltin, `{"type":"object"}`)
	grep.info.Aliases = []string{"search_file_content", "glob"}
	glob := stubWithSchema("glob", SourceBuiltin, `{"type":"object"}`)
	tests := []struct {
		name     string
		filter   Filter
		declared []string
		get      map[string]string // name called → tool found ("" for none)
	}{
		{"no filter", Filter{}, []string{"glob", "grep_search"},
			map[string]string{"grep_search": "grep_search", "search_file_content": "grep_search", "glob": "glob"}},
		{"core names the alias", Filter{Core: []string{"search_file_content"}}, []string{"grep_search"},
			map[string]string{"grep_search": "grep_search", "search_file_content": "grep_search", "glob": ""}},
		{"exclude names the alias", Filter{Exclude: []string{"search_file_content"}}, []string{"glob"},
			map[string]string{"grep_search": "", "search_file_content": "", "glob": "glob"}},
		{"exclude names the tool", Filter{Exclude: []string{"grep_search"}}, []string{"glob"},
			map[string]string{"grep_search": "", "search_file_content": "", "glob": "glob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registryWith(tt.filter, grep, glob)
			var declared []string
			for _, d := range r.Declarations() {
				declared = append(declared, d.Name)
			}
			if !slices.Equal(declared, tt.declared) {
				t.Errorf("declared %v, want %v", declared, tt.declared)
			}
			for called, want := range tt.get {
				tool, ok := r.Get(called)
				got := ""
				if ok {
					got = tool.Info().Name
				}
				if got != want {
					t.Errorf("Get(%q) = %q, want %q", called, got, want)
				}
			}
		})
	}
}

// offeredStub is a Situational stub, offered in plan mode only.
type offeredStub struct{ stubTool }

func (offeredStub) Offered(s Situation) bool { return s.Mode == confirm.ModePlan }

// TestRegistryDeclarationsIn: a Situational tool is declared only where it says it is
// of use, and stays callable everywhere.
func TestRegistryDeclarationsIn(t *testing.T) {
	r := registryWith(Filter{},
		stubWithSchema("read_file", SourceBuiltin, `{"type":"object"}`),
		offeredStub{stubWithSchema("exit_plan_mode", SourceBuiltin, `{"type":"object"}`)})
	for _, tt := range []struct {
		mode confirm.Mode
		want []string
	}{
		{confirm.ModeDefault, []string{"read_file"}},
		{confirm.ModePlan, []string{"exit_plan_mode", "read_file"}},
	} {
		var got []string
		for _, d := range r.DeclarationsIn(Situation{Mode: tt.mode, CanAsk: true}) {
			got = append(got, d.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("in mode %s: declared %v, want %v", tt.mode, got, tt.want)
		}
	}
	if n := len(r.Declarations()); n != 2 {
		t.Errorf("Declarations has %d, want both", n)
	}
	if _, ok := r.Get("exit_plan_mode"); !ok {
		t.Error("a tool not offered cannot be called")
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	r := NewRegistry(nil, Filter{Exclude: []string{"t3"}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				name := fmt.Sprintf("t%d", (i+j)%10)
				r.Register(stub(name, SourceMCP, "s"))
				r.Get(name)
				r.List()
				r.Declarations()
				r.Suggest(name)
				if j%7 == 0 {
					r.RemoveSource(SourceMCP, "s")
				}
			}
		})
	}
	wg.Wait()
	if _, ok := r.Get("t3"); ok {
		t.Error("excluded tool is visible")
	}
}
