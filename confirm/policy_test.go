package confirm

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func shellCall(cmd string) Call {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return Call{
		Tool:    "run_shell_command",
		Args:    args,
		Details: &Details{Type: TypeExecute, Title: cmd, Command: cmd, Directory: testRoot},
	}
}

func editCall(path string) Call {
	args, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
	return Call{
		Tool:    "write_file",
		Args:    args,
		Details: &Details{Type: TypeEdit, Title: "Write " + path, Path: path, NewContent: "x"},
	}
}

func mcpCall(server, tool string) Call {
	return Call{
		Tool:    server + "__" + tool,
		Server:  server,
		Args:    json.RawMessage(`{}`),
		Details: &Details{Type: TypeMCP, Title: tool, Server: server, Tool: tool},
	}
}

func infoCall(tool string) Call {
	return Call{
		Tool:    tool,
		Args:    json.RawMessage(`{"url":"https://example.com"}`),
		Details: &Details{Type: TypeInfo, Title: "Fetch", URLs: []string{"https://example.com"}},
	}
}

// readCall is a read-only tool that never asks.
func readCall() Call {
	return Call{Tool: "read_file", ReadOnly: true, Args: json.RawMessage(`{"file_path":"a.go"}`)}
}

// writeNoDetails is a tool that changes state but never asks, like save_memory.
func writeNoDetails() Call {
	return Call{Tool: "save_memory", Args: json.RawMessage(`{"fact":"x"}`)}
}

type answer struct {
	call    Call
	outcome Outcome
}

func TestPolicyDecide(t *testing.T) {
	shell := func(d Decision, prefixes ...string) Rule {
		return Rule{ToolName: "run_shell_command", Decision: d, CommandPrefix: prefixes}
	}
	tests := []struct {
		name       string
		mode       Mode
		rules      []Rule
		answers    []answer // given before the call
		call       Call
		want       Decision
		wantReason string // a substring of the reason, when set
	}{
		// Modes without rules.
		{name: "default read-only", call: readCall(), want: Allow},
		{name: "default no details", call: writeNoDetails(), want: Allow},
		{name: "default shell", call: shellCall("ls"), want: Ask},
		{name: "default edit", call: editCall(testRoot + "/a.go"), want: Ask},
		{name: "default mcp", call: mcpCall("srv", "search"), want: Ask},
		{name: "default info", call: infoCall("web_fetch"), want: Ask},
		{name: "auto_edit edit", mode: ModeAutoEdit, call: editCall(testRoot + "/a.go"), want: Allow},
		{name: "auto_edit shell", mode: ModeAutoEdit, call: shellCall("ls"), want: Ask},
		{name: "auto_edit mcp", mode: ModeAutoEdit, call: mcpCall("srv", "search"), want: Ask},
		{name: "yolo shell", mode: ModeYolo, call: shellCall("make"), want: Allow},
		{name: "yolo dangerous shell", mode: ModeYolo, call: shellCall("sudo rm -rf /"), want: Allow},
		{name: "yolo edit", mode: ModeYolo, call: editCall("/etc/x"), want: Allow},
		{name: "yolo mcp", mode: ModeYolo, call: mcpCall("srv", "search"), want: Allow},
		{name: "plan read-only", mode: ModePlan, call: readCall(), want: Allow},
		{name: "plan edit", mode: ModePlan, call: editCall(testRoot + "/a.go"), want: Deny, wantReason: "plan mode runs only read-only tools"},
		{name: "plan shell", mode: ModePlan, call: shellCall("ls"), want: Deny, wantReason: "plan mode"},
		{name: "plan write without details", mode: ModePlan, call: writeNoDetails(), want: Deny, wantReason: "plan mode"},
		{name: "plan mcp", mode: ModePlan, call: mcpCall("srv", "search"), want: Deny, wantReason: "plan mode"},

		// Deny rules win over every mode.
		{name: "yolo honours deny prefix", mode: ModeYolo, rules: []Rule{shell(Deny, "rm")},
			call: shellCall("rm -rf build"), want: Deny, wantReason: "policy rule 1"},
		{name: "yolo honours deny tool", mode: ModeYolo, rules: []Rule{{ToolName: "web_fetch", Decision: Deny}},
			call: infoCall("web_fetch"), want: Deny, wantReason: "web_fetch"},
		{name: "auto_edit honours deny", mode: ModeAutoEdit, rules: []Rule{{ToolName: "write_file", Decision: Deny}},
			call: editCall(testRoot + "/a.go"), want: Deny},
		{name: "plan deny rule on read-only", mode: ModePlan, rules: []Rule{{ToolName: "read_*", Decision: Deny}},
			call: readCall(), want: Deny, wantReason: "policy rule 1 (deny read_*)"},
		{name: "plan refuses despite allow rule", mode: ModePlan, rules: []Rule{{ToolName: "run_shell_command", Decision: Allow}},
			call: shellCall("ls"), want: Deny, wantReason: "plan mode"},
		{name: "deny any command of a list", rules: []Rule{shell(Deny, "rm")}, call: shellCall("ls && rm x"), want: Deny},
		{name: "deny through sudo", rules: []Rule{shell(Deny, "rm")}, call: shellCall("sudo rm x"), want: Deny},
		{name: "deny through path", rules: []Rule{shell(Deny, "rm")}, call: shellCall("/bin/rm x"), want: Deny},
		{name: "deny through bash -c", rules: []Rule{shell(Deny, "rm")}, call: shellCall("bash -c 'cd x && rm y'"), want: Deny},
		{name: "deny through find -exec", rules: []Rule{shell(Deny, "rm")}, call: shellCall(`find . -exec rm {} \;`), want: Deny},
		{name: "deny through substitution", rules: []Rule{shell(Deny, "rm")}, call: shellCall("echo $(rm x)"), want: Deny},
		{name: "deny wrapper itself", rules: []Rule{shell(Deny, "sudo")}, call: shellCall("make && sudo ls"), want: Deny},
		{name: "deny is word bounded", rules: []Rule{shell(Deny, "rm")}, call: shellCall("rmdir x"), want: Ask},
		{name: "deny unparsable line", rules: []Rule{shell(Deny, "echo")}, call: shellCall("echo 'oops"), want: Deny},
		{name: "deny regex", rules: []Rule{{ToolName: "run_shell_command", Decision: Deny, CommandRegex: `^git push .*--force`}},
			call: shellCall("git status; git push origin --force"), want: Deny},

		// Allow rules.
		{name: "allow prefix", rules: []Rule{shell(Allow, "git")}, call: shellCall("git status"), want: Allow, wantReason: "policy rule 1"},
		{name: "allow prefix through path and wrapper", rules: []Rule{shell(Allow, "git")}, call: shellCall("timeout 9 /usr/bin/git log"), want: Allow},
		{name: "allow prefix is word bounded", rules: []Rule{shell(Allow, "git")}, call: shellCall("gitk --all"), want: Ask},
		{name: "allow prefix needs every command", rules: []Rule{shell(Allow, "git")}, call: shellCall("git status && curl x | sh"), want: Ask},
		{name: "allow prefixes cover every command", rules: []Rule{shell(Allow, "git", "grep")}, call: shellCall("git log | grep fix"), want: Allow},
		{name: "allow prefix not for substitution", rules: []Rule{shell(Allow, "git")}, call: shellCall("git log $(git rev-parse HEAD)"), want: Ask, wantReason: "substitution"},
		{name: "allow prefix not for dangerous", rules: []Rule{shell(Allow, "git")}, call: shellCall("git diff > /etc/motd"), want: Ask, wantReason: "/etc/motd"},
		{name: "allow prefix not for sudo", rules: []Rule{shell(Allow, "apt-get")}, call: shellCall("sudo apt-get install vim"), want: Ask, wantReason: "sudo"},
		{name: "allow prefix not for rm -rf", rules: []Rule{shell(Allow, "rm")}, call: shellCall("rm -rf build"), want: Ask},
		{name: "allow prefix plain rm", rules: []Rule{shell(Allow, "rm")}, call: shellCall("rm build/a.o"), want: Allow},
		{name: "allow prefix dangerous in auto_edit", mode: ModeAutoEdit, rules: []Rule{shell(Allow, "git")}, call: shellCall("git log $(git rev-parse HEAD)"), want: Ask},
		{name: "allow prefix dangerous in yolo", mode: ModeYolo, rules: []Rule{shell(Allow, "git")}, call: shellCall("git log `git rev-parse HEAD`"), want: Allow},
		{name: "allow prefix not for unparsable", rules: []Rule{shell(Allow, "echo")}, call: shellCall("echo 'oops"), want: Ask},
		{name: "allow regex", rules: []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandRegex: `^npm (test|run build)$`}},
			call: shellCall("npm test && npm run build"), want: Allow},
		{name: "allow regex needs every command", rules: []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandRegex: `^npm`}},
			call: shellCall("npm test && curl evil"), want: Ask},
		{name: "allow regex not for dangerous", rules: []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandRegex: `.*`}},
			call: shellCall("rm -rf /"), want: Ask},
		{name: "blanket allow covers dangerous", rules: []Rule{{ToolName: "run_shell_command", Decision: Allow}},
			call: shellCall("rm -rf build"), want: Allow},
		{name: "blanket allow at same priority as prefix", rules: []Rule{shell(Allow, "rm"), {ToolName: "run_shell_command", Decision: Allow}},
			call: shellCall("rm -rf build"), want: Allow},
		{name: "allow rule for edit", rules: []Rule{{ToolName: "write_file", Decision: Allow}}, call: editCall(testRoot + "/a.go"), want: Allow},
		{name: "allow mcp glob", rules: []Rule{{ToolName: "srv__*", Decision: Allow}}, call: mcpCall("srv", "search"), want: Allow},
		{name: "glob does not match other server", rules: []Rule{{ToolName: "srv__*", Decision: Allow}}, call: mcpCall("other", "search"), want: Ask},
		{name: "command rule ignores other tools", rules: []Rule{{ToolName: "*", Decision: Allow, CommandPrefix: []string{"ls"}}},
			call: editCall(testRoot + "/a.go"), want: Ask},
		{name: "command rule ignores calls without details", rules: []Rule{{ToolName: "*", Decision: Deny, CommandPrefix: []string{"ls"}}},
			call: readCall(), want: Allow},
		{name: "empty tool name matches all", rules: []Rule{{Decision: Deny}}, call: readCall(), want: Deny},

		// Ties and priorities.
		{name: "deny wins tie over allow", rules: []Rule{shell(Allow, "git"), shell(Deny, "git push")},
			call: shellCall("git push origin"), want: Deny},
		{name: "tie rule order does not matter", rules: []Rule{shell(Deny, "git push"), shell(Allow, "git")},
			call: shellCall("git push origin"), want: Deny},
		{name: "allow where deny does not match", rules: []Rule{shell(Allow, "git"), shell(Deny, "git push")},
			call: shellCall("git status"), want: Allow},
		{name: "ask wins tie over allow", rules: []Rule{{ToolName: "write_file", Decision: Allow}, {ToolName: "write_*", Decision: Ask}},
			mode: ModeAutoEdit, call: editCall(testRoot + "/a.go"), want: Ask},
		{name: "deny wins tie over ask", rules: []Rule{{ToolName: "*", Decision: Ask}, {ToolName: "web_fetch", Decision: Deny}},
			call: infoCall("web_fetch"), want: Deny},
		{name: "higher priority allow beats deny", rules: []Rule{shell(Deny, "git"), {ToolName: "run_shell_command", Decision: Allow, Priority: 10, CommandPrefix: []string{"git status"}}},
			call: shellCall("git status"), want: Allow},
		{name: "higher priority deny beats allow", rules: []Rule{{ToolName: "*", Decision: Allow}, {ToolName: "web_fetch", Decision: Deny, Priority: 1}},
			call: infoCall("web_fetch"), want: Deny},
		{name: "higher priority ask beats allow", rules: []Rule{{ToolName: "*", Decision: Allow}, {ToolName: "*", Decision: Ask, Priority: 2}},
			call: readCall(), want: Ask},

		// Ask rules.
		{name: "ask rule on tool without details", rules: []Rule{{ToolName: "read_file", Decision: Ask}}, call: readCall(), want: Ask, wantReason: "policy rule 1"},
		{name: "ask rule in yolo", mode: ModeYolo, rules: []Rule{shell(Ask, "git push")}, call: shellCall("git add . && git push"), want: Ask},
		{name: "ask rule beats allowlist", rules: []Rule{shell(Ask, "git push")},
			answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("git push"), want: Ask},

		// Args patterns.
		{name: "args pattern matches", mode: ModeAutoEdit, rules: []Rule{{ToolName: "write_file", Decision: Deny, ArgsPattern: `"file_path":"[^"]*\.env"`}},
			call: editCall(testRoot + "/.env"), want: Deny},
		{name: "args pattern does not match", mode: ModeAutoEdit, rules: []Rule{{ToolName: "write_file", Decision: Deny, ArgsPattern: `"file_path":"[^"]*\.env"`}},
			call: editCall(testRoot + "/main.go"), want: Allow},

		// The session allowlist.
		{name: "allowlisted root", answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("git log -3"), want: Allow, wantReason: "session"},
		{name: "allowlisted roots through wrapper", answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("timeout 5 git log"), want: Allow},
		{name: "allowlist needs every root", answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("git log | grep x"), want: Ask},
		{name: "allowlist of several roots", answers: []answer{{shellCall("git log | grep x"), ProceedAlways}}, call: shellCall("grep y z && git diff"), want: Allow},
		{name: "allowlist not for substitution", answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("git log $(id)"), want: Ask},
		{name: "allowlist not for dangerous", answers: []answer{{shellCall("rm a"), ProceedAlways}}, call: shellCall("rm -r b"), want: Ask},
		{name: "dangerous answer not remembered", answers: []answer{{shellCall("rm -rf a"), ProceedAlways}}, call: shellCall("rm b"), want: Ask},
		{name: "substituting answer not remembered", answers: []answer{{shellCall("echo $(id)"), ProceedAlways}}, call: shellCall("echo hi"), want: Ask},
		{name: "once is not remembered", answers: []answer{{shellCall("ls"), ProceedOnce}}, call: shellCall("ls"), want: Ask},
		{name: "cancel is not remembered", answers: []answer{{shellCall("ls"), Cancel}}, call: shellCall("ls"), want: Ask},
		{name: "always tool on shell allowlists roots", answers: []answer{{shellCall("ls"), ProceedAlwaysTool}}, call: shellCall("ls -l"), want: Allow},
		{name: "always tool on shell is not every command", answers: []answer{{shellCall("ls"), ProceedAlwaysTool}}, call: shellCall("make"), want: Ask},
		{name: "always edit allows every edit", answers: []answer{{editCall(testRoot + "/a.go"), ProceedAlways}}, call: editCall(testRoot + "/b.go"), want: Allow, wantReason: "every edit"},
		{name: "always edit is edits only", answers: []answer{{editCall(testRoot + "/a.go"), ProceedAlways}}, call: infoCall("web_fetch"), want: Ask},
		{name: "reject always on shell", answers: []answer{{shellCall("make build"), RejectAlways}}, call: shellCall("ls && make test"), want: Deny, wantReason: "rejected"},
		{name: "reject always beats yolo", mode: ModeYolo, answers: []answer{{shellCall("make build"), RejectAlways}}, call: shellCall("make"), want: Deny},
		{name: "reject always beats an earlier always", answers: []answer{{shellCall("make"), ProceedAlways}, {shellCall("make"), RejectAlways}}, call: shellCall("make"), want: Deny},
		{name: "reject always on shell is its programs", answers: []answer{{shellCall("make build"), RejectAlways}}, call: shellCall("ls"), want: Ask},
		{name: "reject always on mcp is the tool", answers: []answer{{mcpCall("srv", "wipe"), RejectAlways}}, call: mcpCall("srv", "search"), want: Ask},
		{name: "reject always on mcp", answers: []answer{{mcpCall("srv", "wipe"), RejectAlways}}, call: mcpCall("srv", "wipe"), want: Deny},
		{name: "reject always on a tool", answers: []answer{{editCall(testRoot + "/a.go"), RejectAlways}}, call: editCall(testRoot + "/b.go"), want: Deny},
		{name: "always tool on edit", answers: []answer{{editCall(testRoot + "/a.go"), ProceedAlwaysTool}}, call: editCall(testRoot + "/b.go"), want: Allow, wantReason: "session"},
		{name: "always server", answers: []answer{{mcpCall("srv", "search"), ProceedAlwaysServer}}, call: mcpCall("srv", "delete"), want: Allow},
		{name: "always server is one server", answers: []answer{{mcpCall("srv", "search"), ProceedAlwaysServer}}, call: mcpCall("other", "search"), want: Ask},
		{name: "always mcp tool", answers: []answer{{mcpCall("srv", "search"), ProceedAlwaysTool}}, call: mcpCall("srv", "search"), want: Allow},
		{name: "always mcp tool is one tool", answers: []answer{{mcpCall("srv", "search"), ProceedAlwaysTool}}, call: mcpCall("srv", "delete"), want: Ask},
		{name: "always on mcp is the tool", answers: []answer{{mcpCall("srv", "search"), ProceedAlways}}, call: mcpCall("srv", "delete"), want: Ask},
		{name: "always info", answers: []answer{{infoCall("web_fetch"), ProceedAlways}}, call: infoCall("web_fetch"), want: Allow},
		{name: "always info is one tool", answers: []answer{{infoCall("web_fetch"), ProceedAlways}}, call: infoCall("google_web_search"), want: Ask},
		{name: "allowlist does not beat deny", rules: []Rule{shell(Deny, "git push")},
			answers: []answer{{shellCall("git status"), ProceedAlways}}, call: shellCall("git push"), want: Deny},
		{name: "allowlist does not beat plan", mode: ModePlan,
			answers: []answer{{infoCall("web_fetch"), ProceedAlways}}, call: infoCall("web_fetch"), want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.mode, tt.rules, func() []string { return testRoots })
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tt.answers {
				p.Remember(a.call, a.outcome)
			}
			got := p.Decide(tt.call)
			if got.Decision != tt.want {
				t.Fatalf("Decide = %+v, want %s", got, tt.want)
			}
			if !strings.Contains(got.Reason, tt.wantReason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tt.wantReason)
			}
			if (got.Decision == Ask) != (got.Details != nil) {
				t.Errorf("Details = %+v with decision %s: want details exactly when asking", got.Details, got.Decision)
			}
		})
	}
}

// TestPolicyPrefixNeverAllowsUnsafe checks, over many commands, that in default mode a
// command that substitutes or is dangerous is never allowed by a prefix rule that
// matches it, while a safe one is.
func TestPolicyPrefixNeverAllowsUnsafe(t *testing.T) {
	for _, tt := range analyzeTests {
		a, err := Analyze(tt.cmd, testRoot, testRoots)
		if err != nil || len(a.Roots) == 0 {
			continue
		}
		rule := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: a.Roots}
		for _, mode := range []Mode{ModeDefault, ModeAutoEdit} {
			p, err := NewPolicy(mode, []Rule{rule}, func() []string { return testRoots })
			if err != nil {
				t.Fatal(err)
			}
			got := p.Decide(shellCall(tt.cmd))
			unsafe := a.Substitution || len(a.Dangerous) > 0
			switch {
			case unsafe && got.Decision != Ask:
				t.Errorf("%s: Decide(%q) with allow rule %q = %+v, want ask", mode, tt.cmd, a.Roots, got)
			case !unsafe && got.Decision != Allow:
				t.Errorf("%s: Decide(%q) with allow rule %q = %+v, want allow", mode, tt.cmd, a.Roots, got)
			}
		}
	}
}

func TestPolicyAskDetails(t *testing.T) {
	p, err := NewPolicy(ModeDefault, []Rule{{ToolName: "read_file", Decision: Ask}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := p.Decide(readCall())
	if v.Details == nil || v.Details.Type != TypeInfo || !strings.Contains(v.Details.Title, "read_file") {
		t.Errorf("Details = %+v, want info details naming read_file", v.Details)
	}

	call := shellCall("sudo git pull && make")
	v = p.Decide(call)
	if v.Details == nil || strings.Join(v.Details.RootCommands, ",") != "git,make" || v.Details.Command != call.Details.Command {
		t.Errorf("Details = %+v, want the call's details with root commands git, make", v.Details)
	}
	if call.Details.RootCommands != nil {
		t.Errorf("Decide changed the call's details: %+v", call.Details)
	}
}

func TestPolicyModes(t *testing.T) {
	p, err := NewPolicy("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeDefault {
		t.Errorf("Mode() = %q, want default", p.Mode())
	}
	p.SetMode(ModePlan)
	if got := p.Decide(editCall(testRoot + "/a.go")); got.Decision != Deny {
		t.Errorf("after SetMode(plan), Decide(edit) = %+v, want deny", got)
	}
	p.SetMode(ModeYolo)
	p.Remember(editCall(testRoot+"/a.go"), ProceedAlways)
	if p.Mode() != ModeYolo {
		t.Errorf("an always-allow edit answer changed yolo mode to %q", p.Mode())
	}
	p.SetMode(ModeDefault)
	p.Remember(editCall(testRoot+"/a.go"), ProceedAlways)
	if p.Mode() != ModeDefault {
		t.Errorf("Mode() = %q after an always-allow edit answer, want default: the answer is the session's, not the mode", p.Mode())
	}
	if got := p.Decide(editCall(testRoot + "/b.go")); got.Decision != Allow {
		t.Errorf("after an always-allow edit answer, Decide(edit) = %+v, want allow", got)
	}
}

func TestNewPolicyErrors(t *testing.T) {
	ok := Rule{ToolName: "read_file", Decision: Allow}
	tests := []struct {
		name  string
		mode  Mode
		rules []Rule
		want  string
	}{
		{"mode", "careful", nil, `unknown approval mode "careful"`},
		{"decision", "", []Rule{ok, {ToolName: "x", Decision: "maybe"}}, `policy rule 2 (toolName "x"): decision "maybe"`},
		{"missing decision", "", []Rule{{ToolName: "x"}}, `policy rule 1 (toolName "x"): decision ""`},
		{"glob", "", []Rule{{ToolName: "srv__[", Decision: Deny}}, `policy rule 1 (toolName "srv__["): toolName is not a valid glob`},
		{"command regex", "", []Rule{ok, ok, {ToolName: "run_shell_command", Decision: Allow, CommandRegex: "(git"}}, "policy rule 3 (toolName \"run_shell_command\"): commandRegex: error parsing regexp"},
		{"args pattern", "", []Rule{{ToolName: "x", Decision: Deny, ArgsPattern: "a{2,1}"}}, "policy rule 1 (toolName \"x\"): argsPattern: error parsing regexp"},
		{"empty prefix", "", []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"git", " "}}}, "policy rule 1 (toolName \"run_shell_command\"): commandPrefix has an empty prefix"},
		{"extension allow", "", []Rule{{ToolName: "x", Decision: Allow, Source: SourceExtension}}, `policy rule 1 (toolName "x"): an extension's rule cannot allow`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.mode, tt.rules, nil)
			if err == nil {
				t.Fatalf("NewPolicy = %v, nil error; want an error containing %q", p, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewPolicy error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestPolicyConcurrent exercises Decide, Remember and SetMode at once; run with -race.
func TestPolicyConcurrent(t *testing.T) {
	p, err := NewPolicy(ModeDefault, []Rule{{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm"}}},
		func() []string { return testRoots })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				cmd := fmt.Sprintf("tool%d --n %d", i, j)
				p.Remember(shellCall(cmd), ProceedAlways)
				p.Remember(mcpCall(fmt.Sprint("srv", i), "t"), ProceedAlwaysServer)
				if v := p.Decide(shellCall(cmd)); v.Decision != Allow {
					t.Errorf("Decide(%q) after allowlisting = %+v, want allow", cmd, v)
				}
				if v := p.Decide(shellCall("rm x")); v.Decision != Deny {
					t.Errorf("Decide(rm x) = %+v, want deny", v)
				}
				if j%10 == 0 {
					p.SetMode(p.Mode())
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkDecideShell(b *testing.B) {
	p, err := NewPolicy(ModeDefault, []Rule{
		{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm -rf", "git push"}},
		{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"go", "git", "grep"}},
	}, func() []string { return testRoots })
	if err != nil {
		b.Fatal(err)
	}
	call := shellCall("go vet ./... && git status | grep -n modified")
	for b.Loop() {
		if v := p.Decide(call); v.Decision != Allow {
			b.Fatal(v)
		}
	}
}

// TestPolicyPersonOnly: a call whose Details say PersonOnly (a switch of the approval
// mode, ask_user) is asked about whatever allows other calls — an allow rule of the
// user, of a workspace or by wildcard, yolo or auto_edit, an earlier "always" — and a
// deny rule or plan mode's refusal still refuse it.
func TestPolicyPersonOnly(t *testing.T) {
	call := func(readOnly bool) Call {
		return Call{Tool: "exit_plan_mode", ReadOnly: readOnly, Args: json.RawMessage(`{}`),
			Details: &Details{Type: TypeInfo, Title: "Leave plan mode", NoAlways: true, PersonOnly: true}}
	}
	allow := func(tool string, src Source) Rule {
		return Rule{ToolName: tool, Decision: Allow, Priority: 900, Source: src}
	}
	cases := []struct {
		name     string
		mode     Mode
		rules    []Rule
		readOnly bool
		always   bool // the call was answered "always" before
		want     Decision
	}{
		{name: "no rule", mode: ModeDefault, readOnly: true, want: Ask},
		{name: "the user's allow rule", mode: ModePlan, rules: []Rule{allow("exit_plan_mode", SourceUser)}, readOnly: true, want: Ask},
		{name: "a workspace's allow rule", mode: ModePlan, rules: []Rule{allow("exit_plan_mode", SourceWorkspace)}, readOnly: true, want: Ask},
		{name: "a wildcard allow rule", mode: ModeDefault, rules: []Rule{allow("*", SourceUser)}, readOnly: true, want: Ask},
		{name: "yolo", mode: ModeYolo, readOnly: true, want: Ask},
		{name: "yolo and an allow rule", mode: ModeYolo, rules: []Rule{allow("*_plan_mode", SourceUser)}, readOnly: true, want: Ask},
		{name: "auto_edit", mode: ModeAutoEdit, readOnly: true, want: Ask},
		{name: "always before", mode: ModeDefault, readOnly: true, always: true, want: Ask},
		{name: "a deny rule", mode: ModeYolo, rules: []Rule{{ToolName: "exit_plan_mode", Decision: Deny}}, readOnly: true, want: Deny},
		{name: "plan mode, not read-only", mode: ModePlan, rules: []Rule{allow("*", SourceUser)}, want: Deny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.mode, tc.rules, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.always {
				p.Remember(call(tc.readOnly), ProceedAlways)
			}
			if got := p.Decide(call(tc.readOnly)); got.Decision != tc.want {
				t.Errorf("Decide = %+v, want %s", got, tc.want)
			}
		})
	}
}

// TestDeniesOutright: a tool is refused outright, and so not declared, only when a deny
// rule without conditions names it and no rule could let some call of it through; each
// such case is checked against Decide for a call the question is about.
func TestDeniesOutright(t *testing.T) {
	deny := func(tool string, prio int, src Source) Rule {
		return Rule{ToolName: tool, Decision: Deny, Priority: prio, Source: src}
	}
	shellGitStatus := Rule{ToolName: "run_shell_command", Decision: Allow, Priority: 200, CommandPrefix: []string{"git status"}}
	for _, tt := range []struct {
		name  string
		rules []Rule
		tool  string
		want  bool
	}{
		{"no rules", nil, "write_file", false},
		{"a deny rule naming it", []Rule{deny("write_file", 0, SourceUser)}, "write_file", true},
		{"a deny rule naming another", []Rule{deny("write_file", 0, SourceUser)}, "read_file", false},
		{"a glob", []Rule{deny("github__*", 0, SourceUser)}, "github__create_issue", true},
		{"every tool", []Rule{deny("", 0, SourceUser)}, "read_file", true},
		{"a command condition", []Rule{{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm"}}}, "run_shell_command", false},
		{"an argument condition", []Rule{{ToolName: "write_file", Decision: Deny, ArgsPattern: "secret"}}, "write_file", false},
		{"an allow above it", []Rule{deny("run_shell_command", 100, SourceUser), shellGitStatus}, "run_shell_command", false},
		{"an allow below it", []Rule{deny("run_shell_command", 300, SourceUser), shellGitStatus}, "run_shell_command", true},
		{"an ask above it", []Rule{deny("write_file", 1, SourceUser), {ToolName: "write_file", Decision: Ask, Priority: 2}}, "write_file", false},
		{"the workspace's deny over the user's allow", []Rule{deny("run_shell_command", 0, SourceWorkspace), shellGitStatus}, "run_shell_command", true},
		{"an extension's deny", []Rule{deny("write_file", 0, SourceExtension)}, "write_file", true},
		{"an extension's deny, a user's rule naming the tool", []Rule{deny("write_file", 0, SourceExtension), {ToolName: "write_file", Decision: Ask, Source: SourceUser}}, "write_file", false},
		{"the system's deny over the user's allow", []Rule{deny("run_shell_command", 0, SourceAdmin), shellGitStatus}, "run_shell_command", true},
		{"the user's deny, a system allow naming the tool", []Rule{deny("run_shell_command", 999, SourceUser), {ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"git status"}, Source: SourceAdmin}}, "run_shell_command", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy(t, ModeYolo, tt.rules...)
			if got := p.DeniesOutright(tt.tool); got != tt.want {
				t.Fatalf("DeniesOutright(%s) = %t, want %t", tt.tool, got, tt.want)
			}
			// What Decide says of the call the escaping rule is about, where there is one.
			c := Call{Tool: tt.tool, Args: []byte(`{}`)}
			if tt.tool == "run_shell_command" {
				c = shellCall("git status")
			}
			if v := p.Decide(c); tt.want && v.Decision != Deny {
				t.Errorf("refused outright, but Decide says %s: %s", v.Decision, v.Reason)
			}
		})
	}
}
