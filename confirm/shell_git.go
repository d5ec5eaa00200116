package confirm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// This file judges what git runs besides itself: the options of its subcommands that
// name a program or shell text (--upload-pack, grep -O, rebase --exec …), the files
// and directories some subcommands write (clone's and init's directory, worktree add,
// bundle create), and the repository git would find from where it runs, whose
// configuration (core.fsmonitor, core.hooksPath, core.pager, core.sshCommand, filter
// and diff drivers) makes any git command run what it names.

// gitSub is what the analysis knows of one git subcommand.
type gitSub struct {
	spec argSpec
	// written returns the operands that name what the subcommand writes.
	written func(p parsedArgs) []word
	// text returns the words after the operand that makes git run them as a command
	// (bisect run, submodule foreach), or nil.
	text func(p parsedArgs) []word
}

// gitSubs are git's subcommands whose options or operands run programs or write
// files.
var gitSubs = map[string]gitSub{
	"clone": {spec: argSpec{
		short: "uocbj",
		long: []string{"upload-pack", "config", "separate-git-dir", "template", "origin", "branch", "reference",
			"reference-if-able", "depth", "shallow-since", "shallow-exclude", "jobs", "filter", "server-option",
			"bundle-uri", "ref-format", "revision"},
		longOptional: []string{"recurse-submodules"},
		runs:         []string{"u", "upload-pack"},
		writes:       []string{"separate-git-dir"},
	}, written: func(p parsedArgs) []word {
		if len(p.operands) >= 2 {
			return p.operands[1:2]
		}
		return nil
	}},
	"init": {spec: argSpec{short: "b", long: []string{"separate-git-dir", "template", "object-format", "ref-format", "initial-branch"}, longOptional: []string{"shared"}, writes: []string{"separate-git-dir"}},
		written: firstOperand},
	"fetch":      {spec: argSpec{long: []string{"upload-pack", "depth", "deepen", "shallow-since", "shallow-exclude", "refmap", "server-option", "negotiation-tip", "filter", "jobs"}, short: "jo", runs: []string{"upload-pack"}}},
	"pull":       {spec: argSpec{long: []string{"upload-pack", "depth", "deepen", "shallow-since", "shallow-exclude", "strategy", "strategy-option", "server-option", "jobs"}, short: "sXj", runs: []string{"upload-pack"}}},
	"ls-remote":  {spec: argSpec{long: []string{"upload-pack", "sort", "server-option"}, short: "uo", runs: []string{"u", "upload-pack"}}},
	"fetch-pack": {spec: argSpec{long: []string{"upload-pack", "exec", "depth"}, runs: []string{"upload-pack", "exec"}}},
	"push":       {spec: argSpec{long: []string{"receive-pack", "exec", "repo", "push-option", "force-with-lease", "signed"}, short: "o", runs: []string{"receive-pack", "exec"}}},
	"send-pack":  {spec: argSpec{long: []string{"receive-pack", "exec", "remote"}, runs: []string{"receive-pack", "exec"}}},
	"archive":    {spec: argSpec{long: []string{"exec", "remote", "format", "prefix", "output", "add-file", "add-virtual-file"}, short: "o", runs: []string{"exec"}}},
	"grep": {spec: argSpec{
		short: "ABCefm", optional: "O",
		long:         []string{"after-context", "before-context", "context", "file", "max-count", "max-depth", "threads"},
		longOptional: []string{"open-files-in-pager"},
		runs:         []string{"O", "open-files-in-pager"},
	}},
	"rebase":   {spec: argSpec{short: "xsXC", long: []string{"exec", "onto", "strategy", "strategy-option", "gpg-sign", "whitespace"}, runs: []string{"x", "exec"}}},
	"difftool": {spec: argSpec{short: "xtOS", long: []string{"extcmd", "tool", "rotate-to", "skip-to"}, runs: []string{"x", "extcmd"}}},
	"filter-branch": {spec: argSpec{
		long:  []string{"env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter", "subdirectory-filter", "setup", "original", "state-branch"},
		short: "d",
		runs:  []string{"env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter", "setup"},
	}},
	"send-email": {spec: argSpec{
		long: []string{"sendmail-cmd", "smtp-server", "to-cmd", "cc-cmd", "header-cmd", "to", "cc", "bcc", "from", "subject", "in-reply-to", "smtp-server-port", "smtp-user", "smtp-pass", "identity"},
		runs: []string{"sendmail-cmd", "smtp-server", "to-cmd", "cc-cmd", "header-cmd"},
	}},
	"instaweb":     {spec: argSpec{short: "dbp", long: []string{"httpd", "browser", "module-path", "port"}, runs: []string{"d", "httpd", "b", "browser"}}},
	"format-patch": {spec: argSpec{short: "ov", long: []string{"output-directory", "subject-prefix", "in-reply-to", "to", "cc", "from", "suffix", "start-number", "base", "interdiff", "range-diff"}, writes: []string{"o", "output-directory"}}},
	"worktree": {spec: argSpec{short: "bB", long: []string{"reason", "orphan"}}, written: func(p parsedArgs) []word {
		if len(p.operands) >= 2 && p.operands[0].lit && p.operands[0].val == "add" {
			return p.operands[1:2]
		}
		return nil
	}},
	"bundle": {written: func(p parsedArgs) []word {
		if len(p.operands) >= 2 && p.operands[0].lit && p.operands[0].val == "create" {
			return p.operands[1:2]
		}
		return nil
	}},
	"submodule": {spec: argSpec{short: "b", long: []string{"name", "reference", "depth", "branch"}}, written: func(p parsedArgs) []word {
		if len(p.operands) >= 3 && p.operands[0].lit && p.operands[0].val == "add" {
			return p.operands[2:3]
		}
		return nil
	}, text: func(p parsedArgs) []word {
		if len(p.operands) >= 2 && p.operands[0].lit && p.operands[0].val == "foreach" {
			return p.operands[1:]
		}
		return nil
	}},
	"bisect": {text: func(p parsedArgs) []word {
		if len(p.operands) >= 2 && p.operands[0].lit && p.operands[0].val == "run" {
			return p.operands[1:]
		}
		return nil
	}},
}

// gitArgs judges the subcommand of the git command ws: the options that run programs,
// the files it writes, clone's -c (configuration of the new repository, as git -c),
// and the global --exec-path, which runs git's programs from a directory.
func (an *analyzer) gitArgs(keep, ws []word, depth int, fs forms) error {
	for _, w := range ws[1:] {
		if !w.lit || !strings.HasPrefix(w.val, "-") {
			break
		}
		if v, ok := strings.CutPrefix(w.val, "--exec-path="); ok {
			an.danger("runs git's programs from the directory its option names: git --exec-path=" + shorten(v))
		}
	}
	rest, _ := dropGlobalWords("git", ws)
	if len(rest) == 0 || !rest[0].lit {
		return nil
	}
	sub, ok := gitSubs[rest[0].val]
	if !ok {
		return nil
	}
	r := &optionRun{name: "git " + rest[0].val, keep: keep, ws: ws, depth: depth, fs: fs}
	p := parseArgs(rest[1:], sub.spec)
	for _, o := range p.opts {
		switch {
		case slices.Contains(sub.spec.runs, o.name):
			an.runs(r, optionName(o.name), o.arg)
		case slices.Contains(sub.spec.writes, o.name) && o.arg.src != "":
			an.write(gitRelative(ws, o.arg))
		case rest[0].val == "clone" && (o.name == "c" || o.name == "config"):
			an.opaque(keep, ws)
		}
	}
	if sub.written != nil {
		for _, w := range sub.written(p) {
			an.place(gitRelative(ws, w))
		}
	}
	if sub.text != nil {
		if cmd := sub.text(p); len(cmd) > 0 {
			t := word{lit: true}
			parts := make([]string, len(cmd))
			for i, w := range cmd {
				parts[i] = w.val
				t.lit = t.lit && w.lit
			}
			t.val = strings.Join(parts, " ")
			t.src = joinWords(cmd)
			an.runs(r, p.operands[0].val, t)
		}
	}
	return r.err
}

// gitRelative returns the path w names as git reads it after the git command ws's -C
// options: a relative path is relative to their directory (git -C .. clone . x writes
// ../x). A -C not known until run time makes it not known either.
func gitRelative(ws []word, w word) word {
	if !w.lit || filepath.IsAbs(w.val) || strings.HasPrefix(w.val, "~") {
		return w
	}
	var dirs []string
	for i := 1; i < len(ws); i++ {
		a := ws[i]
		if !a.lit || !strings.HasPrefix(a.val, "-") || a.val == "--" {
			break
		}
		switch {
		case a.val == "-C" && i+1 < len(ws):
			i++
			if !ws[i].lit {
				return word{src: ws[i].src + "/" + w.src}
			}
			dirs = append(dirs, ws[i].val)
		case strings.HasPrefix(a.val, "-C"):
			dirs = append(dirs, a.val[2:])
		case a.val == "-c" || slices.Contains([]string{"--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"}, a.val):
			i++
		}
	}
	if len(dirs) == 0 {
		return w
	}
	p := w.val
	for i := len(dirs) - 1; i >= 0; i-- {
		if filepath.IsAbs(p) {
			break
		}
		p = filepath.Join(dirs[i], p)
	}
	return word{val: p, src: p, lit: true}
}

// gitRepository records a git command that runs where the repository, not git, made
// the git directory git would use: a directory shaped as a git directory (HEAD, and
// objects or refs) that is not inside a .git folder, as a repository can ship under
// any other name (fixtures/evil.git), or a .git file pointing at one. Its config runs
// commands (core.fsmonitor on git status, core.pager, aliases …): the command is
// Dangerous, and Opaque, since what it runs is that config's to say. The directories
// checked are where the line runs (after cd, env -C …), with git's -C applied, and
// the one --git-dir or GIT_DIR names; only those inside the workspace are judged.
func (an *analyzer) gitRepository(keep, ws []word) {
	var starts []string
	if an.unknownBase {
		an.danger("runs git in a directory not known until run time, whose repository may configure what git runs")
		an.opaque(keep, ws)
		return
	}
	for _, b := range an.bases {
		starts = append(starts, resolvePath(b))
	}
	var gitDir *word
	for _, w := range keep {
		if v, ok := strings.CutPrefix(w.text(), "GIT_DIR="); ok {
			gitDir = &word{val: v, src: v, lit: w.lit}
		}
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit || !strings.HasPrefix(w.val, "-") || w.val == "--" {
			break
		}
		var dir *word
		switch {
		case w.val == "-C" && i+1 < len(ws):
			i++
			dir = &ws[i]
		case strings.HasPrefix(w.val, "-C"):
			dir = &word{val: w.val[2:], src: w.val[2:], lit: true}
		case w.val == "--git-dir" && i+1 < len(ws):
			i++
			gitDir = &ws[i]
		case strings.HasPrefix(w.val, "--git-dir="):
			v := w.val[len("--git-dir="):]
			gitDir = &word{val: v, src: v, lit: true}
		case w.val == "-c" || slices.Contains([]string{"--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"}, w.val):
			i++
		}
		if dir == nil || dir.lit && dir.val == "" {
			continue
		}
		if !dir.lit {
			an.danger("runs git in a directory not known until run time, whose repository may configure what git runs")
			an.opaque(keep, ws)
			return
		}
		for j, s := range starts {
			starts[j] = resolveFrom(s, dir.val)
		}
	}
	an.resolveRoots()
	if gitDir != nil {
		if !gitDir.lit {
			an.danger("runs git with a git directory not known until run time: " + gitDir.src)
			an.opaque(keep, ws)
			return
		}
		for _, s := range starts {
			d := resolveFrom(s, gitDir.val)
			if inside(an.roots, d) && !underGitFolder(an.roots, d) {
				an.gitControlled(keep, ws, d)
			}
		}
		return
	}
	for _, s := range starts {
		if d := controlledGitDir(s, an.roots); d != "" {
			an.gitControlled(keep, ws, d)
		}
	}
}

// gitControlled records a git command that would use the git directory d, which the
// repository made.
func (an *analyzer) gitControlled(keep, ws []word, d string) {
	an.danger("runs git with a git directory the repository made, whose config can run commands: " + d)
	an.opaque(keep, ws)
}

// controlledGitDir returns the git directory git would find from dir if the
// repository, not git, made it (see gitRepository), or "". It looks, as git does, in
// dir and then each parent: a .git there ends the search (a directory is git's; a file
// names its git directory, which must lie inside a .git folder, as worktrees' and
// submodules' do); otherwise a directory shaped as a git directory is one. The search
// stops at the edge of the roots.
func controlledGitDir(dir string, roots []string) string {
	for d := dir; inside(roots, d); d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotGit); err == nil {
			if fi.IsDir() {
				return ""
			}
			target := dotGit
			if fi.Mode()&os.ModeSymlink != 0 {
				target = resolvePath(dotGit)
			} else if data, err := os.ReadFile(dotGit); err == nil {
				line, _, _ := strings.Cut(string(data), "\n")
				if p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:"); ok {
					target = resolveFrom(d, strings.TrimSpace(p))
				}
			}
			if target != dotGit && underGitFolder(roots, target) {
				return ""
			}
			return target
		}
		if isGitDir(d) {
			if underGitFolder(roots, d) {
				return ""
			}
			return d
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return ""
}

// isGitDir reports whether d has the shape of a git directory: HEAD, and objects,
// refs or a commondir file (naming the directory that has them).
func isGitDir(d string) bool {
	return exists(filepath.Join(d, "HEAD")) &&
		(exists(filepath.Join(d, "objects")) || exists(filepath.Join(d, "refs")) || exists(filepath.Join(d, "commondir")))
}

// underGitFolder reports whether the path p has a folder named .git among its parts
// below the root it lies in: git made it (git never checks out a path with such a
// part).
func underGitFolder(roots []string, p string) bool {
	rel := p
	for _, r := range roots {
		if r != "" && within(r, p) {
			if x, err := filepath.Rel(r, p); err == nil {
				rel = x
			}
			break
		}
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}
