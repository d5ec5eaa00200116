package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tools"
)

// UpdateUserMessage reports a prompt of the user's (Text). Prompts arrive from the front
// end that sent them, so only Replay makes these updates: front ends that show a stored
// session show its prompts with them.
const UpdateUserMessage UpdateKind = "user_message_chunk"

// Replay returns the session's conversation as the updates a front end would have
// received had it shown every prompt as it ran: the user's prompts, the model's text
// and thoughts, and each tool call (under the host's call id, with its title and kind
// as the workspace's tools describe it) with its outcome as the model received it. A
// front end that resumes a stored session shows it by playing these.
func (l *Live) Replay() []Update {
	return l.h.replay(l.id, l.sess.History(), l.sess.agentHistories())
}

// Replay returns the conversation of the session id as Live.Replay does: the live
// session's, or else the stored one's, read from the store without a model (a front
// end shows a stored session before it sends its next prompt).
func (h *Host) Replay(id string) ([]Update, error) {
	if l := h.get(id); l != nil {
		return l.Replay(), nil
	}
	if h.o.Store == nil {
		return nil, errors.New("sessions are not stored here")
	}
	st, err := h.o.Store.load(id, h.log)
	if err != nil {
		return nil, err
	}
	agents := make(map[string]agentRecord, len(st.agents))
	for _, a := range st.agents {
		agents[a.Call] = a
	}
	return h.replay(id, st.history, agents), nil
}

// replay makes the updates of the history of session id, with the calls described by
// the workspace's tools and under the host's call ids; the calls of its sub-agents
// (agents, by the call that ran them) follow the start of their invoke_agent call.
func (h *Host) replay(id string, history []clients.Content, agents map[string]agentRecord) []Update {
	reg := h.tb.Config().Registry
	out := replay(history, agents, func(fc clients.FunctionCall) (string, tools.Kind, []tools.Location) {
		t, ok := reg.Get(fc.Name)
		if !ok {
			return fc.Name, tools.KindOther, nil
		}
		kind := t.Info().Kind
		inv, err := t.Build(fc.Args)
		if err != nil {
			return fc.Name, kind, nil
		}
		return inv.Describe(), kind, inv.Locations()
	})
	for i := range out {
		out[i].Session = id
		if c := out[i].Call; c != nil {
			c.CallID = id + "/" + c.CallID
			if c.Parent != "" {
				c.Parent = id + "/" + c.Parent
			}
			if c.Result != nil {
				c.Result.CallID = c.CallID
			}
		}
	}
	return out
}

// describeFunc returns the title, kind and locations of a recorded call.
type describeFunc func(clients.FunctionCall) (title string, kind tools.Kind, locs []tools.Location)

// replay turns a session's record into updates. Calls are matched with their
// responses by id, else by name in order; a call without a response ends cancelled.
// A call that ran a sub-agent (in agents by its id) is followed by its sub-agent's
// calls, under the ids and with the parent they had live.
func replay(record []clients.Content, agents map[string]agentRecord, describe describeFunc) []Update {
	var out []Update
	// open are the calls of the last model turn that have no response yet.
	var open []*tools.Event
	seq := 0
	for n, c := range record {
		// Each content is a message: its text one, its thoughts another.
		text, thought := fmt.Sprintf("replayed-%d", n), fmt.Sprintf("replayed-%d-thought", n)
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				fc := *p.FunctionCall
				id := fc.ID
				if id == "" {
					seq++
					id = fmt.Sprintf("replayed-%d", seq)
				}
				title, kind, locs := describe(fc)
				ev := &tools.Event{CallID: id, Name: fc.Name, Status: tools.StatusScheduled,
					Title: title, Kind: kind, Locations: locs, Args: fc.Args}
				open = append(open, ev)
				started := *ev
				out = append(out, Update{Kind: UpdateToolCall, Call: &started})
				if a, ok := agents[fc.ID]; ok && fc.ID != "" {
					out = append(out, agentCalls(a, describe)...)
				}
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				i := matchCall(open, fr)
				if i < 0 {
					continue
				}
				ev := *open[i]
				open = append(open[:i], open[i+1:]...)
				ev.Status, ev.Result = responseStatus(fr)
				ev.Result.CallID, ev.Result.Name = ev.CallID, ev.Name
				out = append(out, Update{Kind: UpdateToolCall, Call: &ev})
			case p.Text == "":
			case c.Role == clients.RoleUser:
				out = append(out, Update{Kind: UpdateUserMessage, Text: p.Text, MessageID: text})
			case p.Thought:
				out = append(out, Update{Kind: UpdateThought, Text: p.Text, MessageID: thought})
			default:
				out = append(out, Update{Kind: UpdateMessage, Text: p.Text, MessageID: text})
			}
		}
	}
	for _, ev := range open {
		ended := *ev
		ended.Status = tools.StatusCancelled
		ended.Result = &tools.CallResult{CallID: ev.CallID, Name: ev.Name, Status: tools.StatusCancelled,
			Error: &tools.ErrorInfo{Type: tools.ErrCancelled, Message: "the session ended before the call finished."}}
		out = append(out, Update{Kind: UpdateToolCall, Call: &ended})
	}
	return out
}

// agentCalls returns the updates of the calls of a sub-agent's conversation: only its
// calls, since its text was its parent call's live output.
func agentCalls(a agentRecord, describe describeFunc) []Update {
	var out []Update
	for _, u := range replay(a.History, nil, describe) {
		if u.Call == nil {
			continue
		}
		c := *u.Call
		c.CallID, c.Parent = a.Prefix+c.CallID, a.Call
		if c.Result != nil {
			r := *c.Result
			r.CallID = c.CallID
			c.Result = &r
		}
		out = append(out, Update{Kind: UpdateToolCall, Call: &c})
	}
	return out
}

// matchCall returns the index in open of the call fr answers, or -1.
func matchCall(open []*tools.Event, fr *clients.FunctionResponse) int {
	for i, ev := range open {
		if fr.ID != "" && ev.CallID == fr.ID {
			return i
		}
	}
	for i, ev := range open {
		if ev.Name == fr.Name {
			return i
		}
	}
	return -1
}

// responseStatus reads a function response as responseTo wrote it: {"output": …} on
// success, {"error": "<type>: message"} otherwise.
func responseStatus(fr *clients.FunctionResponse) (tools.Status, *tools.CallResult) {
	if out, ok := fr.Response["output"]; ok {
		return tools.StatusSuccess, &tools.CallResult{Status: tools.StatusSuccess, Output: valueText(out)}
	}
	msg := valueText(fr.Response["error"])
	typ, rest, ok := strings.Cut(msg, ": ")
	info := &tools.ErrorInfo{Message: msg}
	if ok && !strings.ContainsAny(typ, " \n") {
		info = &tools.ErrorInfo{Type: tools.ErrorType(typ), Message: rest}
	}
	status := tools.StatusError
	if info.Type == tools.ErrCancelled {
		status = tools.StatusCancelled
	}
	return status, &tools.CallResult{Status: status, Error: info}
}

// valueText returns v as text: itself when it is a string, else its JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
