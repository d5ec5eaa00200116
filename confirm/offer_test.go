package confirm

import (
	"slices"
	"strings"
	"testing"
)

func TestOffer(t *testing.T) {
	noAlways := infoCall("save_memory")
	noAlways.Details.NoAlways = true
	own := infoCall("trust")
	own.Details.Choices = []Choice{{Outcome: ProceedOnce, Label: "Trust this folder"}, {Outcome: Cancel, Label: "Not now"}}
	ask := Call{Tool: "ask_user", Details: &Details{Type: TypeAsk, Questions: []Question{{Question: "?"}}}}

	tests := []struct {
		name string
		call Call
		// want is the choices as "id outcome persist covers", in order.
		want []string
	}{
		{"a command", shellCall("go test ./... && echo done"), []string{
			"once proceed_once", "always proceed_always  go, echo", "always_save proceed_always user go, echo",
			"reject cancel", "reject_always reject_always  go, echo"}},
		{"a command with assignments in front", shellCall("GOFLAGS=-x go build"), []string{
			"once proceed_once", "always proceed_always  GOFLAGS=-x go", "always_save proceed_always user GOFLAGS=-x go",
			"reject cancel", "reject_always reject_always  GOFLAGS=-x go"}},
		// What "always" lists must be exactly what it allows: arithmetic on a variable
		// is code no "always" covers, so none is offered (VS Code listed n=$((n+1))).
		{"arithmetic on a variable", shellCall("n=0; while test $n -lt 3; do echo $n; n=$((n+1)); done"), []string{
			"once proceed_once", "reject cancel", "reject_always reject_always  n=0, test, echo, n=$((n+1))"}},
		{"a substitution", shellCall("echo $(rm -rf ~)"), []string{"once proceed_once", "reject cancel", "reject_always reject_always  echo, rm"}},
		{"a dangerous command", shellCall("rm -rf /"), []string{"once proceed_once", "reject cancel", "reject_always reject_always  rm"}},
		{"a line that cannot be parsed", shellCall("echo 'unterminated"), []string{"once proceed_once", "reject cancel", "reject_always reject_always  this command line"}},
		// ./build.sh is another program in every other workspace: the user's settings
		// cannot keep it, the session can.
		{"a program by its path", shellCall("./build.sh"), []string{
			"once proceed_once", "always proceed_always  ./build.sh", "reject cancel", "reject_always reject_always  ./build.sh"}},
		{"an edit", editCall(testRoot + "/a.go"), []string{
			"once proceed_once", "always proceed_always  every edit", "always_save proceed_always_tool user write_file",
			"reject cancel", "reject_always reject_always  write_file"}},
		{"an MCP tool", mcpCall("srv", "search"), []string{
			"once proceed_once", "always proceed_always_tool  search of srv", "always_server proceed_always_server  every tool of srv",
			"always_save proceed_always_tool user search of srv", "reject cancel", "reject_always reject_always  search of srv"}},
		{"another tool", infoCall("web_fetch"), []string{
			"once proceed_once", "always proceed_always  web_fetch", "always_save proceed_always user web_fetch",
			"reject cancel", "reject_always reject_always  web_fetch"}},
		{"a question asked every time", noAlways, []string{"once proceed_once", "reject cancel"}},
		{"a question with its own choices", own, []string{"proceed_once proceed_once", "cancel cancel"}},
		{"ask_user", ask, nil},
	}
	p, err := NewPolicy("", nil, func() []string { return []string{testRoot} })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range p.Offer(tc.call) {
				s := strings.TrimRight(strings.Join([]string{c.ID, string(c.Outcome), string(c.Persist), c.Covers}, " "), " ")
				got = append(got, s)
				if c.Label == "" {
					t.Errorf("choice %s has no label", c.ID)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Offer =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// TestOfferIsWhatRememberAllows checks that every "always" choice the policy offers
// for a command allows, once taken, exactly the calls of its Covers and no more.
func TestOfferIsWhatRememberAllows(t *testing.T) {
	p, err := NewPolicy("", nil, func() []string { return []string{testRoot} })
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"go test ./...", "GOFLAGS=-x go build", "export X=1; make", "git status && git diff"} {
		var g Grants
		for _, c := range p.Offer(shellCall(line)) {
			if c.ID == ChoiceAlways {
				p.RememberIn(&g, shellCall(line), c.Outcome)
			}
		}
		if v := p.DecideWith(shellCall(line), ModeDefault, &g); v.Decision != Allow {
			t.Errorf("%q after its always choice: %+v, want allow", line, v)
		}
		if v := p.DecideWith(shellCall("curl example.com"), ModeDefault, &g); v.Decision != Ask {
			t.Errorf("always for %q allowed curl: %+v", line, v)
		}
	}
}

// TestGrantsAreTheSessions checks that an answer kept in one session's Grants
// changes nothing for another session of the same policy.
func TestGrantsAreTheSessions(t *testing.T) {
	p, err := NewPolicy("", nil, func() []string { return []string{testRoot} })
	if err != nil {
		t.Fatal(err)
	}
	var a, b Grants
	p.RememberIn(&a, shellCall("touch x"), ProceedAlways)
	p.RememberIn(&a, editCall(testRoot+"/a.go"), ProceedAlways)
	p.RememberIn(&a, mcpCall("srv", "x"), ProceedAlwaysServer)
	p.RememberIn(&a, infoCall("web_fetch"), RejectAlways)
	for _, c := range []Call{shellCall("touch y"), editCall(testRoot + "/b.go"), mcpCall("srv", "y")} {
		if v := p.DecideWith(c, ModeDefault, &a); v.Decision != Allow {
			t.Errorf("session A: %s = %+v, want allow", c.Tool, v)
		}
		if v := p.DecideWith(c, ModeDefault, &b); v.Decision != Ask {
			t.Errorf("session B: %s = %+v, want ask: A's answer leaked", c.Tool, v)
		}
	}
	if v := p.DecideWith(infoCall("web_fetch"), ModeDefault, &b); v.Decision != Ask {
		t.Errorf("session B: web_fetch = %+v, want ask: A's reject leaked", v)
	}
	if p.Mode() != ModeDefault {
		t.Errorf("an answer changed the policy's mode to %s", p.Mode())
	}
}

func TestAnswerResolve(t *testing.T) {
	p, err := NewPolicy("", nil, func() []string { return []string{testRoot} })
	if err != nil {
		t.Fatal(err)
	}
	c := shellCall("go test")
	d := *p.Decide(c).Details
	tests := []struct {
		in      Answer
		want    Answer
		wantErr string
	}{
		{in: Answer{Choice: ChoiceAlwaysSave}, want: Answer{Choice: ChoiceAlwaysSave, Outcome: ProceedAlways, Persist: ScopeUser}},
		{in: Answer{Choice: ChoiceRejectAlways}, want: Answer{Choice: ChoiceRejectAlways, Outcome: RejectAlways}},
		// The choice decides: an outcome sent beside it does not widen it.
		{in: Answer{Choice: ChoiceOnce, Outcome: ProceedAlways, Persist: ScopeUser}, want: Answer{Choice: ChoiceOnce, Outcome: ProceedOnce}},
		{in: Answer{Outcome: ProceedOnce}, want: Answer{Outcome: ProceedOnce}},
		{in: Answer{Choice: "always_server"}, wantErr: `choice "always_server" was not offered`},
		{in: Answer{Choice: ChoiceReject, AcceptedHunks: []int{0}}, wantErr: "acceptedHunks come only with proceed_once"},
	}
	for _, tc := range tests {
		got, err := tc.in.Resolve(d)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Resolve(%+v) error = %v, want %q", tc.in, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("Resolve(%+v): %v", tc.in, err)
		case got.Outcome != tc.want.Outcome || got.Persist != tc.want.Persist || got.Choice != tc.want.Choice:
			t.Errorf("Resolve(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
