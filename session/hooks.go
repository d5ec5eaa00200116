package session

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/hooks"
	"github.com/agentls/agentls/tools"
)

// The user's hooks (package hooks) fire at these moments of a session:
//
//   - SessionStart before the first prompt a Session runs (source "startup" for a new
//     session, "resume" for one resumed from the store); its additionalContext goes
//     before that prompt's text.
//   - BeforeAgent before each prompt reaches the history: "deny" (or exit status 2)
//     drops the prompt, continue: false keeps it and ends the turn, additionalContext
//     goes after its text.
//   - BeforeToolSelection and BeforeModel before each model request: the first may
//     narrow the tools offered or require calls (toolConfig: mode NONE or ANY,
//     allowedFunctionNames); the
//     second may block the request or answer it in the model's place (llm_response).
//   - AfterModel after each model response (the whole response, not each chunk: its
//     text is shown once the hooks answered); it may replace the response's text,
//     block it or stop the agent.
//   - BeforeTool and AfterTool around each tool call (tools.ToolHooks, through the
//     session's scheduler).
//   - AfterAgent when the model answers without calling tools: "deny" sends its
//     reason back as the next prompt, continue: false ends the turn, clearContext
//     empties the history the model is sent.
//   - PreCompress before the history is compressed (trigger "auto").
//   - Notification when a tool call waits for the person's consent (ToolPermission),
//     without delaying the question.
//   - SessionEnd when the host lets the session go or closes.
//
// What the hooks say for people (system messages, failures, decisions) reaches the
// session's update stream as a message between brackets, or on the tool call.

// hookCall returns the hooks.Call of event fields for the session.
func (s *Session) hookCall(target string, fields map[string]any) hooks.Call {
	c := hooks.Call{SessionID: s.id, Target: target, Fields: fields}
	if s.store != nil {
		c.TranscriptPath = s.store.path(s.id)
	}
	return c
}

// fire runs the hooks of e for target with fields, tells the person what they said,
// and returns what they decided; nothing runs when e has no hooks.
func (s *Session) fire(ctx context.Context, e hooks.Event, target string, fields map[string]any) hooks.Outcome {
	r := s.hookRunner()
	if !r.Has(e) {
		return hooks.Outcome{}
	}
	out := r.Run(ctx, e, s.hookCall(target, fields))
	s.tellHooks(out.Notes)
	return out
}

// hookRunner returns the hooks in force.
func (s *Session) hookRunner() *hooks.Runner {
	if s.hooks == nil {
		return nil
	}
	return s.hooks()
}

// tellHooks shows notes of hooks to the person, one bracketed line each.
func (s *Session) tellHooks(notes []string) {
	if len(notes) == 0 {
		return
	}
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "\n[agentls: %s]\n", n)
	}
	s.emit(Update{Kind: UpdateMessage, Text: b.String()})
}

// hookContext wraps context hooks added for the model, as Gemini CLI does.
func hookContext(text string) string { return "<hook_context>" + text + "</hook_context>" }

// hookMessage is a message of an llm_request: its role and text.
type hookMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// llmRequest is the request of a model call in Gemini CLI's stable form for hooks:
// the text of each message, with the system instruction first.
func (s *Session) llmRequest(req clients.Request) map[string]any {
	msgs := []hookMessage{{Role: "system", Content: req.System}}
	for _, c := range req.History {
		var b strings.Builder
		for _, p := range c.Parts {
			if !p.Thought {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			msgs = append(msgs, hookMessage{Role: c.Role, Content: b.String()})
		}
	}
	names := make([]string, len(req.Tools))
	for i, d := range req.Tools {
		names[i] = d.Name
	}
	return map[string]any{
		"model":      cmp.Or(req.Model, s.client.Model()),
		"messages":   msgs,
		"config":     map[string]any{},
		"toolConfig": map[string]any{"mode": toolMode(req), "allowedFunctionNames": names},
	}
}

// applyLLMRequest applies the llm_request of BeforeModel hooks to req, each hook's
// after the one before: its model and its config's sampling settings (temperature,
// topP, topK, maxOutputTokens, stopSequences). Its messages are not applied (the
// history is kept as it is: hooks see only its text) and are named in the notes
// returned when they differ from sent, what the hooks were sent; so is an llm_request
// that cannot be read.
func applyLLMRequest(req clients.Request, sent []hookMessage, specific []map[string]json.RawMessage) (clients.Request, []string) {
	var notes []string
	for _, sp := range specific {
		raw, ok := sp["llm_request"]
		if !ok {
			continue
		}
		var lr struct {
			Model    string           `json:"model"`
			Config   clients.Sampling `json:"config"`
			Messages []hookMessage    `json:"messages"`
		}
		if err := json.Unmarshal(raw, &lr); err != nil {
			notes = append(notes, fmt.Sprintf("a BeforeModel hook's llm_request is not usable (%v); ignored", err))
			continue
		}
		if lr.Model != "" {
			req.Model = lr.Model
		}
		c := lr.Config
		if c.Temperature != nil || c.TopP != nil || c.TopK != nil || c.MaxOutputTokens != nil || c.StopSequences != nil {
			var merged clients.Sampling
			if req.Sampling != nil {
				merged = *req.Sampling
			}
			merged.Temperature = cmp.Or(c.Temperature, merged.Temperature)
			merged.TopP = cmp.Or(c.TopP, merged.TopP)
			merged.TopK = cmp.Or(c.TopK, merged.TopK)
			merged.MaxOutputTokens = cmp.Or(c.MaxOutputTokens, merged.MaxOutputTokens)
			if c.StopSequences != nil {
				merged.StopSequences = c.StopSequences
			}
			req.Sampling = &merged
		}
		if lr.Messages != nil && !slices.Equal(lr.Messages, sent) {
			notes = append(notes, "a BeforeModel hook's llm_request.messages are not applied: agentls sends the conversation as it is (hooks see its text only)")
		}
	}
	return req, notes
}

// toolMode is req's function calling mode as Gemini's toolConfig names it.
func toolMode(req clients.Request) string {
	switch {
	case len(req.Tools) == 0:
		return "NONE"
	case req.ToolsRequired:
		return "ANY"
	}
	return "AUTO"
}

// llmResponse is a model response in Gemini CLI's stable form for hooks.
func llmResponse(c clients.Content, finish string, usage *clients.Usage) map[string]any {
	parts := []string{}
	for _, p := range c.Parts {
		if p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	total := 0
	if usage != nil {
		total = usage.TotalTokens
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": finish,
		}},
		"usageMetadata": map[string]any{"totalTokenCount": total},
	}
}

// hookResponse reads the text of an llm_response a hook gave (candidates[0]'s parts:
// strings, or objects with text); ok is false when there is none.
func hookResponse(specific []map[string]json.RawMessage) (text string, ok bool) {
	for _, sp := range slices.Backward(specific) {
		raw, found := sp["llm_response"]
		if !found {
			continue
		}
		var resp struct {
			Candidates []struct {
				Content struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Candidates) == 0 {
			continue
		}
		var b strings.Builder
		for _, p := range resp.Candidates[0].Content.Parts {
			var s string
			if json.Unmarshal(p, &s) == nil {
				b.WriteString(s)
				continue
			}
			var obj struct{ Text string }
			if json.Unmarshal(p, &obj) == nil {
				b.WriteString(obj.Text)
			}
		}
		return b.String(), true
	}
	return "", false
}

// selectTools applies the BeforeToolSelection hooks' toolConfig to the tools offered:
// mode NONE (which wins) offers none, allowedFunctionNames (of every hook, together)
// only those, mode ANY has the model answer with calls only (required). It returns the
// tools to offer, whether calls are required, and a note for what it cannot use.
func selectTools(decls []clients.Declaration, specific []map[string]json.RawMessage) (offered []clients.Declaration, required bool, note string) {
	var allowed []string
	restricted, none := false, false
	for _, sp := range specific {
		raw, ok := sp["toolConfig"]
		if !ok {
			continue
		}
		var tc struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		}
		if err := json.Unmarshal(raw, &tc); err != nil {
			note = fmt.Sprintf("a BeforeToolSelection hook's toolConfig is not usable (%v); ignored", err)
			continue
		}
		switch strings.ToUpper(tc.Mode) {
		case "NONE":
			none = true
		case "ANY":
			required = true
		}
		if tc.AllowedFunctionNames != nil {
			restricted = true
			allowed = append(allowed, tc.AllowedFunctionNames...)
		}
	}
	if restricted {
		decls = slices.DeleteFunc(slices.Clone(decls), func(d clients.Declaration) bool { return !slices.Contains(allowed, d.Name) })
	}
	if none || len(decls) == 0 {
		return nil, false, note
	}
	return decls, required, note
}

// toolHooks are the session's BeforeTool and AfterTool hooks, for its schedulers and
// those of its sub-agents.
type toolHooks struct{ l *Live }

func (h toolHooks) runner() *hooks.Runner { return h.l.h.tb.Config().Hooks }

// call returns the hooks.Call of a tool call.
func (h toolHooks) call(c tools.HookedCall, fields map[string]any) hooks.Call {
	fields["tool_name"] = c.Name
	fields["tool_input"] = json.RawMessage(cmpArgs(c.Args))
	if c.Server != "" {
		fields["mcp_context"] = map[string]any{"server_name": c.Server}
	}
	return h.l.sess.hookCall(c.Name, fields)
}

func cmpArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// BeforeTool implements tools.ToolHooks.
func (h toolHooks) BeforeTool(ctx context.Context, c tools.HookedCall) tools.BeforeVerdict {
	r := h.runner()
	if !r.Has(hooks.BeforeTool) {
		return tools.BeforeVerdict{}
	}
	out := r.Run(ctx, hooks.BeforeTool, h.call(c, map[string]any{}))
	return tools.BeforeVerdict{Deny: out.Deny, Reason: out.Reason, Stop: out.Stop, StopReason: out.StopReason,
		Args: out.ToolInput, Context: out.Context, Notes: out.Notes}
}

// AfterTool implements tools.ToolHooks.
func (h toolHooks) AfterTool(ctx context.Context, c tools.HookedCall, res tools.CallResult) tools.AfterVerdict {
	r := h.runner()
	if !r.Has(hooks.AfterTool) {
		return tools.AfterVerdict{}
	}
	resp := map[string]any{"llmContent": res.Output, "returnDisplay": res.Shown()}
	if res.Error != nil {
		resp["error"] = res.Error
	}
	out := r.Run(ctx, hooks.AfterTool, h.call(c, map[string]any{"tool_response": resp}))
	tail, notes := tailCall(out.Specific)
	return tools.AfterVerdict{Deny: out.Deny, Reason: out.Reason, Stop: out.Stop, StopReason: out.StopReason,
		Context: out.Context, Tail: tail, Notes: append(out.Notes, notes...)}
}

// tailCall returns the call the AfterTool hooks chained (hookSpecificOutput's
// tailToolCallRequest, {name, args}): the first hook's that asked for one. A request
// without a tool's name, or a second one, is left out with a note saying so.
func tailCall(specific []map[string]json.RawMessage) (*tools.TailCall, []string) {
	var tail *tools.TailCall
	var notes []string
	for _, sp := range specific {
		raw, ok := sp["tailToolCallRequest"]
		if !ok || string(raw) == "null" {
			continue
		}
		var req struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		switch err := json.Unmarshal(raw, &req); {
		case err != nil || req.Name == "":
			notes = append(notes, "AfterTool hooks: a tailToolCallRequest without a tool's name was ignored")
		case tail != nil:
			notes = append(notes, fmt.Sprintf("AfterTool hooks: a second tailToolCallRequest (%s) was ignored", req.Name))
		default:
			tail = &tools.TailCall{Name: req.Name, Args: req.Args}
		}
	}
	return tail, notes
}

// notifyingAsker fires the Notification hooks (ToolPermission) as a call waits for the
// person's consent, then asks.
type notifyingAsker struct {
	l     *Live
	asker confirm.Asker
}

func (a notifyingAsker) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	if r := a.l.h.tb.Config().Hooks; r.Has(hooks.Notification) {
		details := map[string]any{"tool_name": req.ToolName, "title": req.Details.Title}
		msg := fmt.Sprintf("%s needs your permission: %s", req.ToolName, req.Details.Title)
		a.l.h.hookWork.Go(func() {
			// Advisory: the question is not held up, and the hooks outlive it.
			out := r.Run(a.l.h.hookCtx, hooks.Notification, a.l.sess.hookCall("ToolPermission",
				map[string]any{"notification_type": "ToolPermission", "message": msg, "details": details}))
			a.l.sess.tellHooks(out.Notes)
		})
	}
	return a.asker.Ask(ctx, req)
}

// hookStop ends a prompt because a hook said so.
type hookStop struct{ reason StopReason }

// modelTurn runs one model request with the hooks around it: BeforeToolSelection and
// BeforeModel before it, AfterModel after it. A nil hookStop means the response is
// out; otherwise a hook ended the prompt, for the stop reason it gives, and the person
// was told why.
func (s *Session) modelTurn(ctx context.Context, req clients.Request, p *promptState) (streamed, *hookStop) {
	r := s.hookRunner()
	if r.Has(hooks.BeforeToolSelection) && len(req.Tools) > 0 {
		sel := s.fire(ctx, hooks.BeforeToolSelection, "", map[string]any{"llm_request": s.llmRequest(req)})
		var note string
		req.Tools, req.ToolsRequired, note = selectTools(req.Tools, sel.Specific)
		if note != "" {
			s.tellHooks([]string{note})
		}
	}
	if r.Has(hooks.BeforeModel) {
		sent := s.llmRequest(req)
		before := s.fire(ctx, hooks.BeforeModel, "", map[string]any{"llm_request": sent})
		switch {
		case before.Deny:
			s.tellHooks([]string{"a BeforeModel hook blocked the model request: " + before.Reason})
			return streamed{}, &hookStop{StopRefusal}
		case before.Stop:
			s.tellHooks([]string{"a BeforeModel hook ended the turn: " + before.StopReason})
			return streamed{}, &hookStop{StopEndTurn}
		}
		if text, ok := hookResponse(before.Specific); ok {
			// The hook answered in the model's place: no request is made.
			s.emit(Update{Kind: UpdateMessage, Text: text})
			return streamed{content: clients.Content{Role: clients.RoleModel, Parts: []clients.Part{{Text: text}}}, finish: "STOP"}, nil
		}
		var notes []string
		req, notes = applyLLMRequest(req, sent["messages"].([]hookMessage), before.Specific)
		s.tellHooks(notes)
	}
	hold := r.Has(hooks.AfterModel)
	out := s.stream(ctx, req, &p.loops, hold)
	if overflowed(ctx, out) && s.compress(ctx, p, true) {
		// The estimate missed: the model's tokenizer counts otherwise, or the
		// session was resumed. Once only: a request still too large fails.
		s.mu.Lock()
		req.History = s.curated.of(s.hist, s.histGen)
		s.mu.Unlock()
		out = s.stream(ctx, req, &p.loops, hold)
	}
	if !hold || out.err != nil {
		return out, nil
	}
	after := s.fire(ctx, hooks.AfterModel, "", map[string]any{
		"llm_request": s.llmRequest(req), "llm_response": llmResponse(out.content, out.finish, out.usage)})
	switch {
	case after.Deny:
		s.tellHooks([]string{"an AfterModel hook blocked the model's response: " + after.Reason})
		return streamed{}, &hookStop{StopRefusal}
	}
	if text, ok := hookResponse(after.Specific); ok {
		out.content = replaceText(out.content, text)
	}
	for _, part := range out.content.Parts {
		switch {
		case part.Thought && part.Text != "":
			s.emit(Update{Kind: UpdateThought, Text: part.Text})
		case !part.Thought && part.Text != "":
			s.emit(Update{Kind: UpdateMessage, Text: part.Text})
		}
	}
	if after.Stop {
		if len(out.content.Parts) > 0 {
			s.add(out.content)
		}
		s.answerNotRun(out.content, tools.ErrCancelled, "an AfterModel hook stopped the agent before the call ran.")
		s.tellHooks([]string{"an AfterModel hook ended the turn: " + after.StopReason})
		return streamed{}, &hookStop{StopEndTurn}
	}
	return out, nil
}

// replaceText returns c with its answer text replaced by text: the first text part
// (keeping its thought signature) holds it, the other text parts go; thoughts and
// function calls stay.
func replaceText(c clients.Content, text string) clients.Content {
	out := clients.Content{Role: c.Role}
	placed := false
	for _, p := range c.Parts {
		if p.Thought || p.Text == "" && p.FunctionCall == nil {
			out.Parts = append(out.Parts, p)
			continue
		}
		if p.FunctionCall != nil {
			out.Parts = append(out.Parts, p)
			continue
		}
		if !placed {
			placed = true
			// Raw is what the model sent, which the text no longer is.
			out.Parts = append(out.Parts, clients.Part{Text: text, ThoughtSignature: p.ThoughtSignature})
		}
	}
	if !placed && text != "" {
		out.Parts = append([]clients.Part{{Text: text}}, out.Parts...)
	}
	return out
}

// afterAgent runs the AfterAgent hooks on the model's final answer and reports whether
// the model goes back to work: a hook denied the answer, and its reason was added to
// the history as the next prompt.
func (s *Session) afterAgent(ctx context.Context, prompt, answer string, retried bool) bool {
	out := s.fire(ctx, hooks.AfterAgent, "", map[string]any{"prompt": prompt, "prompt_response": answer, "stop_hook_active": retried})
	for _, sp := range out.Specific {
		var clear bool
		if raw, ok := sp["clearContext"]; ok && json.Unmarshal(raw, &clear) == nil && clear {
			// The model forgets the conversation; the record keeps it.
			s.mu.Lock()
			s.hist = nil
			s.histGen++
			s.mu.Unlock()
			s.lastPrompt, s.added = 0, 0
			s.tellHooks([]string{"an AfterAgent hook cleared the conversation the model is sent"})
			break
		}
	}
	switch {
	case out.Stop:
		return false
	case out.Deny:
		s.add(clients.Content{Role: clients.RoleUser, Parts: []clients.Part{{Text: out.Reason}}})
		return true
	}
	return false
}
