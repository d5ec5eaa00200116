package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Custom commands (settings.Command, Gemini CLI's .toml commands): a prompt that starts
// with "/name", name a custom command's, is that command's prompt with what follows the
// name as its arguments, expanded as Gemini CLI does (docs/cli/custom-commands.md):
//
//   - @{path} is the content of a file of the workspace, or of every file below a
//     folder, through the workspace's confinement and ignore rules;
//   - !{command} is the output of a shell command, which runs as a run_shell_command
//     call of the session: with the session's consent and containment, its card in the
//     session, refused (and the prompt with it) when consent is refused;
//   - {{args}} is the arguments: shell-quoted inside !{…}, as typed elsewhere. A prompt
//     without {{args}} gets the command line appended after a blank line when
//     arguments were given.
//
// The template is parsed once: what a file, a command or the arguments bring is never
// read as an injection itself.

// Commands returns the custom commands in force: the user's, and a trusted workspace's.
func (h *Host) Commands() []settings.Command {
	h.tb.WaitAddons()
	return h.tb.Config().Settings.Commands
}

// maxInjectedFiles bounds what one @{…} brings, in bytes.
const maxInjectedFiles = 512 << 10

// argsPlaceholder is where a command's arguments go.
const argsPlaceholder = "{{args}}"

// ErrCommandRefused is the error of a custom command whose !{…} command was refused or
// failed to run: the prompt is not sent.
var ErrCommandRefused = errors.New("the custom command's shell command did not run")

// findCommand returns the custom command text starts with ("/name" then a space or
// the end) and the arguments after it.
func findCommand(cmds []settings.Command, text string) (settings.Command, string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \t\r\n"), "/")
	if !ok || len(cmds) == 0 {
		return settings.Command{}, "", false
	}
	name, args := rest, ""
	if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
		name, args = rest[:i], rest[i+1:]
	}
	i := slices.IndexFunc(cmds, func(c settings.Command) bool { return c.Name == name })
	if i < 0 {
		return settings.Command{}, "", false
	}
	return cmds[i], strings.TrimSpace(args), true
}

// expandCommand returns the prompt of the custom command text starts with, expanded,
// and true; text and false when it names none.
func (l *Live) expandCommand(ctx context.Context, text string) (string, bool, error) {
	c, args, ok := findCommand(l.h.Commands(), text)
	if !ok {
		return text, false, nil
	}
	out, err := expand(ctx, c, args, strings.TrimSpace(text), expander{
		ws: l.h.tb.Workspace,
		shell: func(ctx context.Context, command string) (tools.CallResult, error) {
			argsJSON, err := json.Marshal(map[string]string{"command": command,
				"description": fmt.Sprintf("for the custom command /%s", c.Name)})
			if err != nil {
				return tools.CallResult{}, err
			}
			res := l.Run(ctx, []tools.Request{{Name: "run_shell_command", Args: argsJSON}})
			if len(res) != 1 {
				return tools.CallResult{}, fmt.Errorf("%w: no result", ErrCommandRefused)
			}
			return res[0], nil
		},
	})
	if err != nil {
		return "", true, fmt.Errorf("/%s: %w", c.Name, err)
	}
	return out, true, nil
}

// expander is what expanding a command needs: the workspace its files are read from
// and the shell its commands run in.
type expander struct {
	ws    *workspace.Workspace
	shell func(ctx context.Context, command string) (tools.CallResult, error)
}

// segment is a part of a parsed template: text, a file injection (@) or a shell
// injection (!).
type segment struct {
	kind byte // 0, '@' or '!'
	text string
}

// parseTemplate splits a command's prompt into text and injections. An injection's
// content must have balanced braces.
func parseTemplate(p string) ([]segment, error) {
	var out []segment
	for {
		i := indexInjection(p)
		if i < 0 {
			if p != "" {
				out = append(out, segment{text: p})
			}
			return out, nil
		}
		if i > 0 {
			out = append(out, segment{text: p[:i]})
		}
		kind := p[i]
		depth, end := 0, -1
		for j := i + 1; j < len(p); j++ {
			if p[j] == '{' {
				depth++
			} else if p[j] == '}' {
				depth--
				if depth == 0 {
					end = j
					break
				}
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("unclosed %c{ in the prompt: its content must have balanced braces", kind)
		}
		out = append(out, segment{kind: kind, text: strings.TrimSpace(p[i+2 : end])})
		p = p[end+1:]
	}
}

// indexInjection returns the index of the first "@{" or "!{" of p, or -1.
func indexInjection(p string) int {
	a, b := strings.Index(p, "@{"), strings.Index(p, "!{")
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// expand returns the prompt of c run with args; line is the command line typed.
func expand(ctx context.Context, c settings.Command, args, line string, x expander) (string, error) {
	segs, err := parseTemplate(c.Prompt)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range segs {
		switch s.kind {
		case 0:
			b.WriteString(strings.ReplaceAll(s.text, argsPlaceholder, args))
		case '@':
			text, err := injectFiles(ctx, x.ws, s.text)
			if err != nil {
				return "", fmt.Errorf("@{%s}: %w", s.text, err)
			}
			b.WriteString(text)
		case '!':
			command := strings.ReplaceAll(s.text, argsPlaceholder, shellQuote(args))
			res, err := x.shell(ctx, command)
			if err != nil {
				return "", err
			}
			text, err := shellOutput(res)
			if err != nil {
				return "", fmt.Errorf("!{%s}: %w", command, err)
			}
			b.WriteString(text)
		}
	}
	out := b.String()
	if !strings.Contains(c.Prompt, argsPlaceholder) && args != "" {
		out = strings.TrimRight(out, "\r\n") + "\n\n" + line
	}
	return out, nil
}

// shellOutput is what a !{…} command's call brings into the prompt: its output, and a
// line with its exit code when it failed, as in Gemini CLI. A call that did not run
// (refused, cancelled, failed to start) is an error.
func shellOutput(res tools.CallResult) (string, error) {
	if res.Status != tools.StatusSuccess {
		why := string(res.Status)
		if res.Error != nil {
			why = res.Error.Message
		}
		return "", fmt.Errorf("%w: %s", ErrCommandRefused, why)
	}
	out := res.Display
	if out == "(empty)" {
		out = ""
	}
	if code, ok := strings.CutPrefix(res.Summary, "Exit code "); ok {
		if code, _, _ = strings.Cut(code, ","); code != "0" {
			out = strings.TrimRight(out, "\n") + fmt.Sprintf("\n[Shell command exited with code %s]", code)
		}
	} else if sig, ok := strings.CutPrefix(res.Summary, "Killed by "); ok {
		out = strings.TrimRight(out, "\n") + fmt.Sprintf("\n[Shell command killed by %s]", sig)
	}
	return out, nil
}

// shellQuote quotes s as one word of a POSIX shell.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// injectFiles returns the content of the workspace file path, or of the files below
// the workspace folder path (each after a line naming it), leaving out what the
// workspace's ignore files and default excludes leave out, and binary files.
func injectFiles(ctx context.Context, ws *workspace.Workspace, path string) (string, error) {
	abs, err := ws.Resolve(path)
	if err != nil {
		return "", err
	}
	fi, err := ws.Stat(abs)
	if err != nil {
		return "", err
	}
	root := ws.Roots()[0]
	for _, r := range ws.Roots() {
		if abs == r || strings.HasPrefix(abs, r+string(filepath.Separator)) {
			root = r
			break
		}
	}
	opts := workspace.DefaultWalk()
	if abs != root && ws.NewIgnorer(root, opts).Ignored(abs, fi.IsDir()) {
		return "", fmt.Errorf("%s is ignored by the workspace's ignore files", ws.Rel(abs))
	}
	if !fi.IsDir() {
		f, err := ws.ReadText(abs, maxInjectedFiles)
		if err != nil {
			return "", err
		}
		return f.Text, nil
	}
	var (
		mu    sync.Mutex // the walk calls back on several goroutines
		files []string
	)
	err = ws.Walk(ctx, abs, opts, func(p string, d fs.DirEntry) error {
		if d.Type().IsRegular() {
			mu.Lock()
			files = append(files, p)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	var b strings.Builder
	for _, p := range files {
		if b.Len() >= maxInjectedFiles {
			fmt.Fprintf(&b, "[further files of %s left out: %d bytes is the limit]\n", ws.Rel(abs), maxInjectedFiles)
			break
		}
		f, err := ws.ReadText(p, maxInjectedFiles)
		if err != nil {
			continue // binary, too large or unreadable: skipped, as Gemini CLI does
		}
		fmt.Fprintf(&b, "--- %s ---\n%s\n", ws.Rel(p), strings.TrimRight(f.Text, "\n"))
	}
	return b.String(), nil
}
