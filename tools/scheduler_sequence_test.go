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
