package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/workspace"
)

// patience bounds how long a test waits for something that must happen; reaching it
// means the scheduler is broken (a deadlock or a missing overlap), never slowness.
const patience = 20 * time.Second

const fakeSchema = `{"type":"object","properties":{
	"id":{"type":"string"},
	"paths":{"type":"array","items":{"type":"string"}},
	"command":{"type":"string"},
	"content":{"type":"string"}},"additionalProperties":false}`

type fakeArgs struct {
	ID      string   `json:"id"`
	Paths   []string `json:"paths"`
	Command string   `json:"command"`
	Content string   `json:"content"`
}

// fakeTool is a configurable tool for scheduler tests.
type fakeTool struct {
	name       string
	kind       Kind
	source     Source // SourceBuiltin when empty
	schema     string
	idempotent bool
	// confirm makes calls propose an edit that needs consent.
	confirm bool
	// modifiable and commander make invocations implement Modifiable and Commander.
	modifiable bool
	commander  bool
	// panicIn names a method that panics: Build, Describe, Confirmation or Execute.
	panicIn string
	// proposed, if set, is told of every Confirmation.
	proposed func(inv *fakeInv)
	// described, if set, runs in every Describe (while the call is being built).
	described func(inv *fakeInv)
	exec      func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error)
	// attempts counts Execute calls.
	attempts atomic.Int32
}

func (t *fakeTool) Info() Info {
	schema := t.schema
	if schema == "" {
		schema = fakeSchema
	}
	kind := t.kind
	if kind == "" {
		kind = KindOther
	}
	return Info{Name: t.name, Kind: kind, Source: cmp.Or(t.source, SourceBuiltin), Parameters: json.RawMessage(schema), Idempotent: t.idempotent}
}

func (t *fakeTool) Build(args json.RawMessage) (Invocation, error) {
	if t.panicIn == "Build" {
		panic("boom in Build")
	}
	var a fakeArgs
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, Errorf(ErrInvalidParams, "bad args: %v", err)
		}
	}
	if a.ID == "refuse" {
		return nil, Errorf(ErrPathNotInWorkspace, "refused by Build")
	}
	inv := &fakeInv{t: t, args: a}
	switch {
	case t.modifiable:
		return &modInv{inv}, nil
	case t.commander:
		return &cmdInv{inv}, nil
	}
	return inv, nil
}

type fakeInv struct {
	t    *fakeTool
	args fakeArgs
}

func (i *fakeInv) Capabilities() Capabilities { return Capabilities{} }

func (i *fakeInv) Describe() string {
	if i.t.panicIn == "Describe" {
		panic("boom in Describe")
	}
	if i.t.described != nil {
		i.t.described(i)
	}
	return fmt.Sprintf("%s %s", i.t.name, i.args.ID)
}

func (i *fakeInv) Locations() []Location {
	var locs []Location
	for _, p := range i.args.Paths {
		locs = append(locs, Location{Path: p})
	}
	return locs
}

func (i *fakeInv) Confirmation(context.Context) (*confirm.Details, error) {
	if i.t.panicIn == "Confirmation" {
		panic("boom in Confirmation")
	}
	if i.t.proposed != nil {
		i.t.proposed(i)
	}
	if !i.t.confirm {
		return nil, nil
	}
	return &confirm.Details{Type: confirm.TypeEdit, Title: i.Describe(), NewContent: i.args.Content}, nil
}

func (i *fakeInv) Execute(ctx context.Context, out io.Writer) (*Result, error) {
	i.t.attempts.Add(1)
	if i.t.panicIn == "Execute" {
		panic(errors.New("boom in Execute"))
	}
	if i.t.exec != nil {
		return i.t.exec(ctx, i, out)
	}
	return &Result{Output: "ran " + i.args.ID + " " + i.args.Content}, nil
}

type modInv struct{ *fakeInv }

func (m *modInv) Capabilities() Capabilities { return Capabilities{Modify: m.Modify} }

func (m *modInv) Modify(content string) error {
	if content == "invalid" {
		return errors.New("the edited content is not valid")
	}
	if p, ok := strings.CutPrefix(content, "move to:"); ok {
		// The person's version writes another file.
		m.args.Paths = []string{p}
	}
	m.args.Content = content
	return nil
}

type cmdInv struct{ *fakeInv }

func (c *cmdInv) Capabilities() Capabilities { return Capabilities{Command: c.args.Command} }

func (c *cmdInv) Command() string { return c.args.Command }

// fakePolicy decides by a function and records what it is told to remember.
type fakePolicy struct {
	decide func(confirm.Call) confirm.Verdict

	mu         sync.Mutex
	remembered []confirm.Outcome
}

func (p *fakePolicy) Decide(c confirm.Call) confirm.Verdict {
	if p.decide != nil {
		return p.decide(c)
	}
	if c.Details != nil {
		return confirm.Verdict{Decision: confirm.Ask}
	}
	return confirm.Verdict{Decision: confirm.Allow}
}

func (p *fakePolicy) Remember(_ confirm.Call, o confirm.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remembered = append(p.remembered, o)
}

func (p *fakePolicy) outcomes() []confirm.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.remembered)
}

type askerFunc func(ctx context.Context, req confirm.Request) (confirm.Answer, error)

func (f askerFunc) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	return f(ctx, req)
}

func answer(o confirm.Outcome) confirm.Asker {
	return askerFunc(func(context.Context, confirm.Request) (confirm.Answer, error) {
		return confirm.Answer{Outcome: o}, nil
	})
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// statuses returns the state changes of one call, in order.
func (r *recorder) statuses(id string) []Status {
	var out []Status
	for _, ev := range r.all() {
		if ev.CallID == id && ev.Status != "" {
			out = append(out, ev.Status)
		}
	}
	return out
}

func (r *recorder) has(id string, s Status) bool {
	return slices.Contains(r.statuses(id), s)
}

type testEnv struct {
	s      *Scheduler
	reg    *Registry
	policy *fakePolicy
	rec    *recorder
	log    *syncBuffer
	outDir string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newEnv makes a scheduler over tools; configure may change the options before it is
// built.
func newEnv(t *testing.T, configure func(*Options), tools ...Tool) *testEnv {
	t.Helper()
	env := &testEnv{policy: &fakePolicy{}, rec: &recorder{}, log: &syncBuffer{}, outDir: t.TempDir()}
	logger := slog.New(slog.NewTextHandler(env.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env.reg = NewRegistry(logger, Filter{})
	for _, tool := range tools {
		env.reg.Register(tool)
	}
	o := Options{Registry: env.reg, Policy: env.policy, Observe: env.rec.observe, OutputDir: env.outDir, Logger: logger}
	if configure != nil {
		configure(&o)
	}
	env.s = NewScheduler(o)
	env.s.retryBase = time.Millisecond
	return env
}

// countingLocker is path locks that count the sets held.
type countingLocker struct {
	locks workspace.PathLocks
	held  atomic.Int32
}

func (l *countingLocker) LockPaths(ctx context.Context, paths ...string) (func(), error) {
	unlock, err := l.locks.LockPaths(ctx, paths...)
	if err != nil {
		return nil, err
	}
	l.held.Add(1)
	var once sync.Once
	return func() { once.Do(func() { l.held.Add(-1); unlock() }) }, nil
}

func req(id, name, args string) Request {
	return Request{CallID: id, Name: name, Args: json.RawMessage(args)}
}

// waitFor polls cond until it holds; it is for states that have no event of their own.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

func wantStatus(t *testing.T, r CallResult, status Status, errType ErrorType, msgParts ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("call %s: status %s (%+v), want %s", r.CallID, r.Status, r.Error, status)
	}
	if errType == "" {
		if r.Error != nil {
			t.Fatalf("call %s: unexpected error %+v", r.CallID, r.Error)
		}
		return
	}
	if r.Error == nil || r.Error.Type != errType {
		t.Fatalf("call %s: error %+v, want type %s", r.CallID, r.Error, errType)
	}
	for _, p := range msgParts {
		if !strings.Contains(r.Error.Message, p) {
			t.Errorf("call %s: message %q lacks %q", r.CallID, r.Error.Message, p)
		}
	}
}

func TestSchedulerParallelBatch(t *testing.T) {
	const n = 4
	var arrived atomic.Int32
	all := make(chan struct{})
	tool := &fakeTool{name: "meet", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if arrived.Add(1) == n {
			close(all)
		}
		// Every call waits for all the others: only calls running at once get past.
		select {
		case <-all:
			return &Result{Output: inv.args.ID}, nil
		case <-time.After(patience):
			return nil, errors.New("the calls of the batch did not run at the same time")
		}
	}}
	env := newEnv(t, nil, tool)
	var reqs []Request
	for i := range n {
		reqs = append(reqs, req(fmt.Sprint("c", i), "meet", fmt.Sprintf(`{"id":"c%d"}`, i)))
	}
	results := env.s.Run(t.Context(), reqs)
	for i, r := range results {
		wantStatus(t, r, StatusSuccess, "")
		if r.Output != fmt.Sprint("c", i) {
			t.Errorf("result %d output %q", i, r.Output)
		}
	}
}

func TestSchedulerResultOrder(t *testing.T) {
	// Call i finishes only after call i+1 has: completion order is the reverse of the
	// request order.
	const n = 5
	done := make([]chan struct{}, n+1)
	for i := range done {
		done[i] = make(chan struct{})
	}
	close(done[n])
	tool := &fakeTool{name: "chain", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		i, err := strconv.Atoi(inv.args.ID)
		if err != nil {
			return &Result{Output: inv.args.ID}, nil
		}
		recv(t, "the next call", done[i+1])
		defer close(done[i])
		return &Result{Output: inv.args.ID}, nil
	}}
	env := newEnv(t, nil, tool)
	var reqs []Request
	for i := range n {
		reqs = append(reqs, req(fmt.Sprint("id-", i), "chain", fmt.Sprintf(`{"id":"%d"}`, i)))
	}
	reqs = append(reqs, req("", "chain", `{"id":"x"}`), req("", "chain", `{"id":"y"}`))
	results := env.s.Run(t.Context(), reqs)
	if len(results) != len(reqs) {
		t.Fatalf("%d results for %d requests", len(results), len(reqs))
	}
	for i := range n {
		if results[i].CallID != reqs[i].CallID || results[i].Output != fmt.Sprint(i) || results[i].Name != "chain" {
			t.Errorf("result %d = %+v", i, results[i])
		}
	}
	a, b := results[n].CallID, results[n+1].CallID
	if a == "" || b == "" || a == b {
		t.Errorf("made-up call ids %q and %q are not distinct", a, b)
	}
	if !env.rec.has(a, StatusSuccess) {
		t.Errorf("events do not use the made-up call id %q", a)
	}
}

func TestSchedulerWritersOfOneFile(t *testing.T) {
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	entered := make(chan string, 10)
	release := map[string]chan struct{}{}
	for _, id := range []string{"w1", "w2", "w3", "x1", "x2"} {
		release[id] = make(chan struct{})
	}
	var inA atomic.Int32
	writer := &fakeTool{name: "write", kind: KindEdit, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if slices.Contains(inv.args.Paths, fileA) && inA.Add(1) > 1 {
			return nil, errors.New("two writers of a.txt ran at once")
		}
		defer func() {
			if slices.Contains(inv.args.Paths, fileA) {
				inA.Add(-1)
			}
		}()
		entered <- inv.args.ID
		recv(t, "release of "+inv.args.ID, release[inv.args.ID])
		return &Result{Output: inv.args.ID}, nil
	}}
	locks := &countingLocker{}
	env := newEnv(t, func(o *Options) { o.Locks = locks }, writer)
	args := func(id string, paths ...string) string {
		b, _ := json.Marshal(fakeArgs{ID: id, Paths: paths})
		return string(b)
	}
	var results []CallResult
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		results = env.s.Run(t.Context(), []Request{
			req("w1", "write", args("w1", fileA)),
			req("w2", "write", args("w2", dir+"/./a.txt")), // the same file, written differently
			req("w3", "write", args("w3", fileB)),
		})
	}()
	// The writer of b.txt runs while the first writer of a.txt does.
	first := map[string]bool{recv(t, "a first writer", entered): true, recv(t, "a second writer", entered): true}
	if !first["w1"] || !first["w3"] {
		t.Fatalf("writers %v entered first; the first writer of a.txt should run beside the writer of b.txt", first)
	}
	holder, waiter := "w1", "w2"
	// The other writer of a.txt is provably waiting for the first...
	waitFor(t, "the second writer of a.txt to wait for the first", func() bool { return env.s.queued.Load() == 1 })
	select {
	case id := <-entered:
		t.Fatalf("%s entered while %s was writing the same file", id, holder)
	default:
	}
	// ...and runs once the first is done.
	close(release[holder])
	if got := recv(t, "the waiting writer", entered); got != waiter {
		t.Fatalf("%s entered, want %s", got, waiter)
	}
	close(release[waiter])
	close(release["w3"])
	<-finished
	for _, r := range results {
		wantStatus(t, r, StatusSuccess, "")
	}
	if n := locks.held.Load(); n != 0 {
		t.Errorf("%d sets of path locks left behind", n)
	}

	// Calls writing the same files listed in opposite orders do not deadlock.
	close(release["x1"])
	close(release["x2"])
	results = env.s.Run(t.Context(), []Request{
		req("x1", "write", args("x1", fileA, fileB)),
		req("x2", "write", args("x2", fileB, fileA)),
	})
	for _, r := range results {
		wantStatus(t, r, StatusSuccess, "")
	}
	<-entered
	<-entered
}

func TestSchedulerReadersDoNotLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	var arrived atomic.Int32
	both := make(chan struct{})
	reader := &fakeTool{name: "read", kind: KindRead, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if arrived.Add(1) == 2 {
			close(both)
		}
		recv(t, "both readers", both)
		return &Result{}, nil
	}}
	env := newEnv(t, nil, reader)
	a := fmt.Sprintf(`{"paths":[%q]}`, path)
	for _, r := range env.s.Run(t.Context(), []Request{req("r1", "read", a), req("r2", "read", a)}) {
		wantStatus(t, r, StatusSuccess, "")
	}
}

func TestSchedulerQueuesRuns(t *testing.T) {
	started := make(chan string, 3)
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	tool := &fakeTool{name: "step", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		mu.Lock()
		order = append(order, inv.args.ID)
		mu.Unlock()
		started <- inv.args.ID
		if inv.args.ID == "A" {
			recv(t, "release of A", release)
		}
		return &Result{Output: inv.args.ID}, nil
	}}
	env := newEnv(t, nil, tool)
	var wg sync.WaitGroup
	results := map[string]CallResult{}
	var rmu sync.Mutex
	run := func(id string) {
		wg.Go(func() {
			r := env.s.RunOne(t.Context(), req(id, "step", fmt.Sprintf(`{"id":%q}`, id)))
			rmu.Lock()
			results[id] = r
			rmu.Unlock()
		})
	}
	run("A")
	if got := recv(t, "A to start", started); got != "A" {
		t.Fatalf("%s started first", got)
	}
	run("B")
	waitFor(t, "B to queue", func() bool { return env.s.runs.waiting() == 1 })
	run("C")
	waitFor(t, "C to queue", func() bool { return env.s.runs.waiting() == 2 })
	select {
	case id := <-started:
		t.Fatalf("%s started while A was running", id)
	default:
	}
	if evs := env.rec.statuses("B"); len(evs) != 0 {
		t.Fatalf("B reported %v while queued", evs)
	}
	close(release)
	wg.Wait()
	if want := []string{"A", "B", "C"}; !slices.Equal(order, want) {
		t.Errorf("runs executed in order %v, want %v", order, want)
	}
	for id, r := range results {
		wantStatus(t, r, StatusSuccess, "")
		if r.Output != id {
			t.Errorf("run %s got output %q", id, r.Output)
		}
	}
	// A ended before B began.
	var seq []string
	for _, ev := range env.rec.all() {
		if ev.Status == StatusValidating || ev.Status.Terminal() {
			seq = append(seq, ev.CallID+":"+string(ev.Status))
		}
	}
	if want := []string{"A:validating", "A:success", "B:validating", "B:success", "C:validating", "C:success"}; !slices.Equal(seq, want) {
		t.Errorf("event order %v, want %v", seq, want)
	}
}

func TestSchedulerQueuedRunCancelled(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	tool := &fakeTool{name: "block", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if inv.args.ID == "A" {
			close(started)
			recv(t, "release", release)
		}
		return &Result{}, nil
	}}
	env := newEnv(t, nil, tool)
	doneA := make(chan CallResult)
	go func() { doneA <- env.s.RunOne(t.Context(), req("A", "block", `{"id":"A"}`)) }()
	recv(t, "A to start", started)
	ctx, cancel := context.WithCancel(t.Context())
	doneB := make(chan []CallResult)
	go func() { doneB <- env.s.Run(ctx, []Request{req("B1", "block", `{}`), req("B2", "block", `{}`)}) }()
	waitFor(t, "B to queue", func() bool { return env.s.runs.waiting() == 1 })
	cancel()
	for _, r := range recv(t, "B to give up", doneB) {
		wantStatus(t, r, StatusCancelled, ErrCancelled, "waiting for an earlier batch")
	}
	if env.s.runs.waiting() != 0 {
		t.Error("the cancelled run is still queued")
	}
	close(release)
	wantStatus(t, recv(t, "A", doneA), StatusSuccess, "")
	// The lock is free again.
	wantStatus(t, env.s.RunOne(t.Context(), req("D", "block", `{}`)), StatusSuccess, "")
}

func TestSchedulerCancelMidRun(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	pids := make(chan int, 1)
	var sawDone atomic.Bool
	sleeper := &fakeTool{name: "sleeper", kind: KindExecute, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		cmd := exec.CommandContext(ctx, "sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		pids <- cmd.Process.Pid
		err := cmd.Wait()
		if ctx.Err() != nil {
			sawDone.Store(true)
		}
		return nil, Errorf(ErrShellExecute, "sleep: %w", err)
	}}
	// Both writers hold the file until cancelled; the second waits for the first.
	holding := make(chan string, 2)
	writer := &fakeTool{name: "write", kind: KindEdit, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		holding <- inv.args.ID
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	asking := make(chan struct{})
	var askerSawDone atomic.Bool
	asker := askerFunc(func(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
		close(asking)
		<-ctx.Done()
		askerSawDone.Store(true)
		return confirm.Answer{}, ctx.Err()
	})
	confirmer := &fakeTool{name: "confirmed", confirm: true}
	env := newEnv(t, func(o *Options) { o.Asker = asker }, sleeper, writer, confirmer)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan []CallResult)
	go func() {
		done <- env.s.Run(ctx, []Request{
			req("sleep", "sleeper", `{}`),
			// Asked before the writers: questions come in request order, and the second
			// writer's comes only after the first writer has ended.
			req("ask", "confirmed", `{}`),
			req("hold", "write", fmt.Sprintf(`{"id":"hold","paths":[%q]}`, file)),
			req("wait", "write", fmt.Sprintf(`{"id":"wait","paths":[%q]}`, file)),
		})
	}()
	pid := recv(t, "the sleep process", pids)
	if holder := recv(t, "the first writer", holding); holder != "hold" {
		t.Fatalf("%s wrote first, want hold", holder)
	}
	recv(t, "the confirmation", asking)
	waitFor(t, "the second writer to queue", func() bool { return env.s.queued.Load() == 1 })
	cancel()
	results := recv(t, "the run to end", done)
	byID := map[string]CallResult{}
	for _, r := range results {
		byID[r.CallID] = r
	}
	wantStatus(t, byID["sleep"], StatusCancelled, ErrCancelled, "while it was running")
	wantStatus(t, byID["hold"], StatusCancelled, ErrCancelled, "while it was running")
	wantStatus(t, byID["wait"], StatusCancelled, ErrCancelled, "waiting for an earlier call writing the same file")
	wantStatus(t, byID["ask"], StatusCancelled, ErrCancelled, "waiting for approval")
	if !sawDone.Load() || !askerSawDone.Load() {
		t.Errorf("running tool saw ctx.Done: %v; asker saw it: %v", sawDone.Load(), askerSawDone.Load())
	}
	if n := len(holding); n != 0 {
		t.Errorf("the second writer ran")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("sleep process %d survived the cancellation (kill -0: %v)", pid, err)
	}
	for _, r := range results {
		ran := r.CallID == "sleep" || r.CallID == "hold"
		if got := env.rec.has(r.CallID, StatusExecuting); got != ran {
			t.Errorf("call %s: executing reported = %v, want %v", r.CallID, got, ran)
		}
	}
	// A cancelled context before the start cancels everything without running anything.
	before := sleeper.attempts.Load()
	for _, r := range env.s.Run(ctx, []Request{req("late", "sleeper", `{}`)}) {
		wantStatus(t, r, StatusCancelled, ErrCancelled, "before it started")
	}
	if sleeper.attempts.Load() != before {
		t.Error("a call ran after its context was cancelled")
	}
}

func TestSchedulerPanics(t *testing.T) {
	for _, method := range []string{"Build", "Describe", "Confirmation", "Execute"} {
		t.Run(method, func(t *testing.T) {
			bad := &fakeTool{name: "bad", panicIn: method}
			good := &fakeTool{name: "good"}
			env := newEnv(t, nil, bad, good)
			results := env.s.Run(t.Context(), []Request{req("b", "bad", `{}`), req("g", "good", `{"id":"g"}`)})
			wantStatus(t, results[0], StatusError, ErrUnhandledException, "boom in "+method, method)
			wantStatus(t, results[1], StatusSuccess, "")
			log := env.log.String()
			for _, want := range []string{"level=ERROR", "tool=bad", "method=" + method, "stack=", "goroutine"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}
	t.Run("observer and asker", func(t *testing.T) {
		asker := askerFunc(func(context.Context, confirm.Request) (confirm.Answer, error) { panic("asker boom") })
		env := newEnv(t, func(o *Options) {
			o.Asker = asker
			o.Observe = func(ev Event) {
				if ev.Status == StatusScheduled {
					panic("observer boom")
				}
			}
		}, &fakeTool{name: "c", confirm: true})
		r := env.s.RunOne(t.Context(), req("c", "c", `{}`))
		wantStatus(t, r, StatusCancelled, ErrCancelled, "asker boom")
		if log := env.log.String(); !strings.Contains(log, "observer boom") || !strings.Contains(log, "asker boom") {
			t.Errorf("panics not logged:\n%s", log)
		}
	})
}

func TestSchedulerUnknownTool(t *testing.T) {
	var tools []Tool
	for _, n := range []string{"read_file", "write_file", "run_shell_command", "glob"} {
		tools = append(tools, &fakeTool{name: n})
	}
	env := newEnv(t, nil, tools...)
	tests := []struct {
		name string
		want []string
		not  string
	}{
		{"read_fil", []string{`"read_fil" is not registered`, `Did you mean "read_file"`}, ""},
		{"run_shell", []string{`"run_shell_command"`}, ""},
		// A name like none: the closest names all the same, as Gemini CLI gives them.
		{"zzzzzzzzzz", []string{`"zzzzzzzzzz" is not registered`, `No tool has a similar name; did you mean one of "glob", "read_file" or "write_file"?`}, "Did you mean"},
		{"no_such_tool", []string{`did you mean one of "glob", "read_file" or "write_file"?`}, ""},
	}
	for _, tt := range tests {
		r := env.s.RunOne(t.Context(), req("u", tt.name, `{}`))
		wantStatus(t, r, StatusError, ErrNotRegistered, tt.want...)
		if tt.not != "" && strings.Contains(r.Error.Message, tt.not) {
			t.Errorf("message %q contains %q", r.Error.Message, tt.not)
		}
		if r.Name != tt.name || r.Output != r.Error.Message {
			t.Errorf("result %+v", r)
		}
	}
}

func TestSchedulerInvalidParams(t *testing.T) {
	strict := &fakeTool{name: "strict", schema: `{"type":"object","properties":{
		"path":{"type":"string"},"count":{"type":"integer","minimum":1}},
		"required":["path"],"additionalProperties":false}`}
	env := newEnv(t, nil, strict, &fakeTool{name: "builder"})
	r := env.s.RunOne(t.Context(), req("p", "strict", `{"count":"x","bogus":1}`))
	wantStatus(t, r, StatusError, ErrInvalidParams, `missing required parameter "path"`, `parameter "count"`, `unknown parameter "bogus"`)
	if strict.attempts.Load() != 0 {
		t.Error("invalid call executed")
	}
	// The validator is cached per tool; a re-registration with a new schema replaces it.
	wantStatus(t, env.s.RunOne(t.Context(), req("p", "strict", `{"path":"x","count":0}`)), StatusError, ErrInvalidParams, "minimum")
	env.reg.Register(&fakeTool{name: "strict", schema: `{"type":"object"}`})
	wantStatus(t, env.s.RunOne(t.Context(), req("p", "strict", `{"path":"x","count":0}`)), StatusSuccess, "")
	// Build's own refusal keeps its type.
	wantStatus(t, env.s.RunOne(t.Context(), req("b", "builder", `{"id":"refuse"}`)), StatusError, ErrPathNotInWorkspace, "refused by Build")
	// A schema that cannot compile is the tool's fault, reported clearly.
	env.reg.Register(&fakeTool{name: "broken", schema: `{"type":"object","properties":{"a":{"type":7}}}`})
	wantStatus(t, env.s.RunOne(t.Context(), req("x", "broken", `{}`)), StatusError, ErrExecutionFailed, "unusable parameter schema")
}

func TestSchedulerCommandRestriction(t *testing.T) {
	shell := &fakeTool{name: "run_shell_command", kind: KindExecute, commander: true}
	logger := slog.New(slog.DiscardHandler)
	reg := NewRegistry(logger, Filter{Core: []string{"run_shell_command(git status)"}})
	reg.Register(shell)
	s := NewScheduler(Options{Registry: reg, Policy: &fakePolicy{}, Logger: logger})
	wantStatus(t, s.RunOne(t.Context(), req("ok", "run_shell_command", `{"command":"git status --short"}`)), StatusSuccess, "")
	wantStatus(t, s.RunOne(t.Context(), req("no", "run_shell_command", `{"command":"git status; rm -rf x"}`)), StatusError, ErrPolicyViolation, `"rm -rf x"`)
	wantStatus(t, s.RunOne(t.Context(), req("sub", "run_shell_command", `{"command":"git status $(rm x)"}`)), StatusError, ErrPolicyViolation, "substitution")
	if n := shell.attempts.Load(); n != 1 {
		t.Errorf("shell ran %d times, want once", n)
	}
}

func TestSchedulerPolicyAndConfirmation(t *testing.T) {
	tests := []struct {
		name       string
		tool       *fakeTool
		decide     func(confirm.Call) confirm.Verdict
		nilPolicy  bool
		asker      confirm.Asker // nil: no asker
		status     Status
		errType    ErrorType
		msg        []string
		output     string
		remembered []confirm.Outcome
		asked      bool
	}{
		{name: "allow", tool: &fakeTool{name: "t"}, status: StatusSuccess, output: "ran x proposed"},
		{name: "deny", tool: &fakeTool{name: "t"},
			decide: func(confirm.Call) confirm.Verdict {
				return confirm.Verdict{Decision: confirm.Deny, Reason: "plan mode runs only read-only tools"}
			},
			status: StatusError, errType: ErrPolicyViolation, msg: []string{"plan mode runs only read-only tools"}},
		{name: "deny without reason", tool: &fakeTool{name: "t"},
			decide: func(confirm.Call) confirm.Verdict { return confirm.Verdict{Decision: confirm.Deny} },
			status: StatusError, errType: ErrPolicyViolation, msg: []string{"does not allow t"}},
		{name: "proceed once", tool: &fakeTool{name: "t", confirm: true}, asker: answer(confirm.ProceedOnce),
			status: StatusSuccess, output: "ran x proposed", asked: true},
		{name: "proceed always", tool: &fakeTool{name: "t", confirm: true}, asker: answer(confirm.ProceedAlways),
			status: StatusSuccess, remembered: []confirm.Outcome{confirm.ProceedAlways}, asked: true},
		{name: "proceed always tool", tool: &fakeTool{name: "t", confirm: true}, asker: answer(confirm.ProceedAlwaysTool),
			status: StatusSuccess, remembered: []confirm.Outcome{confirm.ProceedAlwaysTool}, asked: true},
		{name: "proceed always server", tool: &fakeTool{name: "t", confirm: true}, asker: answer(confirm.ProceedAlwaysServer),
			status: StatusSuccess, remembered: []confirm.Outcome{confirm.ProceedAlwaysServer}, asked: true},
		{name: "cancel", tool: &fakeTool{name: "t", confirm: true}, asker: answer(confirm.Cancel),
			status: StatusCancelled, errType: ErrCancelled, msg: []string{"declined"}, asked: true},
		{name: "unknown answer", tool: &fakeTool{name: "t", confirm: true}, asker: answer("sure"),
			status: StatusCancelled, errType: ErrCancelled, msg: []string{`"sure" is not an outcome`}, asked: true},
		{name: "asker error", tool: &fakeTool{name: "t", confirm: true},
			asker: askerFunc(func(context.Context, confirm.Request) (confirm.Answer, error) {
				return confirm.Answer{}, errors.New("editor went away")
			}),
			status: StatusCancelled, errType: ErrCancelled, msg: []string{"did not approve", "editor went away"}, asked: true},
		{name: "no asker", tool: &fakeTool{name: "t", confirm: true},
			status: StatusError, errType: ErrPolicyViolation, msg: []string{"needs approval", `"toolName": "t"`, "yolo"}},
		{name: "modify with editor", tool: &fakeTool{name: "t", confirm: true, modifiable: true},
			asker: askerFunc(func(context.Context, confirm.Request) (confirm.Answer, error) {
				return confirm.Answer{Outcome: confirm.ModifyWithEditor, Content: "edited by hand"}, nil
			}),
			status: StatusSuccess, output: "ran x edited by hand", asked: true},
		{name: "modify rejected", tool: &fakeTool{name: "t", confirm: true, modifiable: true},
			asker: askerFunc(func(context.Context, confirm.Request) (confirm.Answer, error) {
				return confirm.Answer{Outcome: confirm.ModifyWithEditor, Content: "invalid"}, nil
			}),
			status: StatusError, errType: ErrInvalidParams, msg: []string{"not valid"}, asked: true},
		{name: "modify on an unmodifiable call", tool: &fakeTool{name: "t", confirm: true},
			asker: answer(confirm.ModifyWithEditor), status: StatusSuccess, output: "ran x proposed", asked: true},
		{name: "ask without details", tool: &fakeTool{name: "t"},
			decide: func(confirm.Call) confirm.Verdict { return confirm.Verdict{Decision: confirm.Ask} },
			asker:  answer(confirm.ProceedOnce), status: StatusSuccess, asked: true},
		{name: "nil policy asks when there are details", tool: &fakeTool{name: "t", confirm: true}, nilPolicy: true,
			asker: answer(confirm.Cancel), status: StatusCancelled, errType: ErrCancelled, asked: true},
		{name: "nil policy allows without details", tool: &fakeTool{name: "t"}, nilPolicy: true,
			asker: answer(confirm.Cancel), status: StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asks []confirm.Request
			var asker confirm.Asker
			if tt.asker != nil {
				asker = askerFunc(func(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
					asks = append(asks, r)
					return tt.asker.Ask(ctx, r)
				})
			}
			var seen []confirm.Call
			env := newEnv(t, func(o *Options) {
				o.Asker = asker
				if tt.nilPolicy {
					o.Policy = nil
				}
			}, tt.tool)
			env.policy.decide = func(c confirm.Call) confirm.Verdict {
				seen = append(seen, c)
				if tt.decide != nil {
					return tt.decide(c)
				}
				return (&fakePolicy{}).Decide(c)
			}
			r := env.s.RunOne(t.Context(), req("call-1", "t", `{"id":"x","content":"proposed"}`))
			wantStatus(t, r, tt.status, tt.errType, tt.msg...)
			if tt.output != "" && r.Output != tt.output {
				t.Errorf("output %q, want %q", r.Output, tt.output)
			}
			executed := tt.tool.attempts.Load() > 0
			if executed != (tt.status == StatusSuccess) {
				t.Errorf("executed = %v with status %s", executed, r.Status)
			}
			if got := env.policy.outcomes(); !slices.Equal(got, tt.remembered) {
				t.Errorf("remembered %v, want %v", got, tt.remembered)
			}
			if (len(asks) > 0) != tt.asked {
				t.Fatalf("asked %d times, want asked = %v", len(asks), tt.asked)
			}
			if tt.asked {
				a := asks[0]
				if a.ToolCallID != "call-1" || a.ToolName != "t" || a.ID == "" || a.Details.Title == "" {
					t.Errorf("confirmation request %+v", a)
				}
			}
			if !tt.nilPolicy {
				if len(seen) != 1 || seen[0].Tool != "t" || string(seen[0].Args) != `{"id":"x","content":"proposed"}` ||
					(seen[0].Details != nil) != tt.tool.confirm {
					t.Errorf("policy saw %+v", seen)
				}
			}
		})
	}
}

func TestSchedulerConfirmationsOneAtATime(t *testing.T) {
	// Calls 0..3 need approval. While the person considers call 1, call 0, already
	// approved, runs; every question comes alone and in request order.
	ran0 := make(chan struct{})
	tool := &fakeTool{name: "c", confirm: true, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		if inv.args.ID == "0" {
			close(ran0)
		}
		return &Result{Output: inv.args.ID}, nil
	}}
	var active atomic.Int32
	var order []string
	var overlap atomic.Bool
	asker := askerFunc(func(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
		if active.Add(1) > 1 {
			overlap.Store(true)
		}
		defer active.Add(-1)
		order = append(order, r.ToolCallID)
		if r.ToolCallID == "1" {
			recv(t, "call 0 to run while call 1 is being asked about", ran0)
		}
		return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
	})
	env := newEnv(t, func(o *Options) { o.Asker = asker }, tool)
	var reqs []Request
	for i := range 4 {
		reqs = append(reqs, req(fmt.Sprint(i), "c", fmt.Sprintf(`{"id":"%d"}`, i)))
	}
	for _, r := range env.s.Run(t.Context(), reqs) {
		wantStatus(t, r, StatusSuccess, "")
	}
	if overlap.Load() {
		t.Error("confirmations overlapped")
	}
	if want := []string{"0", "1", "2", "3"}; !slices.Equal(order, want) {
		t.Errorf("asked in order %v, want %v", order, want)
	}
}

func TestSchedulerRetries(t *testing.T) {
	failing := func(errs ...error) func(context.Context, *fakeInv, io.Writer) (*Result, error) {
		var n atomic.Int32
		return func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
			i := int(n.Add(1)) - 1
			if i < len(errs) {
				return nil, errs[i]
			}
			return &Result{Output: "finally"}, nil
		}
	}
	network := Errorf(ErrNetwork, "connection reset")
	timeout := Errorf(ErrTimeout, "timed out")
	tests := []struct {
		name       string
		idempotent bool
		errs       []error
		attempts   int32
		status     Status
		errType    ErrorType
	}{
		{"idempotent recovers", true, []error{network, timeout}, 3, StatusSuccess, ""},
		{"idempotent gives up after 3 tries", true, []error{network, network, network, network}, 3, StatusError, ErrNetwork},
		{"not idempotent", false, []error{network}, 1, StatusError, ErrNetwork},
		{"not retryable", true, []error{Errorf(ErrFileNotFound, "gone")}, 1, StatusError, ErrFileNotFound},
		{"plain error", true, []error{errors.New("broke")}, 1, StatusError, ErrExecutionFailed},
		{"wrapped typed error", true, []error{fmt.Errorf("fetching: %w", timeout)}, 2, StatusSuccess, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &fakeTool{name: "flaky", idempotent: tt.idempotent, exec: failing(tt.errs...)}
			env := newEnv(t, nil, tool)
			r := env.s.RunOne(t.Context(), req("r", "flaky", `{}`))
			wantStatus(t, r, tt.status, tt.errType)
			if got := tool.attempts.Load(); got != tt.attempts {
				t.Errorf("%d attempts, want %d", got, tt.attempts)
			}
			if tt.status == StatusSuccess && r.Output != "finally" {
				t.Errorf("output %q", r.Output)
			}
		})
	}
	t.Run("cancelled during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		tool := &fakeTool{name: "flaky", idempotent: true, exec: func(context.Context, *fakeInv, io.Writer) (*Result, error) {
			go cancel()
			return nil, network
		}}
		env := newEnv(t, nil, tool)
		env.s.retryBase = time.Hour
		wantStatus(t, env.s.RunOne(ctx, req("r", "flaky", `{}`)), StatusCancelled, ErrCancelled)
		if got := tool.attempts.Load(); got != 1 {
			t.Errorf("%d attempts, want 1", got)
		}
	})
}

func TestSchedulerTruncation(t *testing.T) {
	// Multi-byte text, so that a byte-based cut would show.
	full := "HEAD" + strings.Repeat("é", 30_000) + strings.Repeat("ж\n", 10_000) + "TAIL"
	tool := &fakeTool{name: "big", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		switch inv.args.ID {
		case "exact":
			return &Result{Output: strings.Repeat("ü", MaxOutputChars)}, nil
		case "small":
			return &Result{Output: "small"}, nil
		case "own file":
			return &Result{Output: full, OutputFile: "/tool/own-output.log"}, nil
		}
		return &Result{Output: full}, nil
	}}
	env := newEnv(t, nil, tool)
	r := env.s.RunOne(t.Context(), req("../../odd id/..", "big", `{}`))
	wantStatus(t, r, StatusSuccess, "")
	if r.OutputFile == "" {
		t.Fatal("no output file")
	}
	if filepath.Dir(r.OutputFile) != env.outDir {
		t.Errorf("output file %s is not directly in %s", r.OutputFile, env.outDir)
	}
	saved, err := os.ReadFile(r.OutputFile)
	if err != nil || string(saved) != full {
		t.Fatalf("saved output differs from the full output (err %v, %d bytes)", err, len(saved))
	}
	head, _ := checkShortened(t, r.Output, full, r.OutputFile)

	for _, id := range []string{"exact", "small"} {
		r := env.s.RunOne(t.Context(), req(id, "big", fmt.Sprintf(`{"id":%q}`, id)))
		if r.OutputFile != "" || strings.Contains(r.Output, "cut here") {
			t.Errorf("%s output was shortened", id)
		}
	}
	// A tool that saved its complete output itself: that file is named, no other saved.
	r = env.s.RunOne(t.Context(), req("own", "big", `{"id":"own file"}`))
	if r.OutputFile != "/tool/own-output.log" {
		t.Errorf("output file %q, want the tool's", r.OutputFile)
	}
	checkShortened(t, r.Output, full, "the tool's complete output is saved in /tool/own-output.log")
	entries, _ := os.ReadDir(env.outDir)
	if len(entries) != 1 {
		t.Errorf("%d files in the output directory, want 1", len(entries))
	}

	// If the output directory cannot be made, the output is still shortened, and says so.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env2 := newEnv(t, func(o *Options) { o.OutputDir = filepath.Join(blocker, "sub") }, tool)
	r = env2.s.RunOne(t.Context(), req("x", "big", `{}`))
	if r.OutputFile != "" || !strings.Contains(r.Output, "could not be saved") || !strings.HasPrefix(r.Output, head[:1000]) {
		t.Errorf("unsaved shortening: file %q, marker present %v", r.OutputFile, strings.Contains(r.Output, "could not be saved"))
	}
}

// checkShortened checks that out is full shortened once, within MaxOutputChars: a head
// and a tail of full with a line between that counts the characters and lines cut
// truly, and mentions where. It returns the head and the tail.
func checkShortened(t *testing.T, out, full, where string) (head, tail string) {
	t.Helper()
	m := regexp.MustCompile(`\n\[\.\.\. (\d+) of (\d+) characters \(in (\d+) lines?\) cut here; ([^\n]*) \.\.\.\]\n`).FindStringSubmatchIndex(out)
	if m == nil {
		t.Fatalf("no marker line in the shortened output")
	}
	if strings.Count(out, "cut here") != 1 {
		t.Errorf("output cut more than once")
	}
	num := func(i int) int {
		v, err := strconv.Atoi(out[m[2*i]:m[2*i+1]])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	head, tail = out[:m[0]], out[m[1]:]
	if !strings.HasPrefix(full, head) || !strings.HasSuffix(full, tail) {
		t.Fatal("shortened output does not keep a head and a tail of the full output")
	}
	cut := full[len(head) : len(full)-len(tail)]
	wantLines := strings.Count(cut, "\n")
	if !strings.HasSuffix(cut, "\n") {
		wantLines++
	}
	if got, want := num(1), utf8.RuneCountInString(cut); got != want {
		t.Errorf("marker says %d characters cut, %d were", got, want)
	}
	if got, want := num(2), utf8.RuneCountInString(full); got != want {
		t.Errorf("marker says %d characters in all, there are %d", got, want)
	}
	if got := num(3); got != wantLines {
		t.Errorf("marker says %d lines cut, %d were", got, wantLines)
	}
	if !strings.Contains(out[m[8]:m[9]], where) {
		t.Errorf("marker %q does not say %q", out[m[0]:m[1]], where)
	}
	if n := utf8.RuneCountInString(out); n > MaxOutputChars {
		t.Errorf("shortened output is %d characters, more than %d", n, MaxOutputChars)
	}
	if h := utf8.RuneCountInString(head); h*4 > utf8.RuneCountInString(tail)+10 || h < MaxOutputChars/6 {
		t.Errorf("head of %d characters is not about a fifth of what is kept", h)
	}
	if !utf8.ValidString(out) {
		t.Error("shortened output is not valid UTF-8")
	}
	return head, tail
}

func TestSchedulerEvents(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	streamer := &fakeTool{name: "stream", kind: KindEdit, exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		for _, chunk := range []string{"hel", "lo\n", "\xe2\x82", "\xac!", "\xe2"} {
			if _, err := io.WriteString(out, chunk); err != nil {
				return nil, err
			}
		}
		return &Result{Output: "done", Summary: "streamed"}, nil
	}}
	confirmer := &fakeTool{name: "confirmed", confirm: true}
	denied := &fakeTool{name: "denied"}
	failing := &fakeTool{name: "failing", exec: func(context.Context, *fakeInv, io.Writer) (*Result, error) {
		return nil, Errorf(ErrFileNotFound, "no such file")
	}}
	env := newEnv(t, func(o *Options) { o.Asker = answer(confirm.ProceedOnce) }, streamer, confirmer, denied, failing)
	env.policy.decide = func(c confirm.Call) confirm.Verdict {
		switch {
		case c.Tool == "denied":
			return confirm.Verdict{Decision: confirm.Deny, Reason: "no"}
		case c.Details != nil:
			return confirm.Verdict{Decision: confirm.Ask}
		}
		return confirm.Verdict{Decision: confirm.Allow}
	}
	args := fmt.Sprintf(`{"id":"s","paths":[%q]}`, file)
	results := env.s.Run(t.Context(), []Request{
		req("s", "stream", args),
		req("c", "confirmed", `{"id":"c"}`),
		req("d", "denied", `{}`),
		req("f", "failing", `{}`),
		req("u", "unknown", `{}`),
		req("i", "stream", `{"bogus":1}`),
	})
	want := map[string][]Status{
		"s": {StatusValidating, StatusScheduled, StatusExecuting, StatusSuccess},
		"c": {StatusValidating, StatusScheduled, StatusAwaitingApproval, StatusExecuting, StatusSuccess},
		"d": {StatusValidating, StatusScheduled, StatusError},
		"f": {StatusValidating, StatusScheduled, StatusExecuting, StatusError},
		"u": {StatusValidating, StatusError},
		"i": {StatusValidating, StatusError},
	}
	byID := map[string]CallResult{}
	for _, r := range results {
		byID[r.CallID] = r
	}
	for id, w := range want {
		if got := env.rec.statuses(id); !slices.Equal(got, w) {
			t.Errorf("call %s: states %v, want %v", id, got, w)
		}
	}
	var output strings.Builder
	for _, ev := range env.rec.all() {
		switch {
		case ev.Status == "" && ev.CallID == "s":
			if !utf8.ValidString(ev.Output) && ev.Output != "\xe2" {
				t.Errorf("output chunk %q splits a character", ev.Output)
			}
			output.WriteString(ev.Output)
		case ev.Status == "":
			t.Errorf("unexpected output event %+v", ev)
		case ev.Status == StatusScheduled && ev.CallID == "s":
			if ev.Title != "stream s" || ev.Kind != KindEdit || len(ev.Locations) != 1 || ev.Locations[0].Path != file || string(ev.Args) != args {
				t.Errorf("scheduled event %+v", ev)
			}
		case ev.Status == StatusAwaitingApproval:
			if ev.Details == nil || ev.Details.Title != "confirmed c" {
				t.Errorf("awaiting event without details: %+v", ev)
			}
		case ev.Status == StatusValidating && ev.Title != "":
			t.Errorf("validating event already describes the call: %+v", ev)
		}
		if ev.Status.Terminal() {
			if ev.Result == nil || ev.Result.CallID != ev.CallID || !reflectEqualResult(*ev.Result, byID[ev.CallID]) {
				t.Errorf("terminal event of %s carries %+v, want %+v", ev.CallID, ev.Result, byID[ev.CallID])
			}
		} else if ev.Result != nil {
			t.Errorf("non-terminal event carries a result: %+v", ev)
		}
	}
	if got := output.String(); got != "hello\n€!\xe2" {
		t.Errorf("streamed output %q", got)
	}
	if r := byID["s"]; r.Summary != "streamed" || r.Output != "done" {
		t.Errorf("stream result %+v", r)
	}
	wantStatus(t, byID["f"], StatusError, ErrFileNotFound, "no such file")
}

func reflectEqualResult(a, b CallResult) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestSchedulerLateOutputRefused(t *testing.T) {
	leaked := make(chan io.Writer, 1)
	tool := &fakeTool{name: "leak", exec: func(ctx context.Context, inv *fakeInv, out io.Writer) (*Result, error) {
		leaked <- out
		return &Result{}, nil
	}}
	env := newEnv(t, nil, tool)
	wantStatus(t, env.s.RunOne(t.Context(), req("l", "leak", `{}`)), StatusSuccess, "")
	if _, err := io.WriteString(<-leaked, "late"); err == nil {
		t.Error("writing after the call ended succeeded")
	}
	for _, ev := range env.rec.all() {
		if ev.Output != "" {
			t.Errorf("late output published: %+v", ev)
		}
	}
}

// BenchmarkSchedulerRun times a batch through the scheduler, without tool metrics and
// with the two a session's scheduler records into (the session's and the process's).
func BenchmarkSchedulerRun(b *testing.B) {
	for _, bc := range []struct {
		n       int
		metrics int
	}{{1, 0}, {1, 2}, {10, 0}, {10, 2}} {
		n := bc.n
		b.Run(fmt.Sprintf("batch=%d/metrics=%d", n, bc.metrics), func(b *testing.B) {
			reg := NewRegistry(nil, Filter{})
			reg.Register(&fakeTool{name: "t"})
			var metrics []*Metrics
			for range bc.metrics {
				metrics = append(metrics, NewMetrics())
			}
			s := NewScheduler(Options{Registry: reg, Policy: &fakePolicy{}, Observe: func(Event) {}, Metrics: metrics})
			reqs := make([]Request, n)
			for i := range reqs {
				reqs[i] = req(fmt.Sprint(i), "t", `{"id":"x","paths":["/a","/b"]}`)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Run(b.Context(), reqs)
			}
		})
	}
}

// The policy engine of package confirm is what the scheduler is given in production.
var _ Policy = (*confirm.Policy)(nil)

func TestMarkUntrusted(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "<untrusted_context>\n\n</untrusted_context>"},
		{"hello\nworld", "<untrusted_context>\nhello\nworld\n</untrusted_context>"},
		{"a</untrusted_context>b", "<untrusted_context>\na&lt;/untrusted_context>b\n</untrusted_context>"},
		{"</Untrusted_Context>", "<untrusted_context>\n&lt;/Untrusted_Context>\n</untrusted_context>"},
		{"x</untrusted_contex", "<untrusted_context>\nx</untrusted_contex\n</untrusted_context>"},
		{"</untrusted_context></untrusted_context>", "<untrusted_context>\n&lt;/untrusted_context>&lt;/untrusted_context>\n</untrusted_context>"},
		{"<untrusted_context> opening tags stay", "<untrusted_context>\n<untrusted_context> opening tags stay\n</untrusted_context>"},
	}
	for _, c := range cases {
		got := MarkUntrusted(c.in)
		if got != c.want {
			t.Errorf("MarkUntrusted(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Count(strings.ToLower(got), "</untrusted_context>") != 1 || !strings.HasSuffix(got, "\n</untrusted_context>") {
			t.Errorf("MarkUntrusted(%q) can be closed early: %q", c.in, got)
		}
	}
}

// TestSchedulerMarksMCPOutput checks that the output of MCP tools reaches the model as
// untrusted context, while people see it as it is, and that built-in tools' output is
// left to the tools.
func TestSchedulerMarksMCPOutput(t *testing.T) {
	out := func(context.Context, *fakeInv, io.Writer) (*Result, error) {
		return &Result{Output: "server says </untrusted_context> hi"}, nil
	}
	mcp := &fakeTool{name: "mcp_srv_echo", source: SourceMCP, exec: out}
	builtin := &fakeTool{name: "echo", exec: out}
	env := newEnv(t, nil, mcp, builtin)
	cases := []struct {
		tool          string
		output, shown string
	}{
		{"mcp_srv_echo", "<untrusted_context>\nserver says &lt;/untrusted_context> hi\n</untrusted_context>", "server says </untrusted_context> hi"},
		{"echo", "server says </untrusted_context> hi", ""},
	}
	for _, c := range cases {
		r := env.s.RunOne(t.Context(), req("c-"+c.tool, c.tool, `{}`))
		wantStatus(t, r, StatusSuccess, "")
		if r.Output != c.output || r.Display != c.shown {
			t.Errorf("%s: output %q, display %q; want %q, %q", c.tool, r.Output, r.Display, c.output, c.shown)
		}
	}
}

// TestSchedulerAnnouncesInRequestOrder: the calls of a batch are built concurrently, but
// announced (StatusScheduled) in request order, also when a later call is built first;
// editors list a model turn's calls in that order.
func TestSchedulerAnnouncesInRequestOrder(t *testing.T) {
	lastBuilt := make(chan struct{})
	tool := &fakeTool{name: "slow", described: func(inv *fakeInv) {
		switch inv.args.ID {
		case "c0":
			// The first call is built only after the last one has been.
			select {
			case <-lastBuilt:
			case <-time.After(patience):
			}
		case "c2":
			close(lastBuilt)
		}
	}}
	env := newEnv(t, nil, tool)
	var reqs []Request
	for i := range 3 {
		reqs = append(reqs, req(fmt.Sprint("c", i), "slow", fmt.Sprintf(`{"id":"c%d"}`, i)))
	}
	for _, r := range env.s.Run(t.Context(), reqs) {
		wantStatus(t, r, StatusSuccess, "")
	}
	var order []string
	for _, ev := range env.rec.all() {
		if ev.Status == StatusScheduled {
			order = append(order, ev.CallID)
		}
	}
	if want := []string{"c0", "c1", "c2"}; !slices.Equal(order, want) {
		t.Errorf("announced %v, want %v", order, want)
	}
}
