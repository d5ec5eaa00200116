package shell

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentls/agentls/tools"
)

// Compiler-style lines in a command's output become the result's ProblemReport, so
// that front ends can show them where the user looks.

const (
	// maxProblems bounds the problems one command reports.
	maxProblems = 100
	// maxProblemMessage bounds a problem's message, in bytes.
	maxProblemMessage = 500
	// maxProblemLine is the longest output line read as a compiler line.
	maxProblemLine = 4096
)

// compilerLine matches "path:line:col: message" and "path:line: message", as compilers,
// linters and test runners print them.
var compilerLine = regexp.MustCompile(`^\s*([^\s:]+):(\d+)(?::(\d+))?:\s*(\S.*)$`)

// problems returns the report of the compiler-style lines of out, a command's cleaned
// output run in dir, that point at files of the workspace: each place once, at most
// maxProblems.
func (s *Shell) problems(out, dir string) *tools.ProblemReport {
	type key struct {
		path      string
		line, col int
		message   string
	}
	seen := map[key]bool{}
	isFile := map[string]bool{}
	report := &tools.ProblemReport{Problems: []tools.Problem{}}
	for _, p := range parseProblems(out) {
		if len(report.Problems) == maxProblems {
			break
		}
		path := p.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		abs, err := s.ws.Resolve(path)
		if err != nil {
			continue // outside the workspace
		}
		file, ok := isFile[abs]
		if !ok {
			fi, err := os.Stat(abs)
			file = err == nil && fi.Mode().IsRegular()
			isFile[abs] = file
		}
		if !file {
			continue // not a path at all, as in "12:30:01: the time"
		}
		p.Path = abs
		if k := (key{abs, p.Line, p.Column, p.Message}); !seen[k] {
			seen[k] = true
			report.Problems = append(report.Problems, p)
		}
	}
	return report
}

// parseProblems returns the compiler-style lines of out, with their paths as printed.
func parseProblems(out string) []tools.Problem {
	var found []tools.Problem
	for line := range strings.Lines(out) {
		if len(line) > maxProblemLine {
			continue
		}
		m := compilerLine.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			continue
		}
		ln, err := strconv.Atoi(m[2])
		if err != nil || ln < 1 {
			continue
		}
		col := 0
		if m[3] != "" {
			if col, err = strconv.Atoi(m[3]); err != nil {
				continue
			}
		}
		msg := strings.TrimSpace(m[4])
		found = append(found, tools.Problem{Path: m[1], Line: ln, Column: col,
			Message: tools.Abbreviate(msg, maxProblemMessage), Severity: severityOf(msg)})
	}
	return found
}

// severityOf reads a message's severity from the word it starts with; a line that
// names none is an error, as a compiler's plain "file:line: message" is.
func severityOf(msg string) tools.Severity {
	lower := strings.ToLower(msg)
	for _, w := range []struct {
		word     string
		severity tools.Severity
	}{
		{"error", tools.SeverityError}, {"fatal", tools.SeverityError},
		{"warning", tools.SeverityWarning}, {"warn", tools.SeverityWarning},
		{"note", tools.SeverityInformation}, {"info", tools.SeverityInformation},
		{"hint", tools.SeverityHint}, {"help", tools.SeverityHint},
	} {
		rest, ok := strings.CutPrefix(lower, w.word)
		if ok && (rest == "" || strings.ContainsRune(":[( ", rune(rest[0]))) {
			return w.severity
		}
	}
	return tools.SeverityError
}
