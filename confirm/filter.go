package confirm

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// CommandFilter is what the coreTools and excludeTools settings say of a shell tool's
// command lines: with Allow set, every command must start with one of its prefixes
// ("run_shell_command(git status)"); no command may start with a Deny prefix. Prefixes
// are matched at a word boundary against the command text, as policy rules' are.
type CommandFilter struct {
	Allow []string
	Deny  []string
}

// Check returns nil when the command line may run, else an error saying which command
// the filter refuses and why. It fails closed. A Deny list refuses a line that cannot
// be parsed, that has a command not known until run time (see Analysis.Opaque), in
// which bash evaluates data as code, or in which a denied command's words appear as
// arguments (a wrapper agentls does not know could run them). An Allow list refuses a
// line in which bash evaluates anything as code or that runs a command as another user.
// Deny prefixes match every form of a command (with its assignments and wrapper options
// dropped, "git -C x commit" as "git commit"); an Allow prefix must match an exact
// form, assignments included.
func (f CommandFilter) Check(command, dir string, roots []string) error {
	a, fs, err := analyze(command, lineEnv{Dir: dir, Roots: roots})
	if err != nil {
		return fmt.Errorf("the command %q cannot be checked: %w", command, err)
	}
	switch {
	case len(f.Deny) == 0:
	case len(a.Opaque) > 0:
		return fmt.Errorf("the command %q runs %q, a command not known until run time, which cannot be checked against the restrictions", command, a.Opaque[0])
	case len(a.Code) > 0:
		return fmt.Errorf("bash evaluates part of %q as code (%s), which runs commands not known until run time and cannot be checked against the restrictions", command, a.Code[0])
	}
	if len(f.Allow) > 0 {
		if a.Substitution {
			what := "command substitution: $(…), `…`, <(…) or >(…)"
			if len(a.Code) > 0 {
				what = strings.Join(a.Code, "; ")
			}
			return fmt.Errorf("only commands starting with %s are allowed, and bash evaluates part of %q as code (%s)", quoteList(f.Allow), command, what)
		}
		// Analyze unwraps sudo and its kin, so "sudo git status" would pass as "git
		// status"; an allowlist never grants other users' rights.
		for _, d := range a.Dangerous {
			if d == "sudo" || d == "doas" || d == "su" {
				return fmt.Errorf("only commands starting with %s are allowed, and %q runs a command as another user (%s)", quoteList(f.Allow), command, d)
			}
		}
	}
	for i, c := range fs {
		for _, p := range f.Deny {
			match := func(s string) bool { return mayRun(s, p) }
			if slices.ContainsFunc(c.exact, match) || slices.ContainsFunc(c.loose, match) {
				return fmt.Errorf("command %q starts with %q, which is excluded", a.Commands[i], p)
			}
		}
		if len(f.Allow) > 0 && !slices.ContainsFunc(f.Allow, func(p string) bool {
			return slices.ContainsFunc(c.exact, func(s string) bool { return hasCommandPrefix(s, p) })
		}) {
			return fmt.Errorf("command %q is not allowed: only commands starting with %s are", a.Commands[i], quoteList(f.Allow))
		}
	}
	for _, p := range f.Deny {
		// As deny rules do, the whole line too: what the analysis cannot split into
		// commands may still name the denied one.
		if mayRun(strings.TrimSpace(command), p) {
			return fmt.Errorf("the command line %q names %q, which is excluded", command, p)
		}
	}
	return nil
}

// mayRun reports whether command may run what prefix names: it starts with it, or names
// it among its arguments, where a wrapper agentls does not know would run it. Deny rules
// and excludeTools match so.
func mayRun(command, prefix string) bool {
	return hasCommandPrefix(command, prefix) || containsCommand(command, prefix)
}

// containsCommand reports whether prefix's words appear in command after its first
// word, the first of them as a program name or path (…/rm): where a program agentls
// does not know as a wrapper would run it.
func containsCommand(command, prefix string) bool {
	want := strings.Fields(prefix)
	// Split at what separates commands in text a program may run (--opt=exec=':;rm x',
	// 'sh -c "ls|rm x"') as well as at blanks.
	words := strings.FieldsFunc(command, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(";&|=()`'\"{},<>", r)
	})
	if len(want) == 0 {
		return false
	}
	for i := 1; i+len(want) <= len(words); i++ {
		if baseName(words[i]) == want[0] && slices.Equal(words[i+1:i+len(want)], want[1:]) {
			return true
		}
	}
	return false
}

// hasCommandPrefix reports whether command starts with prefix at a word boundary:
// "git status" matches "git status --short" but not "git statusx".
func hasCommandPrefix(command, prefix string) bool {
	return command == prefix || strings.HasPrefix(command, prefix+" ")
}

// quoteList quotes each item and joins them with commas.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
