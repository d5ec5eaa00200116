package acp

import (
	"context"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/session/toolbox"
)

// Slash commands: the prompts of the session's MCP servers are offered as commands
// (available_commands_update); a prompt that starts with "/name" is the MCP prompt
// rendered with the arguments that follow, as Gemini CLI takes them: --arg=value
// pairs, and the rest of the text for the arguments not given that way, in order
// (the last one taking what remains).

// command is a slash command: an MCP prompt under the name the client shows.
type command struct {
	name   string
	prompt toolbox.MCPPrompt
}

// loadCommands lists the MCP prompts of the session's servers as commands. A prompt
// whose name another server's prompt has already is named server:name.
func (st *sessionState) loadCommands(ctx context.Context) []command {
	prompts, err := st.host.Toolbox().MCPPrompts(ctx)
	if err != nil {
		st.c.log.Warn("listing the MCP prompts", "error", err)
	}
	taken := map[string]bool{}
	for _, b := range builtinCommands() {
		taken[b.Name] = true // a prompt of that name is server:name
	}
	var out []command
	for _, p := range prompts {
		name := p.Name
		if taken[name] {
			name = p.Server + ":" + p.Name
		}
		taken[name] = true
		out = append(out, command{name: name, prompt: p})
	}
	st.mu.Lock()
	st.commands = out
	st.mu.Unlock()
	return out
}

// announceCommands sends the session's commands to the client: agentls's own, then
// the MCP prompts.
func (st *sessionState) announceCommands(cmds []command) {
	avail := builtinCommands()
	for _, c := range cmds {
		ac := sdk.AvailableCommand{Name: c.name, Description: c.prompt.Description}
		if ac.Description == "" {
			ac.Description = "MCP prompt " + c.prompt.Name + " of " + c.prompt.Server
		}
		if len(c.prompt.Arguments) > 0 {
			var hint []string
			for _, a := range c.prompt.Arguments {
				h := "--" + a.Name + "=…"
				if !a.Required {
					h = "[" + h + "]"
				}
				hint = append(hint, h)
			}
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: strings.Join(hint, " ")}}
		}
		avail = append(avail, ac)
	}
	st.c.notify(st.id, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: avail}})
}

// expandCommand returns the text of a prompt that starts with one of the session's
// commands: the MCP prompt rendered with its arguments. ok is false when text names no
// command.
func (st *sessionState) expandCommand(ctx context.Context, text string) (rendered string, ok bool, err error) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \t\n"), "/")
	if !ok {
		return "", false, nil
	}
	name, args, _ := strings.Cut(rest, " ")
	st.mu.Lock()
	cmds := st.commands
	st.mu.Unlock()
	for _, c := range cmds {
		if c.name != name {
			continue
		}
		values := commandArgs(c.prompt, args)
		rendered, err := st.host.Toolbox().RenderMCPPrompt(ctx, c.prompt.Server, c.prompt.Name, values)
		if err != nil {
			return "", false, invalidParams("/%s: %v", name, err)
		}
		return rendered, true, nil
	}
	return "", false, nil
}

// commandArgs reads the arguments of p from text: --name=value (or --name="a value")
// pairs, then the remaining words for the arguments still unset, in order, the last
// one taking the rest.
func commandArgs(p toolbox.MCPPrompt, text string) map[string]string {
	values := map[string]string{}
	var words []string
	for _, w := range splitWords(text) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(w, "--"), "="); ok && strings.HasPrefix(w, "--") {
			values[k] = v
			continue
		}
		words = append(words, w)
	}
	var unset []string
	for _, a := range p.Arguments {
		if _, ok := values[a.Name]; !ok {
			unset = append(unset, a.Name)
		}
	}
	for i, name := range unset {
		if len(words) == 0 {
			break
		}
		if i == len(unset)-1 {
			values[name] = strings.Join(words, " ")
			break
		}
		values[name], words = words[0], words[1:]
	}
	return values
}

// splitWords splits text at spaces outside double quotes, dropping the quotes.
func splitWords(text string) []string {
	var out []string
	var b strings.Builder
	quoted, inWord := false, false
	for _, r := range text {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}
