package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/session"
)

// maxContextFile bounds the text of a file a prompt's resource link brings in.
const maxContextFile = 1 << 20

// Prompt runs one prompt of the session to its end and answers with its stop reason.
// The session's updates stream as session/update notifications meanwhile, all sent
// before the answer. session/cancel ends it with stopReason cancelled.
func (c *conn) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	st, err := c.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	parts, images, err := st.promptText(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text := parts.text + parts.files
	if answer, ok, err := st.runBuiltin(ctx, parts.typed); ok {
		if err != nil {
			return sdk.PromptResponse{}, err
		}
		c.log.Info("session/prompt: builtin command", "session", st.id, "command", strings.Fields(parts.typed)[0])
		c.notify(st.id, sdk.UpdateAgentMessageText(answer))
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	// A slash command's arguments are its text blocks alone: the files the prompt
	// refers to follow the rendered prompt as they follow any other.
	rendered, ok, err := st.expandCommand(ctx, parts.typed)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if ok {
		text = strings.TrimRight(rendered, "\r\n") + "\n" + parts.files
	}
	l, err := st.open(ctx, st.id)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	c.log.Info("session/prompt", "session", st.id, "chars", len(text))
	// The SDK cancels a session's running prompt when a second one arrives; agentls
	// refuses the second instead, so the first runs on. session/cancel cancels it
	// through the host.
	// A $/cancel_request of this request stops the prompt as session/cancel does: the
	// answer is then stopReason cancelled, the schema's "valid response" to a
	// withdrawn request.
	stop := context.AfterFunc(ctx, func() {
		if withdrawn(ctx) {
			prompts, calls := st.host.Cancel(st.id)
			questions := st.cancelElicits()
			c.log.Info("$/cancel_request of session/prompt", "session", st.id, "prompts", prompts, "calls", calls, "questions", questions)
		}
	})
	defer stop()
	// The state rides along for a session the host let go meanwhile, which Prompt
	// resumes with a client for the session's model (conn.newClient).
	res, err := l.Prompt(context.WithValue(context.WithoutCancel(ctx), stateKey{}, st), text, nil, images...)
	switch {
	case errors.Is(err, session.ErrBusy):
		return sdk.PromptResponse{}, &sdk.RequestError{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"session %s is already answering a prompt: wait for its answer, or send session/cancel to stop it", st.id)}
	case err != nil:
		c.log.Warn("prompt failed", "session", st.id, "stopReason", res.StopReason, "error", err)
		return sdk.PromptResponse{}, failed("the prompt failed: %v", err)
	}
	c.log.Info("prompt ended", "session", st.id, "stopReason", res.StopReason)
	return sdk.PromptResponse{StopReason: stopReason(res.StopReason), Usage: usage(res.Usage)}, nil
}

// Cancel cancels the session's running prompt: its model stream, its tool calls, a
// pending permission request and the open questions (elicitation/create).
func (c *conn) Cancel(_ context.Context, p sdk.CancelNotification) error {
	st, err := c.session(p.SessionId)
	if err != nil {
		c.log.Info("session/cancel of an unknown session", "session", p.SessionId)
		return nil
	}
	prompts, calls := st.host.Cancel(st.id)
	questions := st.cancelElicits()
	c.log.Info("session/cancel", "session", st.id, "prompts", prompts, "calls", calls, "questions", questions)
	return nil
}

func stopReason(r session.StopReason) sdk.StopReason {
	switch r {
	case session.StopCancelled:
		return sdk.StopReasonCancelled
	case session.StopMaxTurns:
		return sdk.StopReasonMaxTurnRequests
	case session.StopRefusal:
		return sdk.StopReasonRefusal
	case session.StopMaxTokens:
		return sdk.StopReasonMaxTokens
	}
	return sdk.StopReasonEndTurn
}

func usage(u clients.Usage) *sdk.Usage {
	if u == (clients.Usage{}) {
		return nil
	}
	out := &sdk.Usage{InputTokens: u.PromptTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if u.ThoughtTokens > 0 {
		out.ThoughtTokens = sdk.Ptr(u.ThoughtTokens)
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = u.PromptTokens + u.OutputTokens + u.ThoughtTokens
	}
	return out
}

// promptParts is the text of a prompt made from its content blocks.
type promptParts struct {
	// text is the text blocks with an @mention where a resource link was.
	text string
	// typed is the text blocks alone: a slash command's name and arguments.
	typed string
	// files quotes the files the resource links name and the embedded resources, as
	// Gemini CLI quotes referenced files, to follow the text; empty when none.
	files string
}

// promptText makes the text of a prompt from its content blocks, and the images,
// which go to the model with the text.
func (st *sessionState) promptText(blocks []sdk.ContentBlock) (promptParts, []clients.Part, error) {
	var text, typed, files strings.Builder
	var images []clients.Part
	quote := func(name, body string) {
		fmt.Fprintf(&files, "Content from @%s:\n%s", name, body)
		if !strings.HasSuffix(body, "\n") {
			files.WriteString("\n")
		}
	}
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text.WriteString(b.Text.Text)
			typed.WriteString(b.Text.Text)
		case b.ResourceLink != nil:
			link := b.ResourceLink
			path, ok := filePath(link.Uri)
			if !ok {
				fmt.Fprintf(&text, "%s (%s)", link.Name, link.Uri)
				continue
			}
			ws := st.host.Toolbox().Workspace
			fmt.Fprintf(&text, "@%s", ws.Rel(path))
			if !ws.Contains(path) {
				continue // outside the workspace: the model asks for it if it needs it
			}
			f, err := ws.ReadText(path, maxContextFile)
			if err != nil {
				return promptParts{}, nil, invalidParams("prompt[%d]: resource link %s: %v", i, link.Uri, err)
			}
			quote(ws.Rel(path), f.Text)
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				name := r.TextResourceContents.Uri
				if path, ok := filePath(name); ok {
					name = st.host.Toolbox().Workspace.Rel(path)
				}
				quote(name, r.TextResourceContents.Text)
			case r.BlobResourceContents != nil:
				return promptParts{}, nil, invalidParams("prompt[%d]: agentls takes embedded resources as text; %s is binary", i, r.BlobResourceContents.Uri)
			}
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil || !strings.HasPrefix(b.Image.MimeType, "image/") {
				return promptParts{}, nil, invalidParams("prompt[%d]: an image is base64 data with an image/* MIME type", i)
			}
			images = append(images, clients.Part{InlineData: &clients.Blob{MIMEType: b.Image.MimeType, Data: data}})
		case b.Audio != nil:
			return promptParts{}, nil, invalidParams("prompt[%d]: agentls does not take audio in prompts (its promptCapabilities say so)", i)
		}
	}
	parts := promptParts{text: text.String(), typed: typed.String()}
	if files.Len() > 0 {
		parts.files = "\n--- Content from referenced files ---\n" + files.String() + "--- End of content ---\n"
	}
	if strings.TrimSpace(parts.text+parts.files) == "" {
		return promptParts{}, nil, invalidParams("the prompt is empty: it needs a text block or a resource")
	}
	return parts, images, nil
}

// filePath returns the path of a file: URI.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return u.Path, true
}
