package confirm

import (
	"fmt"
	"strings"
	"testing"
)

func TestAnswerCheck(t *testing.T) {
	edit := Details{Type: TypeEdit, Hunks: []Hunk{{Index: 0}, {Index: 1}, {Index: 2}}}
	tests := []struct {
		name    string
		a       Answer
		d       Details
		wantErr string
	}{
		{"plain", Answer{Outcome: ProceedOnce}, edit, ""},
		{"some hunks", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{0, 2}}, edit, ""},
		{"no hunk", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{}}, edit, ""},
		{"hunks with always", Answer{Outcome: ProceedAlways, AcceptedHunks: []int{0}}, edit, "only with proceed_once"},
		{"hunks with cancel", Answer{Outcome: Cancel, AcceptedHunks: []int{}}, edit, "only with proceed_once"},
		{"out of range", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{3}}, edit, "hunk 3 does not exist"},
		{"negative", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{-1}}, edit, "hunk -1 does not exist"},
		{"no hunks offered", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{0}}, Details{Type: TypeEdit}, "does not exist"},
		{"duplicate", Answer{Outcome: ProceedOnce, AcceptedHunks: []int{1, 1}}, edit, "given twice"},
		{"unknown outcome", Answer{Outcome: "yes"}, edit, "not an outcome"},
		{"persist user", Answer{Outcome: ProceedAlways, Persist: ScopeUser}, edit, ""},
		{"persist workspace", Answer{Outcome: ProceedAlwaysServer, Persist: ScopeWorkspace}, edit, ""},
		{"persist once", Answer{Outcome: ProceedOnce, Persist: ScopeUser}, edit, "only with an \"always\" outcome"},
		{"persist elsewhere", Answer{Outcome: ProceedAlways, Persist: "system"}, edit, "not \"user\" or \"workspace\""},
		{"persist no-always", Answer{Outcome: ProceedAlways, Persist: ScopeUser}, Details{Type: TypeInfo, NoAlways: true}, "cannot be saved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.Check(tt.d)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRuleFor(t *testing.T) {
	noAlways := infoCall("save_memory")
	noAlways.Details.NoAlways = true
	tests := []struct {
		name    string
		c       Call
		o       Outcome
		want    string
		wantErr string
	}{
		{"shell", shellCall("git status && go test ./..."), ProceedAlways, `{run_shell_command allow 0 [git go]    user }`, ""},
		{"shell tool", shellCall("make"), ProceedAlwaysTool, `{run_shell_command allow 0 [make]    user }`, ""},
		{"shell substitution", shellCall("echo $(rm -rf ~)"), ProceedAlways, "", "asked about every time"},
		{"edit", editCall("/w/a.go"), ProceedAlways, `{write_file allow 0 []    user }`, ""},
		{"mcp tool", mcpCall("gh", "search"), ProceedAlwaysTool, `{gh__search allow 0 []    user }`, ""},
		{"mcp server", mcpCall("gh", "search"), ProceedAlwaysServer, `{gh__* allow 0 []    user }`, ""},
		{"info", infoCall("web_fetch"), ProceedAlways, `{web_fetch allow 0 []    user }`, ""},
		{"once", infoCall("web_fetch"), ProceedOnce, "", "not an \"always\" answer"},
		{"no always", noAlways, ProceedAlways, "", "asked every time"},
	}
	p, err := NewPolicy(ModeDefault, nil, func() []string { return testRoots })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := p.RuleFor(tt.c, tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("RuleFor = %v, %v; want error %q", r, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(r); got != tt.want {
				t.Fatalf("RuleFor = %s, want %s", got, tt.want)
			}
			// The saved rule allows the call in a policy of its own, as the answer did
			// for the session.
			saved, err := NewPolicy(ModeDefault, []Rule{r}, func() []string { return testRoots })
			if err != nil {
				t.Fatal(err)
			}
			if v := saved.Decide(tt.c); v.Decision != Allow {
				t.Fatalf("the saved rule %v does not allow the call: %+v", r, v)
			}
		})
	}
}
