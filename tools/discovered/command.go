package discovered

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// assignment matches a word a shell would take as a variable assignment.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// splitCommand splits line into a program and its arguments as a POSIX shell splits a
// simple command: quotes and backslashes are removed, $VAR, ${VAR}, $((…)) and ~ are
// expanded from the environment of agentls, and unquoted results are split at white
// space. Anything only a shell can do — pipes, redirections, command lists, command or
// process substitution, leading VAR=value assignments — is refused, since the command
// runs without one; so is a line with no words.
func splitCommand(line string) ([]string, error) {
	if strings.ContainsRune(line, 0) {
		return nil, errors.New("the command contains a NUL byte")
	}
	p := syntax.NewParser()
	var words []*syntax.Word
	for w, err := range p.WordsSeq(strings.NewReader(line)) {
		if err != nil {
			return nil, fmt.Errorf("cannot split %q into words (the command runs without a shell, so pipes, redirections and command lists are not supported): %w", line, err)
		}
		words = append(words, w)
	}
	for _, w := range words {
		if err := checkWord(line, w); err != nil {
			return nil, err
		}
	}
	if len(words) > 0 {
		if lit, ok := words[0].Parts[0].(*syntax.Lit); ok && assignment.MatchString(lit.Value) {
			name, _, _ := strings.Cut(lit.Value, "=")
			return nil, fmt.Errorf("%q starts with the variable assignment %s=…, which needs a shell; the command runs without one (put `env` in front of it instead)", line, name)
		}
	}
	cfg := &expand.Config{Env: expand.FuncEnviron(func(name string) string {
		if name == "IFS" {
			// Split at white space whatever IFS agentls inherited.
			return ""
		}
		return os.Getenv(name)
	})}
	fields, err := expand.Fields(cfg, words...)
	if err != nil {
		return nil, fmt.Errorf("cannot expand %q: %w", line, err)
	}
	if len(fields) == 0 || fields[0] == "" {
		return nil, errors.New("the command is empty")
	}
	return fields, nil
}

// checkWord refuses the parts of a word that would run something other than the
// command itself.
func checkWord(line string, w *syntax.Word) error {
	var err error
	syntax.Walk(w, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			err = fmt.Errorf("%q has a command substitution at %s, which is not supported: the command runs without a shell", line, n.Pos())
		case *syntax.ProcSubst:
			err = fmt.Errorf("%q has a process substitution at %s, which is not supported: the command runs without a shell", line, n.Pos())
		}
		return err == nil
	})
	return err
}

// quoteArg returns s quoted for a shell where it needs quoting, for showing a command
// line to people.
func quoteArg(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return q
}
