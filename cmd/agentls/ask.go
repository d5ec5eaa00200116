package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
)

// terminalAsker asks on the terminal: the details go to out, the answer is read from in.
// A process has one terminalAsker: it reads in through one buffer for all its questions,
// so that an answer typed ahead is kept for the next question, and it puts one question
// at a time.
type terminalAsker struct {
	in    io.Reader
	out   io.Writer
	once  sync.Once
	turn  chan struct{} // holds a token while a question is on the terminal
	lines chan string   // the lines of in; closed at its end
}

func (a *terminalAsker) init() {
	a.turn = make(chan struct{}, 1)
	a.lines = make(chan string)
	// The reader lives as long as the process: it waits on in between questions, and a
	// question that gives up (its context is done) leaves the next line to the next.
	go func() {
		defer close(a.lines)
		r := bufio.NewReader(a.in)
		for {
			s, err := r.ReadString('\n')
			if s != "" {
				a.lines <- s
			}
			if err != nil {
				return
			}
		}
	}()
}

// readLine returns the next line of in, or "" at its end.
func (a *terminalAsker) readLine(ctx context.Context) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-a.lines:
		return s, nil
	}
}

// Ask implements confirm.Asker. Everything it prints of the request goes through
// visible: a file name, command, diff or URL is written by the model, a repository or a
// server, and must not be able to redraw what the person reads before answering.
func (a *terminalAsker) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	a.once.Do(a.init)
	select {
	case <-ctx.Done():
		return confirm.Answer{}, ctx.Err()
	case a.turn <- struct{}{}:
	}
	defer func() { <-a.turn }()

	d := req.Details
	if d.Type == confirm.TypeAsk {
		return a.askQuestions(ctx, req)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s wants to run: %s\n", visible(req.ToolName), visible(d.Title))
	switch d.Type {
	case confirm.TypeEdit:
		if d.Path != "" {
			fmt.Fprintf(&b, "  file: %s\n", visible(d.Path))
		}
		// The one place where newlines are kept: between the lines of the diff, each
		// escaped on its own.
		for line := range strings.SplitSeq(strings.TrimSuffix(d.Diff, "\n"), "\n") {
			b.WriteString(visible(line) + "\n")
		}
	case confirm.TypeExecute:
		fmt.Fprintf(&b, "  command:   %s\n  directory: %s\n", visible(d.Command), visible(d.Directory))
	case confirm.TypeMCP:
		fmt.Fprintf(&b, "  server: %s  tool: %s\n  arguments: %s\n", visible(d.Server), visible(d.Tool), visible(string(d.Arguments)))
	case confirm.TypeInfo:
		// A prompt may hold a plan of many lines (exit_plan_mode): each is escaped on
		// its own and indented, so none can pass for the question below it.
		for line := range strings.SplitSeq(strings.TrimSuffix(d.Prompt, "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", visible(line))
		}
		for _, u := range d.URLs {
			fmt.Fprintf(&b, "  %s\n", visible(u))
		}
	}
	choices := d.Choices
	if len(choices) == 0 {
		// A question that offers nothing (it should not come): once or not at all.
		choices = confirm.OnceOrReject()
	}
	if slices.ContainsFunc(choices, func(c confirm.Choice) bool { letter, _ := choiceKeys(c.ID); return letter == "" }) {
		// A question's own answers, numbered.
		for i, c := range choices {
			fmt.Fprintf(&b, "  [%d] %s\n", i+1, visible(c.Label))
		}
		b.WriteString("Answer: ")
	} else {
		// The usual answers, each with its letter, on the question's line.
		var keys []string
		for _, c := range choices {
			letter, _ := choiceKeys(c.ID)
			keys = append(keys, fmt.Sprintf("[%s] %s", letter, visible(c.Label)))
		}
		if a.perHunk(d) {
			keys = append(keys, fmt.Sprintf("[p] choose among the %d hunks", len(d.Hunks)))
		}
		b.WriteString("Allow? " + strings.Join(keys, "  ") + ": ")
	}
	io.WriteString(a.out, b.String())

	s, err := a.readLine(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return confirm.Answer{}, err
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "p" && a.perHunk(d) {
		return a.askHunks(ctx, d)
	}
	for i, c := range choices {
		letter, word := choiceKeys(c.ID)
		if s == strconv.Itoa(i+1) || s != "" && (s == letter || s == word) {
			return confirm.Answer{Choice: c.ID, Outcome: c.Outcome}, nil
		}
	}
	// Anything else is no.
	return confirm.Answer{Outcome: confirm.Cancel}, nil
}

// choiceKeys returns the letter and the word that answer one of the usual choices.
func choiceKeys(id string) (letter, word string) {
	switch id {
	case confirm.ChoiceOnce:
		return "y", "yes"
	case confirm.ChoiceAlways:
		return "a", "always"
	case confirm.ChoiceAlwaysServer:
		return "v", "server"
	case confirm.ChoiceAlwaysSave:
		return "s", "save"
	case confirm.ChoiceReject:
		return "n", "no"
	case confirm.ChoiceRejectAlways:
		return "r", "reject"
	}
	return "", ""
}

// perHunk reports whether an edit's hunks can be chosen one by one.
func (a *terminalAsker) perHunk(d confirm.Details) bool {
	return d.Type == confirm.TypeEdit && len(d.Hunks) > 1 && len(hunkTexts(d.Diff)) == len(d.Hunks)
}

// askHunks asks about each hunk of an edit in turn, as git add -p does: y applies it,
// n leaves it out, a applies it and all after it, d leaves out it and all after it;
// anything else (or the end of the input) leaves it out.
func (a *terminalAsker) askHunks(ctx context.Context, d confirm.Details) (confirm.Answer, error) {
	texts := hunkTexts(d.Diff)
	accepted := []int{}
	rest := ""
	for i := range d.Hunks {
		if rest == "" {
			var b strings.Builder
			for line := range strings.SplitSeq(strings.TrimSuffix(texts[i], "\n"), "\n") {
				b.WriteString(visible(line) + "\n")
			}
			fmt.Fprintf(&b, "Apply hunk %d of %d? [y] yes  [n] no  [a] this and the rest  [d] none of the rest: ", i+1, len(d.Hunks))
			io.WriteString(a.out, b.String())
			s, err := a.readLine(ctx)
			if err != nil {
				fmt.Fprintln(a.out)
				return confirm.Answer{}, err
			}
			switch s = strings.ToLower(strings.TrimSpace(s)); s {
			case "a", "d":
				rest = s
			case "y", "yes":
				accepted = append(accepted, i)
				continue
			default:
				continue
			}
		}
		if rest == "a" {
			accepted = append(accepted, i)
		}
	}
	return confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: accepted}, nil
}

// hunkTexts splits a unified diff into its hunks, each from its @@ line on. Lines of
// the texts are prefixed with " ", "-" or "+", so only a header starts with "@@".
func hunkTexts(diff string) []string {
	var out []string
	for line := range strings.SplitAfterSeq(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "@@"):
			out = append(out, line)
		case len(out) > 0:
			out[len(out)-1] += line
		}
	}
	return out
}

// askQuestions puts ask_user's questions one after another: a choice is answered by its
// number (several, separated by commas, where more than one may be chosen) or by
// words of one's own, a yes/no question by y or n or words of one's own, a text
// question by a line; an empty line leaves the question unanswered.
func (a *terminalAsker) askQuestions(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	qs := req.Details.Questions
	answers := map[string]string{}
	for i, q := range qs {
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s asks", visible(req.ToolName))
		if len(qs) > 1 {
			fmt.Fprintf(&b, " (%d of %d)", i+1, len(qs))
		}
		if q.Header != "" {
			fmt.Fprintf(&b, " [%s]", visible(q.Header))
		}
		fmt.Fprintf(&b, ": %s\n", visible(q.Question))
		for j, o := range q.Options {
			fmt.Fprintf(&b, "  [%d] %s", j+1, visible(o.Label))
			if o.Description != "" {
				fmt.Fprintf(&b, " — %s", visible(o.Description))
			}
			b.WriteString("\n")
		}
		switch {
		case q.Type == confirm.QuestionYesNo:
			b.WriteString("Answer [y] yes  [n] no, or type your own (empty: no answer): ")
		case len(q.Options) > 0 && q.MultiSelect:
			b.WriteString("Answer with numbers separated by commas, or type your own (empty: no answer): ")
		case len(q.Options) > 0:
			b.WriteString("Answer with a number, or type your own (empty: no answer): ")
		default:
			if q.Placeholder != "" {
				fmt.Fprintf(&b, "(%s) ", visible(q.Placeholder))
			}
			b.WriteString("Answer (empty: no answer): ")
		}
		io.WriteString(a.out, b.String())
		line, err := a.readLine(ctx)
		if err != nil {
			fmt.Fprintln(a.out)
			return confirm.Answer{}, err
		}
		if line == "" {
			// The end of the input: nobody is there to answer.
			fmt.Fprintln(a.out)
			return confirm.Answer{}, errors.New("the terminal's input ended before the questions were answered")
		}
		if ans := questionAnswer(q, strings.TrimSpace(line)); ans != "" {
			answers[strconv.Itoa(i)] = ans
		}
	}
	return confirm.Answer{Outcome: confirm.ProceedOnce, Answers: answers}, nil
}

// questionAnswer turns what the person typed into the answer to q: the labels of the
// options whose numbers they typed, Yes or No, or their own words.
func questionAnswer(q confirm.Question, typed string) string {
	if typed == "" {
		return ""
	}
	if q.Type == confirm.QuestionYesNo {
		switch strings.ToLower(typed) {
		case "y", "yes":
			return confirm.AnswerYes
		case "n", "no":
			return confirm.AnswerNo
		}
		return typed
	}
	if len(q.Options) == 0 {
		return typed
	}
	var labels []string
	for f := range strings.SplitSeq(typed, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(q.Options) {
			return typed // words of their own
		}
		labels = append(labels, q.Options[n-1].Label)
	}
	if len(labels) > 1 && !q.MultiSelect {
		return typed
	}
	return strings.Join(labels, ", ")
}

// visible returns s as it can be shown on a terminal without acting on it: control
// characters (C0, DEL and C1, which start escape sequences, return the carriage or
// ring the bell), bytes that are not UTF-8 (a lone 0x9b is CSI to a terminal that is
// not in UTF-8 mode), line and paragraph separators, and invisible formatting
// characters (the bidi controls that reorder what is read, zero-width characters) are
// written as Go escapes: \r and \n (and \a, \b, \f, \v) for themselves, \x1b for other
// control characters below 0x80 and for stray bytes, \u202e for the rest. Newlines are escaped too; a caller that shows lines splits them first.
//
// Tabs are kept. A tab only moves the cursor forward over cells it does not write, so
// it cannot hide or overwrite anything printed before it (escape sequences that move tab
// stops are escaped themselves), while escaping it would garble every diff of Go code
// or a Makefile. Backslashes are kept too: a literal "\x1b" in a name shows as those
// four characters, which is what it is.
func visible(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // the common case: nothing to escape
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case !mustEscape(r, size):
			b.WriteString(s[i : i+size])
		case r < utf8.RuneSelf && strings.IndexByte("\a\b\f\n\r\v", byte(r)) >= 0:
			b.WriteString(strconv.QuoteRune(r)[1:3]) // \n, \r, … as Go writes them
		case r == utf8.RuneError || r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// mustEscape reports whether the rune r, size bytes long in its string, must not be
// written to a terminal as it is.
func mustEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // a byte that is not UTF-8
		return true
	case r == '\t':
		return false
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}
