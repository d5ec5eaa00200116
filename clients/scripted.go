package clients

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"sync"
	"time"
)

// Scripted is a Client that replays a Script, one turn per Stream call, for demos and
// tests. It records the requests it was sent.
type Scripted struct {
	script Script

	mu       sync.Mutex
	next     int
	requests []Request
}

var _ Client = (*Scripted)(nil)

// NewScripted returns a client replaying s.
func NewScripted(s Script) *Scripted {
	return &Scripted{script: s}
}

// Model is the script's model name, "scripted" when it names none.
func (s *Scripted) Model() string { return cmp.Or(s.script.Model, "scripted") }

// ContextWindow is the script's context window, 1,048,576 when it gives none.
func (s *Scripted) ContextWindow() int { return cmp.Or(s.script.ContextWindow, 1_048_576) }

// Requests returns the requests received so far, in order.
func (s *Scripted) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of turns not yet replayed.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Turns) - s.next
}

// Stream replays the next turn. A script with no turn left fails the call.
func (s *Scripted) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		n := s.next
		if n < len(s.script.Turns) {
			s.next++
		}
		s.mu.Unlock()
		if n >= len(s.script.Turns) {
			yield(Chunk{}, fmt.Errorf("scripted model: the script has no turn left (it has %d turns, this is call %d)", len(s.script.Turns), n+1))
			return
		}
		t := s.script.Turns[n]
		delay := time.Duration(s.script.ChunkDelayMS) * time.Millisecond
		first := true
		send := func(c Chunk) bool {
			if !first && delay > 0 {
				timer := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					timer.Stop()
				case <-timer.C:
				}
			}
			first = false
			if err := ctx.Err(); err != nil {
				yield(Chunk{}, err)
				return false
			}
			return yield(c, nil)
		}
		if h := t.HTTPError; h != nil {
			yield(Chunk{}, &Error{StatusCode: h.Status, msg: fmt.Sprintf("scripted model: HTTP %d: %s", h.Status, h.Message)})
			return
		}
		if t.Thought != "" && !send(Chunk{Parts: []Part{{Text: t.Thought, Thought: true}}}) {
			return
		}
		for _, piece := range t.TextChunks() {
			if !send(Chunk{Parts: []Part{{Text: piece}}}) {
				return
			}
		}
		if t.Error != "" {
			if err := ctx.Err(); err != nil {
				yield(Chunk{}, err)
				return
			}
			yield(Chunk{}, fmt.Errorf("scripted model: %s", t.Error))
			return
		}
		if t.Cut {
			return
		}
		if t.Hang {
			<-ctx.Done()
			yield(Chunk{}, ctx.Err())
			return
		}
		last := Chunk{Usage: t.Usage, FinishReason: cmp.Or(t.FinishReason, FinishStop)}
		if t.Usage != nil {
			u := *t.Usage
			last.Usage = &u
		}
		for i, c := range t.Calls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call-%d-%d", n+1, i+1)
			}
			args := c.Args
			if len(args) == 0 {
				args = []byte("{}")
			}
			last.Parts = append(last.Parts, Part{FunctionCall: &FunctionCall{ID: id, Name: c.Name, Args: args}})
		}
		send(last)
	}
}
