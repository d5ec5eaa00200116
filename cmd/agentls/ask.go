package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentls/agentls/confirm"
)

// terminalAsker asks on the terminal: the details go to out, the answer is read from in.
type terminalAsker struct {
	in  io.Reader
	out io.Writer
}

// Ask implements confirm.Asker.
func (a *terminalAsker) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	d := req.Details
	fmt.Fprintf(a.out, "\n%s wants to run: %s\n", req.ToolName, d.Title)
	switch d.Type {
	case confirm.TypeEdit:
		fmt.Fprintf(a.out, "%s\n", d.Diff)
	case confirm.TypeExecute:
		fmt.Fprintf(a.out, "  command:   %s\n  directory: %s\n", d.Command, d.Directory)
	case confirm.TypeMCP:
		fmt.Fprintf(a.out, "  server: %s  tool: %s\n  arguments: %s\n", d.Server, d.Tool, d.Arguments)
	case confirm.TypeInfo:
		fmt.Fprintf(a.out, "  %s\n", d.Prompt)
		for _, u := range d.URLs {
			fmt.Fprintf(a.out, "  %s\n", u)
		}
	}
	always := "always allow " + alwaysScope(d)
	fmt.Fprintf(a.out, "Allow? [y] yes, once  [a] %s  [n] no: ", always)

	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(a.in).ReadString('\n')
		line <- s
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(a.out)
		return confirm.Answer{}, ctx.Err()
	case s := <-line:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "y", "yes":
			return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
		case "a", "always":
			o := confirm.ProceedAlways
			if d.Type == confirm.TypeMCP {
				o = confirm.ProceedAlwaysTool
			}
			return confirm.Answer{Outcome: o}, nil
		}
		return confirm.Answer{Outcome: confirm.Cancel}, nil
	}
}

func alwaysScope(d confirm.Details) string {
	switch d.Type {
	case confirm.TypeExecute:
		return strings.Join(d.RootCommands, ", ") + " commands this run"
	case confirm.TypeEdit:
		return "edits this run"
	case confirm.TypeMCP:
		return d.Tool + " of " + d.Server + " this run"
	}
	return "this tool this run"
}

// noTerminal refuses every confirmation: with no terminal there is nobody to ask, and no
// answer is never consent.
type noTerminal struct{}

// Ask implements confirm.Asker.
func (noTerminal) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	how := "--approval-mode yolo"
	if req.Details.Type == confirm.TypeEdit {
		how = "--approval-mode auto_edit"
	}
	return confirm.Answer{}, fmt.Errorf("%s needs consent and there is no terminal to ask on; nothing was run. "+
		"Run it from a terminal, pass %s, or add a policy rule allowing it in settings", req.ToolName, how)
}
