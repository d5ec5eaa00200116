package confirm

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// sensitiveDirs are the folders of a workspace whose files configure what runs or what
// is allowed: git hooks and config, agentls's and Gemini CLI's settings, VS Code's tasks
// and settings. Compared without regard to case, as a case-insensitive file system
// would.
var sensitiveDirs = []string{".git", ".agentls", ".gemini", ".vscode"}

// maxBases bounds the directories a line's relative paths are judged against.
const maxBases = 16

// directories collects the directories that the cd, pushd and popd commands of the
// parsed line f (whose source is src) may change to, and those that wrappers run
// their command in (env -C DIR, env --chdir=DIR, unshare --wd=DIR, nsenter --wd=DIR,
// sudo -D DIR), so that a relative write is judged against each of them.
func (an *analyzer) directories(src string, f *syntax.File) {
	if an.bases == nil {
		an.bases = []string{filepath.Clean(an.base())}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		ws := make([]word, len(c.Args))
		for i, w := range c.Args {
			ws[i] = newWord(src, w)
		}
		for range maxWrappers {
			if len(ws) == 0 || !ws[0].lit {
				return true
			}
			name := baseName(ws[0].val)
			switch name {
			case "cd", "pushd":
				an.cd(ws[1:])
				return true
			case "popd":
				an.unknownBase = true
				return true
			case "env":
				skipOptions(ws[1:], envOptions, func(opt string, arg word) {
					if opt == "C" || opt == "chdir" {
						an.chdir(arg)
					}
				})
			case "unshare":
				skipOptions(ws[1:], unshareOptions, func(opt string, arg word) {
					if opt == "w" || opt == "wd" {
						an.chdir(arg)
					}
				})
			case "sudo":
				skipOptions(ws[1:], sudoOptions, func(opt string, arg word) {
					if opt == "D" || opt == "chdir" {
						an.chdir(arg)
					}
				})
			case "nsenter":
				for _, a := range ws[1:] {
					switch v := a.val; {
					case !a.lit:
					case v == "-w" || v == "--wd" || v == "-W" || v == "--wdns":
						// The directory of the target process: not known here.
						an.unknownBase = true
					case strings.HasPrefix(v, "--wd=") || strings.HasPrefix(v, "--wdns="):
						_, d, _ := strings.Cut(v, "=")
						an.chdir(word{val: d, src: d, lit: true})
					case len(v) > 2 && (strings.HasPrefix(v, "-w") || strings.HasPrefix(v, "-W")):
						an.chdir(word{val: v[2:], src: v[2:], lit: true})
					}
				}
			}
			u, ok := unwrap(name, ws)
			if !ok || len(u.rest) == 0 {
				return true
			}
			ws = u.rest
		}
		return true
	})
}

// cd adds the directory the arguments of cd or pushd change to.
func (an *analyzer) cd(args []word) {
	for len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) == 0 || !args[0].lit || args[0].val == "-" || strings.HasPrefix(args[0].val, "+") {
		// Home, the previous directory, the directory stack, or an expansion.
		an.unknownBase = true
		return
	}
	an.chdir(args[0])
}

// chdir adds the directory w to the bases, as bash's cd (logical) and the kernel's
// chdir (physical) would reach it from each base so far.
func (an *analyzer) chdir(w word) {
	if w.src == "" && !w.lit {
		return // an option given without its argument
	}
	if !w.lit || w.val == "" || strings.HasPrefix(w.val, "~") {
		an.unknownBase = true
		return
	}
	target := w.val
	var next []string
	for _, b := range an.bases {
		// bash's cd is logical (sub/.. is where sub was named, whatever sub links
		// to); with -P, or where that fails, it is physical.
		logical := target
		if !filepath.IsAbs(target) {
			logical = b + string(filepath.Separator) + target
		}
		next = append(next, filepath.Clean(logical), resolveFrom(resolvePath(b), target))
	}
	for _, d := range next {
		if len(an.bases) >= maxBases {
			an.unknownBase = true
			break
		}
		if !slices.Contains(an.bases, d) {
			an.bases = append(an.bases, d)
		}
	}
}

// write records a write to the file w names when it lies outside the workspace or is
// sensitive.
func (an *analyzer) write(w word) {
	if !w.lit {
		an.danger("writes to a path not known until run time: " + w.src)
		return
	}
	p := w.val
	switch {
	case p == "" || p == "/dev/null" || p == "/dev/stdout" || p == "/dev/stderr":
		return
	}
	an.wrote = true
	switch {
	case strings.HasPrefix(p, "~"):
		an.danger("writes under a home directory: " + p)
		return
	case strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/") || p == "/dev/fd":
		// /proc/self/cwd is the shell's directory, /dev/fd/3 whatever descriptor 3 is:
		// where they lead is only known while the line runs.
		an.danger("writes to a path not known until run time: " + p)
		return
	}
	if filepath.IsAbs(p) {
		an.writeTo(resolvePath(p))
		return
	}
	if an.unknownBase {
		an.danger("writes to a path not known until run time: " + p + " (the line changes to a directory not known until run time)")
		return
	}
	for _, b := range an.bases {
		an.writeTo(resolveFrom(resolvePath(b), p))
	}
}

// place judges the file or directory w names, which a command that also counts as
// making links (git clone, git worktree add, rsync, tar) creates as its destination,
// as a write: the links it makes inside cannot redirect the destination itself, so it
// does not count as a write that links the line makes may redirect.
func (an *analyzer) place(w word) {
	wrote := an.wrote
	an.write(w)
	an.wrote = wrote
}

// writeTo judges a write to the resolved path p.
func (an *analyzer) writeTo(p string) {
	an.resolveRoots()
	if !inside(an.roots, p) {
		an.danger("writes outside the workspace: " + p)
	}
	an.sensitiveAt(p)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && hardLinks(fi) > 1 {
		// The same file has another name, which may be outside the workspace or
		// sensitive (a hard link to .git/config).
		an.danger("writes a file with other hard links: " + p)
	}
}

// base is the directory relative paths resolve against.
func (an *analyzer) base() string {
	dir := an.env.Dir
	if len(an.env.Roots) > 0 && !filepath.IsAbs(dir) {
		dir = filepath.Join(an.env.Roots[0], dir)
	}
	return dir
}

// sensitivePath says why writing the resolved path p needs consent in every mode but
// yolo, or returns "": a path under one of the workspace's sensitiveDirs, or under one
// of the protected paths.
func sensitivePath(p string, roots, protected []string) string {
	for _, r := range protected {
		if r != "" && within(r, p) {
			return "it is part of the user's agentls or Gemini CLI settings"
		}
	}
	for _, r := range roots {
		if r == "" || !within(r, p) {
			continue
		}
		rel, err := filepath.Rel(r, p)
		if err != nil {
			continue
		}
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			for _, d := range sensitiveDirs {
				if strings.EqualFold(part, d) {
					return "it is under " + d + ", whose files configure what runs and what is allowed"
				}
			}
		}
		if inGitDir(p, r) {
			return "it is part of a git directory, whose config and hooks run commands"
		}
	}
	return ""
}

// sensitiveEdit says why writing the file at path needs consent even in auto_edit
// mode, or returns "" when it does not. path is resolved as the kernel would (symbolic
// links followed, through a missing final part too) before it is compared with the
// roots and the protected paths.
func sensitiveEdit(path string, roots, protected []string) string {
	return sensitivePath(resolvePath(path), realRoots(roots), realRoots(protected))
}

// inside reports whether the clean path p lies in one of the roots.
func inside(roots []string, p string) bool {
	for _, r := range roots {
		if r != "" && within(r, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies under it; both are clean.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// realRoots returns the paths with their symbolic links resolved, each cleaned as is
// when it cannot be resolved (it may not exist yet).
func realRoots(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" {
			continue
		}
		out = append(out, resolvePath(p))
	}
	return out
}

// maxLinks bounds symbolic link resolution, as the kernel's ELOOP does.
const maxLinks = 40

// resolvePath returns the file an absolute path names, as opening it would: each
// existing part's symbolic links are followed (a link to a missing file included, since
// writing through it creates that file), ".." applies to the directory reached so far,
// and the parts from the first missing one on are joined as written.
func resolvePath(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return resolveFrom(string(filepath.Separator), p)
}

// resolveFrom is resolvePath of rel (relative, or absolute to start over) from the
// directory cur, whose own links are already resolved.
func resolveFrom(cur, rel string) string {
	parts := strings.Split(rel, string(filepath.Separator))
	if filepath.IsAbs(rel) {
		cur = string(filepath.Separator)
	}
	links := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil || links > maxLinks {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		parts = append(strings.Split(target, string(filepath.Separator)), parts[i+1:]...)
		i = -1
	}
	return cur
}

// outputFiles returns the files a command's output options name, whatever the command
// (-o FILE, --output=FILE, -O FILE, find's -fprint FILE …): a write the analysis
// judges like a redirection's.
func outputFiles(args []word) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		if a.val == "--" {
			break
		}
		switch a.val {
		case "-o", "-O", "--output", "--output-document", "--out", "--outfile", "--out-file", "--log-file",
			"-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		for _, long := range []string{"--output=", "--output-document=", "--out=", "--outfile=", "--out-file=", "--log-file="} {
			if v, ok := strings.CutPrefix(a.val, long); ok {
				out = append(out, word{val: v, src: v, lit: true})
			}
		}
		if v, ok := strings.CutPrefix(a.val, "-o"); ok && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~")) {
			out = append(out, word{val: v, src: v, lit: true})
		}
	}
	return out
}

// readsOnly reports the commands that only read the files they are given, whose
// naming a sensitive file is harmless; xxd's output operand is judged as a write
// (see programs).
func readsOnly(name string) bool {
	switch name {
	case "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "ls", "wc",
		"stat", "file", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "od", "xxd",
		"hexdump", "strings", "du", "tree", "realpath", "readlink", "basename", "dirname", "test",
		"[", "echo", "printf", "git", "find", "jq", "bat", "nl":
		return true
	}
	return false
}

// mentions records the sensitive files among args of a command that may write what it
// is given (a program of the repository, sort, uniq, an editor …): asked like a write.
func (an *analyzer) mentions(args []word) {
	for _, a := range args {
		if !a.lit || !mentionsSensitive(a.val) {
			continue
		}
		v := a.val
		if i := strings.IndexByte(v, '='); i >= 0 && strings.HasPrefix(v, "-") {
			v = v[i+1:] // --file=.git/config
		}
		if filepath.IsAbs(v) {
			an.sensitiveAt(resolvePath(v))
			continue
		}
		for _, b := range an.bases {
			an.sensitiveAt(resolveFrom(resolvePath(b), v))
		}
	}
}

// mentionsSensitive reports a word with a path element that names a sensitive folder.
func mentionsSensitive(s string) bool {
	for _, part := range strings.Split(s, "/") {
		for _, d := range sensitiveDirs {
			if strings.EqualFold(strings.TrimLeft(part, "-="), d) || strings.HasSuffix(strings.ToLower(part), "="+d) {
				return true
			}
		}
	}
	return false
}

// resolveRoots resolves the roots and protected paths once, and only for lines that
// write or name a sensitive file.
func (an *analyzer) resolveRoots() {
	if an.roots == nil {
		an.roots = realRoots(an.env.Roots)
		an.protected = realRoots(an.env.Protected)
	}
}

// sensitiveAt records p as Sensitive if it is.
func (an *analyzer) sensitiveAt(p string) {
	an.resolveRoots()
	if sensitivePath(p, an.roots, an.protected) != "" && !slices.Contains(an.out.Sensitive, p) {
		an.out.Sensitive = append(an.out.Sensitive, p)
	}
}

// inGitDir reports whether p is HEAD, or lies in a directory that git would take for a
// git directory (one holding HEAD and objects, refs or commondir), such as a bare repository the
// repository ships or a tool makes: its config and hooks run commands as .git's do.
func inGitDir(p, root string) bool {
	if filepath.Base(p) == "HEAD" {
		return true
	}
	for d := filepath.Dir(p); within(root, d); d = filepath.Dir(d) {
		if isGitDir(d) {
			return true
		}
		if d == root {
			break
		}
	}
	return false
}

// exists reports whether p names something, a dangling link included.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
