package acp

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

// maxShownOutput bounds the live output a tool call's content shows: its end is kept.
const maxShownOutput = 64 << 10

// callView is what the client was shown of a running tool call.
type callView struct {
	// name is the tool's; executing is set once the call runs.
	name      string
	executing bool
	title     string
	// kind is the ACP kind the call was shown with.
	kind   sdk.ToolKind
	output strings.Builder
	// terminal is the id of the client's terminal the call runs in, if it does.
	terminal string
	// live, for a shell command shown as a terminal of its own (liveoutput.go), is
	// what that terminal was shown.
	live *liveTerminal
}

// observe maps the session's updates onto session/update notifications. It is called
// on the prompt's goroutine, and for tool calls on the scheduler's; the updates of one
// call come in order.
func (st *sessionState) observe(u session.Update) {
	if u.Session == "" {
		return // the workspace's: MCP status, the plan of no session
	}
	id := u.Session
	switch u.Kind {
	case session.UpdateMessage:
		up := sdk.UpdateAgentMessageText(u.Text)
		up.AgentMessageChunk.MessageId = messageID(u.MessageID)
		st.c.notify(id, up)
	case session.UpdateThought:
		up := sdk.UpdateAgentThoughtText(u.Text)
		up.AgentThoughtChunk.MessageId = messageID(u.MessageID)
		st.c.notify(id, up)
	case session.UpdateUserMessage:
		up := sdk.UpdateUserMessageText(u.Text)
		up.UserMessageChunk.MessageId = messageID(u.MessageID)
		st.c.notify(id, up)
	case session.UpdateInfo:
		st.c.notify(id, sdk.SessionUpdate{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{
			Title: sdk.Ptr(u.Title), UpdatedAt: sdk.Ptr(time.Now().UTC().Format(time.RFC3339))}})
	case session.UpdateUsage:
		if u.Usage != nil && u.Usage.PromptTokens > 0 {
			st.c.notify(id, sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{Used: u.Usage.PromptTokens, Size: u.Window}})
		}
	case session.UpdateCompression:
		st.c.notify(id, sdk.UpdateAgentThoughtText("["+u.Text+"]\n"))
	case session.UpdatePlan:
		entries := make([]sdk.PlanEntry, 0, len(u.Plan))
		for _, e := range u.Plan {
			entries = append(entries, sdk.PlanEntry{Content: e.Content, Priority: sdk.PlanEntryPriorityMedium, Status: planStatus(e.Status)})
		}
		st.c.notify(id, sdk.UpdatePlan(entries...))
	case session.UpdateToolCall:
		st.toolCall(id, *u.Call)
	case session.UpdateMode:
		st.modeChanged(u.Mode, true)
	}
}

// messageID is a chunk's message id, nil when it has none.
func messageID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// planStatus maps a todo's status onto the plan's; a cancelled todo shows as completed,
// the plan having no such state.
func planStatus(s string) sdk.PlanEntryStatus {
	switch s {
	case "in_progress":
		return sdk.PlanEntryStatusInProgress
	case "completed", "cancelled":
		return sdk.PlanEntryStatusCompleted
	}
	return sdk.PlanEntryStatusPending
}

// toolCall shows a tool call's event: tool_call for its first, tool_call_update for
// the rest (new title and arguments, status, live output, and at its end the result:
// the diff of an edit, else the text shown to people, and the whole result as
// rawOutput).
func (st *sessionState) toolCall(sessionID string, ev tools.Event) {
	if ev.Status == tools.StatusValidating {
		return // shown once scheduled, with its title, kind and arguments
	}
	id := sdk.ToolCallId(ev.CallID)
	if n := ev.Note; n != nil {
		// Where an approval was saved, or why not: shown on the call, before its
		// output replaces it.
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: id, Meta: parentMeta(ev.Parent),
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("agentls: " + n.Text))}}})
		return
	}
	st.mu.Lock()
	v, shown := st.calls[ev.CallID]
	if !shown {
		v = &callView{name: ev.Name, title: cmp.Or(ev.Title, ev.Name), kind: toolKind(ev.Kind)}
		if st.metaTerminal(ev.Name, ev.Args) {
			v.live = &liveTerminal{}
		}
		st.calls[ev.CallID] = v
	}
	if live := v.live; live != nil {
		st.liveCall(sessionID, ev, v, shown)
		return // st.mu unlocked
	}
	if ev.Status == tools.StatusExecuting {
		v.executing = true
	}
	if ev.Status.Terminal() {
		delete(st.calls, ev.CallID)
	}
	var output string
	if ev.Output != "" {
		v.output.WriteString(ev.Output)
		output = v.output.String()
		if len(output) > maxShownOutput {
			output = tail(output, maxShownOutput)
			if v.output.Len() > 2*maxShownOutput {
				// What is no longer shown is no longer kept.
				v.output.Reset()
				v.output.WriteString(output)
			}
			output = "…" + output
		}
	}
	retitled := shown && ev.Title != "" && ev.Title != v.title
	if retitled {
		v.title, v.kind = ev.Title, toolKind(ev.Kind)
	}
	streamed, terminal := v.output.Len() > 0, v.terminal
	switch {
	case ev.Status == tools.StatusExecuting && ev.Name == shellTool && st.caps.Terminal:
		// Before the call runs, on its goroutine: its Execute finds its id by its
		// arguments.
		st.executing[string(ev.Args)] = append(st.executing[string(ev.Args)], ev.CallID)
	case ev.Status.Terminal() && ev.Name == shellTool:
		st.forgetExecuting(ev.CallID, string(ev.Args))
	}
	st.mu.Unlock()

	if !shown {
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCall: firstShown(ev, v)})
		if ev.Status == tools.StatusScheduled {
			return
		}
	}
	up := &sdk.SessionToolCallUpdate{ToolCallId: id, Meta: parentMeta(ev.Parent)}
	if retitled {
		up.Title, up.Kind = sdk.Ptr(ev.Title), sdk.Ptr(toolKind(ev.Kind))
		up.Locations, up.RawInput = locations(ev.Locations), rawInput(ev.Args)
	}
	switch {
	case ev.Output != "":
		up.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(output))}
	case ev.Status == tools.StatusExecuting:
		up.Status = sdk.Ptr(sdk.ToolCallStatusInProgress)
	case ev.Status.Terminal():
		up.Status = sdk.Ptr(sdk.ToolCallStatusFailed)
		if ev.Status == tools.StatusSuccess {
			up.Status = sdk.Ptr(sdk.ToolCallStatusCompleted)
		}
		if r := ev.Result; r != nil {
			up.RawOutput = r
			up.Content = resultContent(*r, streamed || terminal != "")
		}
		if terminal != "" {
			// The terminal stays shown, with what it printed, once released.
			up.Content = append([]sdk.ToolCallContent{sdk.ToolTerminalRef(terminal)}, up.Content...)
		}
	case !retitled:
		return // nothing the client shows changed
	}
	st.c.notify(sessionID, sdk.SessionUpdate{ToolCallUpdate: up})
}

// firstShown is the tool_call that first shows the call of ev, pending, as v has it.
func firstShown(ev tools.Event, v *callView) *sdk.SessionUpdateToolCall {
	return &sdk.SessionUpdateToolCall{
		ToolCallId: sdk.ToolCallId(ev.CallID),
		Title:      v.title,
		Kind:       v.kind,
		Status:     sdk.ToolCallStatusPending,
		Locations:  locations(ev.Locations),
		RawInput:   rawInput(ev.Args),
		Meta:       parentMeta(ev.Parent),
	}
}

// liveCall shows a tool call's event for a shell command shown as a terminal of its
// own (liveoutput.go). st.mu is held; liveCall unlocks it.
func (st *sessionState) liveCall(sessionID string, ev tools.Event, v *callView, shown bool) {
	id := sdk.ToolCallId(ev.CallID)
	live := v.live
	var data, rest string
	switch {
	case ev.Output != "":
		data = live.take(ev.Output)
	case ev.Status.Terminal():
		rest = live.end(ev.Result)
	}
	st.mu.Unlock()
	if !shown {
		tc := firstShown(ev, v)
		tc.Content = []sdk.ToolCallContent{sdk.ToolTerminalRef(ev.CallID)}
		tc.Meta = withMeta(tc.Meta, "terminal_info", map[string]any{"terminal_id": ev.CallID, "cwd": st.terminalCwd(ev.Args)})
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCall: tc})
		if ev.Status == tools.StatusScheduled {
			return
		}
	}
	output := func(data string) {
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: id,
			Meta: withMeta(parentMeta(ev.Parent), "terminal_output", map[string]any{"terminal_id": ev.CallID, "data": data})}})
	}
	switch {
	case data != "":
		output(data)
	case ev.Status == tools.StatusExecuting:
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: id, Meta: parentMeta(ev.Parent),
			Status: sdk.Ptr(sdk.ToolCallStatusInProgress)}})
	case ev.Status.Terminal():
		if rest != "" {
			output(rest)
		}
		up := &sdk.SessionToolCallUpdate{ToolCallId: id, Status: sdk.Ptr(sdk.ToolCallStatusFailed),
			Content: []sdk.ToolCallContent{sdk.ToolTerminalRef(ev.CallID)},
			Meta:    withMeta(parentMeta(ev.Parent), "terminal_exit", exitMeta(ev.CallID, ev.Result))}
		if ev.Status == tools.StatusSuccess {
			up.Status = sdk.Ptr(sdk.ToolCallStatusCompleted)
		}
		if r := ev.Result; r != nil {
			up.RawOutput = r
			if r.Error != nil {
				up.Content = append(up.Content, sdk.ToolContent(sdk.TextBlock(string(r.Error.Type)+": "+r.Error.Message)))
			}
		}
		st.c.notify(sessionID, sdk.SessionUpdate{ToolCallUpdate: up})
	}
}

// parentMeta is the _meta of a call's updates: the call it runs within, when it runs
// within one (a sub-agent's call: its invoke_agent call), which ACP has no field for.
func parentMeta(parent string) map[string]any {
	if parent == "" {
		return nil
	}
	return map[string]any{"parentToolCallId": parent}
}

// resultContent is what the client shows of a call's result: the diff of an edit, the
// error of a failure, else the text for people (the output for the model when there
// is none, unless live output already showed it).
func resultContent(r tools.CallResult, streamed bool) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	if d := r.Diff; d != nil {
		out = append(out, sdk.ToolCallContent{Diff: &sdk.ToolCallContentDiff{Path: d.Path, OldText: d.OriginalContent, NewText: d.NewContent}})
	}
	text := r.Display
	switch {
	case r.Error != nil:
		text = string(r.Error.Type) + ": " + r.Error.Message
	case text == "" && r.Diff == nil && !streamed:
		text = r.Output
	}
	if len(text) > maxShownOutput {
		text = strings.ToValidUTF8(text[:maxShownOutput], "") + "…"
	}
	if text != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(text)))
	}
	if len(r.Hooks) > 0 {
		// What the user's hooks decided, first on the card.
		out = append([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.Join(r.Hooks, "\n")))}, out...)
	}
	return out
}

// tail returns the last n bytes of s or fewer, from the start of a character.
func tail(s string, n int) string {
	s = s[len(s)-n:]
	for i := range min(len(s), utf8.UTFMax) {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return strings.ToValidUTF8(s, "")
}

// toolKind maps a tool's kind onto the protocol's, whose names are the same.
func toolKind(k tools.Kind) sdk.ToolKind {
	if k == "" {
		return sdk.ToolKindOther
	}
	return sdk.ToolKind(k)
}

func locations(locs []tools.Location) []sdk.ToolCallLocation {
	var out []sdk.ToolCallLocation
	for _, l := range locs {
		loc := sdk.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			loc.Line = sdk.Ptr(l.Line)
		}
		out = append(out, loc)
	}
	return out
}

// rawInput is a call's arguments as a JSON value, nil when it has none.
func rawInput(args json.RawMessage) any {
	if len(args) == 0 || !json.Valid(args) {
		return nil
	}
	return args
}
