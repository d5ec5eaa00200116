package confirm

import (
	"slices"
	"strings"
	"testing"
)

// TestSandboxConsent: a command the model asks to run outside the sandbox is asked
// about every time (once or reject) in default and auto_edit whatever the rules,
// refused in plan mode and run in yolo; with autoAllow a contained command no rule
// names runs in default and auto_edit, and nothing else changes.
func TestSandboxConsent(t *testing.T) {
	allowLs := []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"ls"}}}
	call := func(cmd, sandbox string) Call {
		c := shellCall(cmd)
		c.Details.Sandbox = sandbox
		if sandbox == SandboxOutside {
			c.Details.Justification = "needs the network"
		}
		return c
	}
	for _, tc := range []struct {
		name      string
		rules     []Rule
		mode      Mode
		autoAllow bool
		call      Call
		want      Decision
	}{
		{"outside, default, allowed by a rule", allowLs, ModeDefault, false, call("ls", SandboxOutside), Ask},
		{"outside, auto_edit", nil, ModeAutoEdit, true, call("ls", SandboxOutside), Ask},
		{"outside, plan, read-only", nil, ModePlan, false, Call{Tool: "run_shell_command", ReadOnly: true, Details: call("ls", SandboxOutside).Details}, Deny},
		{"outside, yolo", nil, ModeYolo, false, call("ls", SandboxOutside), Allow},
		{"contained, autoAllow, no rule", nil, ModeDefault, true, call("make build", SandboxContained), Allow},
		{"contained, autoAllow, auto_edit", nil, ModeAutoEdit, true, call("make build", SandboxContained), Allow},
		{"contained, autoAllow off", nil, ModeDefault, false, call("make build", SandboxContained), Ask},
		{"not contained, autoAllow", nil, ModeDefault, true, call("make build", ""), Ask},
		{"contained, autoAllow, dangerous", nil, ModeDefault, true, call("rm -rf build", SandboxContained), Ask},
		{"contained, autoAllow, code", nil, ModeDefault, true, call("echo $(make)", SandboxContained), Ask},
		{"contained, autoAllow, sensitive", nil, ModeDefault, true, call("echo x > .git/config", SandboxContained), Ask},
		{"contained, autoAllow, plan", nil, ModePlan, true, call("make build", SandboxContained), Deny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.mode, tc.rules, func() []string { return []string{testRoot} })
			if err != nil {
				t.Fatal(err)
			}
			p = p.WithAutoAllowContained(tc.autoAllow)
			v := p.Decide(tc.call)
			if v.Decision != tc.want {
				t.Fatalf("decision %s (%s), want %s", v.Decision, v.Reason, tc.want)
			}
			if v.Decision == Ask && tc.call.Details.Sandbox == SandboxOutside {
				var ids []string
				for _, c := range v.Details.Choices {
					ids = append(ids, c.ID)
				}
				if !slices.Equal(ids, []string{ChoiceOnce, ChoiceReject}) {
					t.Errorf("outside the sandbox offered %v, want once and reject only", ids)
				}
				if !strings.Contains(v.Reason, "needs the network") {
					t.Errorf("reason %q does not show the justification", v.Reason)
				}
			}
		})
	}
}
