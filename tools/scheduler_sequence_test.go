package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
)

// TestSchedulerWaitForPrevious checks wait_for_previous as Gemini CLI's scheduler
// honours it: a call that sets it starts once every earlier call of the batch has
// ended, the calls after it start once it has ended, and calls without it run
// together. Each call's tool holds it running until the state it should see is
// reached (the others started, or the later ones held back); a wrong order never
// reaches that state, and the call fails.
func TestSchedulerWaitForPrevious(t *testing.T) {
	type gate func(started int, queued int32) bool
	all3 := func(started int, _ int32) bool { return started == 3 }
	cases := []struct {
		name  string
		waits []string // the wait_for_previous argument of each call, "" for none
		gates []gate   // what each call waits for while running
		// before lists the pairs of steps that must come in this order.
		before [][2]string
	}{
		{name: "none", waits: []string{"", "", ""}, gates: []gate{all3, all3, all3}},
		{name: "all false", waits: []string{"false", "false", "false"}, gates: []gate{all3, all3, all3}},
		{
			name:  "middle waits",
			waits: []string{"", "true", ""},
			// a runs alone while b waits for it and c for b; then b while c waits.
			gates: []gate{
				func(s int, q int32) bool { return s == 1 && q == 2 },
				func(s int, q int32) bool { return s == 2 && q == 1 },
				func(int, int32) bool { return true },
			},
			before: [][2]string{{"end a", "start b"}, {"end b", "start c"}},
		},
		{
			name:  "last waits",
			waits: []string{"", "", "true"},
			gates: []gate{
				func(s int, q int32) bool { return s == 2 && q == 1 },
				func(s int, q int32) bool { return s == 2 && q == 1 },
				func(int, int32) bool { return true },
			},
			before: [][2]string{{"end a", "start c"}, {"end b", "start c"}},
		},
		{
			// Nothing comes before a, but b and c come after it.
			name:  "first waits",
			waits: []string{"true", "", ""},
			gates: []gate{
				func(s int, q int32) bool { return s == 1 && q == 2 },
				all3, all3,
			},
			before: [][2]string{{"end a", "start b"}, {"end a", "start c"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var log []string
			started := 0
			var env *testEnv
			ids := []string{"a", "b", "c"}
			step := &fakeTool{name: "step", kind: KindRead, schema: `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}`,
				exec: func(ctx context.Context, inv *fakeInv, _ io.Writer) (*Result, error) {
					mu.Lock()
					log = append(log, "start "+inv.args.ID)
					started++
					mu.Unlock()
					g := tc.gates[slices.Index(ids, inv.args.ID)]
					deadline := time.Now().Add(patience)
					for {
						mu.Lock()
						ok := g(started, env.s.queued.Load())
						mu.Unlock()
						if ok {
							break
						}
						if time.Now().After(deadline) || ctx.Err() != nil {
							return nil, errors.New("the calls never reached the state this one waits for")
						}
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					log = append(log, "end "+inv.args.ID)
					mu.Unlock()
					return &Result{Output: "ran " + inv.args.ID}, nil
				}}
			env = newEnv(t, nil, step)
			var reqs []Request
			for i, id := range ids {
				args := fmt.Sprintf(`{"id":%q}`, id)
				if w := tc.waits[i]; w != "" {
					args = fmt.Sprintf(`{"id":%q,"wait_for_previous":%s}`, id, w)
				}
				reqs = append(reqs, req(id, "step", args))
			}
			results := recv(t, "the batch to end", runAsync(t.Context(), env.s, reqs))
			for _, r := range results {
				wantStatus(t, r, StatusSuccess, "")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, b := range tc.before {
				if i, j := slices.Index(log, b[0]), slices.Index(log, b[1]); i < 0 || j < 0 || i > j {
					t.Errorf("%q should come before %q: %q", b[0], b[1], log)
				}
			}
			// The argument is the scheduler's: neither the tool's closed schema nor the
			// events see it.
			for _, ev := range env.rec.all() {
				if strings.Contains(string(ev.Args), WaitForPrevious) {
					t.Errorf("event of %s carries %s: %s", ev.CallID, WaitForPrevious, ev.Args)
				}
			}
		})
	}
}

// TestSchedulerWaitForPreviousInvalid checks that a wait_for_previous that is not a
// boolean is refused as the call's invalid parameter, and the other calls still run.
func TestSchedulerWaitForPreviousInvalid(t *testing.T) {
	for _, bad := range []string{`"yes"`, `1`, `{}`} {
		t.Run(bad, func(t *testing.T) {
			env := newEnv(t, nil, &fakeTool{name: "step", kind: KindRead})
			results := env.s.Run(t.Context(), []Request{
				req("a", "step", `{"id":"a"}`),
				req("b", "step", `{"id":"b","wait_for_previous":`+bad+`}`),
			})
			wantStatus(t, results[0], StatusSuccess, "")
			wantStatus(t, results[1], StatusError, ErrInvalidParams, "wait_for_previous must be a boolean")
		})
	}
}

// TestDeclarationsWaitForPrevious checks that every tool's declaration offers
// wait_for_previous, as Gemini CLI's do, whatever properties the tool has.
func TestDeclarationsWaitForPrevious(t *testing.T) {
	schemas := map[string]string{
		"props":    fakeSchema,
		"empty":    `{"type":"object"}`,
		"none":     ``,
		"closed":   `{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}`,
		"required": `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`,
	}
	reg := NewRegistry(nil, Filter{})
	for name, schema := range schemas {
		reg.Register(&fakeTool{name: name, schema: schema})
	}
	for _, d := range reg.Declarations() {
		var s struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if s.Properties[WaitForPrevious].Type != "boolean" {
			t.Errorf("%s: declaration %s has no boolean %s", d.Name, d.Parameters, WaitForPrevious)
		}
		if slices.Contains(s.Required, WaitForPrevious) {
			t.Errorf("%s: %s is required", d.Name, WaitForPrevious)
		}
	}
}

// TestWaitForPreviousOwnedByTheTool checks a tool (an MCP server's, say) whose schema
// declares a wait_for_previous of its own: its declaration keeps the tool's property,
// and the argument reaches the tool rather than being taken as the scheduler's (the
// closed schema requires it, so a call stripped of it would be refused). Every other
// tool's value is the scheduler's and is taken out.
func TestWaitForPreviousOwnedByTheTool(t *testing.T) {
	const own = `{"type":"object","properties":{"wait_for_previous":{"type":"string"}},"required":["wait_for_previous"],"additionalProperties":false}`
	cases := []struct {
		name, schema, args string
		wantType           string // of wait_for_previous in the declaration
		status             Status
		errType            ErrorType
	}{
		{name: "the tool's own", schema: own, args: `{"wait_for_previous":"after lunch"}`, wantType: "string", status: StatusSuccess},
		{name: "the tool's own, missing", schema: own, args: `{}`, wantType: "string", status: StatusError, errType: ErrInvalidParams},
		{name: "the scheduler's, on a closed schema", schema: `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}`,
			args: `{"id":"a","wait_for_previous":true}`, wantType: "boolean", status: StatusSuccess},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, nil, &fakeTool{name: "mcp_tool", kind: KindRead, schema: tc.schema})
			var decl struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			}
			ds := env.s.reg.Declarations()
			if len(ds) != 1 || json.Unmarshal(ds[0].Parameters, &decl) != nil {
				t.Fatalf("declarations %+v", ds)
			}
			if got := decl.Properties[WaitForPrevious].Type; got != tc.wantType {
				t.Errorf("declared %s of type %q, want %q", WaitForPrevious, got, tc.wantType)
			}
			results := env.s.Run(t.Context(), []Request{req("a", "mcp_tool", tc.args)})
			wantStatus(t, results[0], tc.status, tc.errType)
		})
	}
}

// TestSplitWaitForPrevious checks that taking wait_for_previous out leaves the other
// members as the model wrote them — their order, spacing within a member and escapes —
// since the policy's argsPattern rules match those bytes: re-encoding them escaped &, <
// and > and sorted the keys, so that adding wait_for_previous to a call slipped it
// past a deny rule.
func TestSplitWaitForPrevious(t *testing.T) {
	cases := []struct {
		in, want string
		wait     bool
	}{
		{`{"command":"a && b <c>","wait_for_previous":false}`, `{"command":"a && b <c>"}`, false},
		{`{"wait_for_previous":true,"z":1,"a":"x&y"}`, `{"z":1,"a":"x&y"}`, true},
		{`{ "z" : 1 , "wait_for_previous" : true , "a" : "\u0026" }`, `{"z" : 1,"a" : "\u0026"}`, true},
		{`{"wait_for_previous":true}`, `{}`, true},
		{`{"wait_for_previous":true,"k":{"wait_for_previous":"inner"},"wait_for_previous":false}`, `{"k":{"wait_for_previous":"inner"}}`, false},
		{`{"wait_for_previous":null,"a":1}`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":1}`, false},
		{`[1]`, `[1]`, false},
		{`{"a":`, `{"a":`, false},
	}
	for _, tc := range cases {
		got, wait, err := splitWaitForPrevious(json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want || wait != tc.wait {
			t.Errorf("splitWaitForPrevious(%s) = %s, %v, %v; want %s, %v", tc.in, got, wait, err, tc.want, tc.wait)
		}
	}
}

// TestWaitForPreviousKeepsDenyRules: a deny rule's argsPattern still matches a call
// that sets wait_for_previous, whatever its value, and the tool never runs.
func TestWaitForPreviousKeepsDenyRules(t *testing.T) {
	for _, extra := range []string{``, `,"wait_for_previous":false`, `,"wait_for_previous":true`} {
		t.Run(extra, func(t *testing.T) {
			p, err := confirm.NewPolicy(confirm.ModeYolo, []confirm.Rule{{ToolName: "step", Decision: confirm.Deny, ArgsPattern: `a && b <c>`}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			step := &fakeTool{name: "step", kind: KindRead}
			env := newEnv(t, func(o *Options) { o.Policy = p }, step)
			results := env.s.Run(t.Context(), []Request{req("a", "step", `{"id":"a && b <c>"`+extra+`}`)})
			wantStatus(t, results[0], StatusError, ErrPolicyViolation)
			if n := step.attempts.Load(); n != 0 {
				t.Errorf("the denied call ran %d times", n)
			}
		})
	}
}
