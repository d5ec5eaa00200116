package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

// shellTurns are the model's turns of one prompt that runs command and then answers.
func shellTurns(command string) []clients.Turn {
	args, _ := json.Marshal(map[string]string{"command": command})
	return []clients.Turn{{Calls: []clients.ScriptCall{{Name: "run_shell_command", Args: args}}}, {Text: "done"}}
}

// TestAnswerScopeIsTheSession: over the real binary, an "always" answer in one
// editor session allows the call again in that session only (red team R8: it used
// to allow it in every session of the server), and a "reject always" refuses the
// call for the rest of its session only, without asking; the choices offered are
// the server's, with ids, and answered by id.
func TestAnswerScopeIsTheSession(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	var turns []clients.Turn
	for _, cmd := range []string{"touch a1", "touch a2", "touch b1", "touch b2", "touch a3", "touch c1"} {
		turns = append(turns, shellTurns(cmd)...)
	}
	fake := fakegemini.Start(clients.Script{Turns: turns})
	t.Cleanup(fake.Close)
	c := startEnv(t, root, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL})
	if _, err := c.Initialize(ctx, initParams(root, capsRich, nil)); err != nil {
		t.Fatal(err)
	}

	// The answers to give, in order, by the command asked about.
	var (
		mu      sync.Mutex
		asked   []string
		choices = map[string][]string{}
		answers = map[string]string{"touch a1": "always", "touch b1": "reject_always", "touch c1": "once"}
	)
	c.Handle("agentls/confirm", func(_ context.Context, params json.RawMessage) (any, error) {
		var d struct {
			Command string `json:"command"`
			Choices []struct {
				ID, Label, Covers string
			} `json:"choices"`
		}
		if err := json.Unmarshal(params, &d); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, d.Command)
		for _, ch := range d.Choices {
			choices[d.Command] = append(choices[d.Command], ch.ID+": "+ch.Label)
		}
		return map[string]any{"choice": answers[d.Command]}, nil
	})

	prompt := func(session, text string) promptResult {
		t.Helper()
		arg := map[string]any{"prompt": text}
		if session != "" {
			arg["session"] = session
		}
		var res promptResult
		if err := command(ctx, c, "agentls.prompt", arg, &res); err != nil {
			t.Fatalf("prompt %q: %v", text, err)
		}
		return res
	}
	a := prompt("", "first")
	prompt(a.Session, "second")
	b := prompt("", "in a new session")
	prompt(b.Session, "again in it")
	prompt(a.Session, "back in the first")
	cs := prompt("", "a third session")

	mu.Lock()
	defer mu.Unlock()
	// a2 and a3 ran on A's "always"; b2 was refused on B's "reject always" without a
	// question; c1 was asked: B's reject is B's.
	if want := []string{"touch a1", "touch b1", "touch c1"}; strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Errorf("asked about %q, want %q", asked, want)
	}
	for _, f := range []string{"a1", "a2", "a3", "c1"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v, want it made", f, err)
		}
	}
	for _, f := range []string{"b1", "b2"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was made: the session rejected touch always", f)
		}
	}
	want := []string{"once: Allow once", "always: Always allow touch for this session",
		"always_save: Always allow touch, and save it in your settings", "reject: Reject",
		"reject_always: Always reject touch for this session"}
	if got := choices["touch a1"]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("choices offered:\n  %q\nwant\n  %q", got, want)
	}
	if cs.Session == a.Session || cs.Session == b.Session {
		t.Fatalf("sessions %s %s %s are not three", a.Session, b.Session, cs.Session)
	}
}
