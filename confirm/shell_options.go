package confirm

import (
	"slices"
	"strings"
)

// This file judges, by class, the options and operands of programs that make them
// run another program or write a file that their command line names as a plain word:
// rg --pre PROG, tar -I PROG, git ls-remote --upload-pack=PROG, uniq IN OUT, xxd -r IN
// OUT, split's prefix, sort -o FILE, touch and mkdir's operands … A rule for such a
// program is written for what it usually does; with these it runs what the repository
// ships, or writes outside the workspace. So an option that runs a program is a
// Dangerous reason (asked whatever a rule for the program says) and its text is
// analysed as the shell text it may be, so that deny rules see the program; a file
// such an option or operand names is judged as a redirection's target is.

// argSpec is the option syntax of a program, as GNU getopt reads it: options and
// operands in any order until "--".
type argSpec struct {
	// short lists the short options taking an argument, attached or in the next word.
	short string
	// optional lists the short options whose argument is optional and only attached.
	optional string
	// long lists the long options taking an argument, after "=" or in the next word;
	// an abbreviation is read as the first of them it abbreviates, so the options that
	// run programs come first.
	long []string
	// longOptional lists the long options whose argument is optional, after "=" only.
	longOptional []string
	// oneDash says the long options are spelled with one dash too (-out FILE, -cmd X);
	// a one-dash word that is no long option is then a flag.
	oneDash bool
	// oldStyle says a first word without a dash is a cluster of short options whose
	// arguments follow it in order (tar cfI a.tar prog).
	oldStyle bool
	// runs lists the options (letter or long name) whose argument is a program or shell
	// text that the program runs.
	runs []string
	// writes lists the options whose argument is a file the program writes.
	writes []string
}

// parsedOpt is one option of a command line: its letter or long name, and its
// argument (the zero word when it has none).
type parsedOpt struct {
	name string
	arg  word
}

// parsedArgs is a command line read with an argSpec.
type parsedArgs struct {
	opts     []parsedOpt
	operands []word
}

// has reports whether an option of one of the names was given.
func (p parsedArgs) has(names ...string) bool {
	return slices.ContainsFunc(p.opts, func(o parsedOpt) bool { return slices.Contains(names, o.name) })
}

// parseArgs reads args (the words after the program's name) as spec says.
func parseArgs(args []word, spec argSpec) parsedArgs {
	var p parsedArgs
	longs := append(slices.Clone(spec.long), spec.longOptional...)
	i := 0
	if spec.oldStyle && len(args) > 0 && args[0].lit && args[0].val != "" && !strings.HasPrefix(args[0].val, "-") {
		i = 1
		for _, c := range args[0].val {
			o := parsedOpt{name: string(c)}
			if strings.ContainsRune(spec.short, c) && i < len(args) {
				o.arg = args[i]
				i++
			}
			p.opts = append(p.opts, o)
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.lit || v == "-" || !strings.HasPrefix(v, "-"):
			p.operands = append(p.operands, a)
		case v == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p
		case strings.HasPrefix(v, "--") || spec.oneDash:
			name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
			if !strings.HasPrefix(v, "--") && !slices.Contains(longs, name) {
				p.opts = append(p.opts, parsedOpt{name: name})
				continue
			}
			name = longOption(longs, name)
			o := parsedOpt{name: name}
			switch {
			case hasVal:
				o.arg = word{val: val, src: val, lit: true}
			case slices.Contains(spec.long, name) && i+1 < len(args):
				i++
				o.arg = args[i]
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(v); j++ {
				c := v[j : j+1]
				o := parsedOpt{name: c}
				switch {
				case strings.Contains(spec.short, c):
					if j+1 < len(v) {
						o.arg = word{val: v[j+1:], src: v[j+1:], lit: true}
					} else if i+1 < len(args) {
						i++
						o.arg = args[i]
					}
					j = len(v)
				case strings.Contains(spec.optional, c):
					o.arg = word{val: v[j+1:], src: v[j+1:], lit: true}
					j = len(v)
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p
}

// program is what the analysis knows of a program whose options or operands run
// programs or name files it writes.
type program struct {
	spec argSpec
	// written returns the operands (or prefixes of files) the program writes.
	written func(p parsedArgs) []word
	// files, when set, returns the files the program writes from its words after its
	// name, for programs whose syntax argSpec cannot say (chmod -x, xxd -c16).
	files func(args []word) []word
}

// optionRun is one command being judged by its program's table: what runs needs to
// analyse an option's text as the command's own (its kept words, depth and forms),
// and the first error that analysis gave.
type optionRun struct {
	name     string
	keep, ws []word
	depth    int
	fs       forms
	err      error
}

// runs records that the option opt of the command r makes it run a program: a
// Dangerous reason, and the option's value, text, analysed as the shell text it may be,
// so that deny rules see the program. An empty text (git grep -O alone runs the
// configured pager) is the reason alone.
func (an *analyzer) runs(r *optionRun, opt string, text word) {
	shown := opt
	if text.src != "" {
		shown += " " + text.src
	}
	an.danger("runs a program or command its options name: " + shorten(r.name+" "+shown))
	if text.src == "" || text.lit && strings.TrimSpace(text.val) == "" {
		return
	}
	if err := an.text(r.keep, r.ws, text, r.name+" "+opt, r.depth, r.fs); err != nil && r.err == nil {
		r.err = err
	}
}

// optionName shows an option as it is spelled: -x or --long.
func optionName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// programArgs judges the options and operands of the command ws named name that run
// programs or write files, as the programs table says.
func (an *analyzer) programArgs(name string, keep, ws []word, depth int, fs forms) error {
	prog, ok := programs[name]
	if !ok {
		switch {
		case compilerFamily(name):
			an.compiler(name, ws)
		case compressorFamily(name):
			p := parseArgs(ws[1:], argSpec{short: "SbpFCMTDo", long: []string{"suffix", "format", "check", "memlimit", "threads", "output"}})
			if !p.has("c", "stdout", "to-stdout", "t", "test", "l", "list") {
				for _, w := range p.operands {
					if !(w.lit && w.val == "-") {
						an.write(w)
					}
				}
			}
		}
		return nil
	}
	r := &optionRun{name: name, keep: keep, ws: ws, depth: depth, fs: fs}
	p := parseArgs(ws[1:], prog.spec)
	for _, o := range p.opts {
		switch {
		case slices.Contains(prog.spec.runs, o.name):
			an.runs(r, optionName(o.name), o.arg)
		case slices.Contains(prog.spec.writes, o.name) && o.arg.src != "":
			an.write(o.arg)
		}
	}
	if prog.written != nil {
		for _, w := range prog.written(p) {
			if name == "rsync" || name == "scp" {
				an.place(w)
			} else {
				an.write(w)
			}
		}
	}
	if prog.files != nil {
		for _, w := range prog.files(ws[1:]) {
			an.write(w)
		}
	}
	// What the table cannot say.
	switch name {
	case "tar", "bsdtar":
		an.tar(r, p)
	case "ssh", "scp", "sftp":
		an.sshOptions(r, p)
	case "curl", "wget":
		for _, o := range p.opts {
			if o.name == "K" || o.name == "config" || name == "wget" && (o.name == "e" || o.name == "execute") {
				an.danger("takes options from a file or command, which may name files it writes: " + shorten(name+" "+optionName(o.name)+" "+o.arg.src))
			}
		}
	}
	return r.err
}

// after returns the operands from the nth on.
func after(n int) func(p parsedArgs) []word {
	return func(p parsedArgs) []word {
		if len(p.operands) <= n {
			return nil
		}
		return p.operands[n:]
	}
}

// lastLocal returns the last operand when there are at least two and it names a local
// file (not host:path or a URL).
func lastLocal(p parsedArgs) []word {
	if len(p.operands) < 2 {
		return nil
	}
	w := p.operands[len(p.operands)-1]
	if w.lit && remotePath(w.val) {
		return nil
	}
	return []word{w}
}

// remotePath reports an operand that names a file on another host: host:path, or a
// URL.
func remotePath(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.Contains(s[:i], "/")
}

// lastOperand returns the last operand.
func lastOperand(p parsedArgs) []word {
	if len(p.operands) == 0 {
		return nil
	}
	return p.operands[len(p.operands)-1:]
}

// firstOperand returns the first operand.
func firstOperand(p parsedArgs) []word {
	if len(p.operands) == 0 {
		return nil
	}
	return p.operands[:1]
}

// prefixOf returns the files a program writes under a prefix: the value of one of
// the options, else the nth operand, else def in the working directory.
func prefixOf(n int, def string, opts ...string) func(p parsedArgs) []word {
	return func(p parsedArgs) []word {
		for _, o := range p.opts {
			if slices.Contains(opts, o.name) && o.arg.src != "" {
				return []word{o.arg}
			}
		}
		if n >= 0 && len(p.operands) > n {
			return p.operands[n : n+1]
		}
		return []word{{val: def, src: def, lit: true}}
	}
}

// sshCommandKeys are ssh_config keys whose value is a command ssh runs locally, and
// keys that load code or configuration that may.
var (
	sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}
	sshLoadKeys    = []string{"pkcs11provider", "securitykeyprovider", "include", "permitlocalcommand", "match", "proxyusefdpass"}
)

// sshOptions judges ssh's -o KEY=VALUE options (also scp's and sftp's).
func (an *analyzer) sshOptions(r *optionRun, p parsedArgs) {
	for _, o := range p.opts {
		if o.name != "o" {
			continue
		}
		if !o.arg.lit {
			an.runs(r, "-o", o.arg)
			continue
		}
		key, val, ok := strings.Cut(o.arg.val, "=")
		if !ok {
			key, val, _ = strings.Cut(o.arg.val, " ")
		}
		key = strings.ToLower(strings.TrimSpace(key))
		switch {
		case slices.Contains(sshCommandKeys, key):
			an.runs(r, "-o "+key, word{val: val, src: val, lit: true})
		case slices.Contains(sshLoadKeys, key):
			an.runs(r, "-o "+o.arg.val, word{})
		}
	}
}

// programs are the programs whose options and operands run programs or name the files
// they write; see programArgs. Programs that run shell text as their main business
// (awk, sqlite3, gdb, vim, ed) are interpreters instead; git is judged by subcommand.
var programs = map[string]program{
	"rg": {spec: argSpec{
		short: "ABCEMTdefgjmrt",
		long: []string{"pre", "hostname-bin", "after-context", "before-context", "context", "encoding", "max-columns",
			"type-not", "max-depth", "regexp", "file", "glob", "iglob", "threads", "max-count", "replace", "type",
			"type-add", "type-clear", "context-separator", "field-context-separator", "field-match-separator",
			"path-separator", "colors", "color", "sort", "sortr", "engine", "dfa-size-limit", "regex-size-limit",
			"ignore-file", "pre-glob", "hyperlink-format", "max-filesize", "generate"},
		runs: []string{"pre", "hostname-bin"},
	}},
	"ag":     {spec: argSpec{short: "ABCGgmp", long: []string{"pager", "after", "before", "context", "file-search-regex", "ignore", "max-count", "path-to-ignore", "depth", "workers"}, runs: []string{"pager"}}},
	"man":    {spec: argSpec{short: "PCMLmpeSsREK", optional: "H", long: []string{"pager", "config-file", "manpath", "locale", "systems", "preprocessor", "extension", "sections", "encoding"}, longOptional: []string{"html"}, runs: []string{"P", "pager", "H", "html"}}},
	"tar":    tarProgram,
	"bsdtar": tarProgram,
	"sort": {spec: argSpec{
		short: "kotST",
		long:  []string{"compress-program", "output", "key", "field-separator", "buffer-size", "temporary-directory", "batch-size", "parallel", "files0-from", "random-source", "sort"},
		runs:  []string{"compress-program"}, writes: []string{"o", "output"},
	}},
	"uniq":     {spec: argSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}, longOptional: []string{"all-repeated", "group"}}, written: after(1)},
	"split":    {spec: argSpec{short: "abClnt", long: []string{"filter", "suffix-length", "additional-suffix", "bytes", "line-bytes", "lines", "number", "separator"}, longOptional: []string{"numeric-suffixes", "hex-suffixes"}, runs: []string{"filter"}}, written: prefixOf(1, "x")},
	"csplit":   {spec: argSpec{short: "bfn", long: []string{"prefix", "suffix-format", "digits"}}, written: prefixOf(-1, "xx", "f", "prefix")},
	"touch":    {spec: argSpec{short: "rdt", long: []string{"reference", "date", "time"}}, written: after(0)},
	"mkdir":    {spec: argSpec{short: "m", long: []string{"mode"}, longOptional: []string{"context"}}, written: after(0)},
	"rmdir":    {written: after(0)},
	"mkfifo":   {spec: argSpec{short: "m", long: []string{"mode"}, longOptional: []string{"context"}}, written: after(0)},
	"mknod":    {spec: argSpec{short: "m", long: []string{"mode"}, longOptional: []string{"context"}}, written: firstOperand},
	"rm":       {written: after(0)},
	"unlink":   {written: after(0)},
	"shred":    {spec: argSpec{short: "ns", long: []string{"iterations", "size", "random-source"}, longOptional: []string{"remove"}}, written: after(0)},
	"truncate": {spec: argSpec{short: "rs", long: []string{"reference", "size"}}, written: after(0)},
	"link":     {written: after(1)},
	"install": {spec: argSpec{short: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory"}},
		written: func(p parsedArgs) []word {
			if p.has("d", "directory") {
				return p.operands
			}
			return nil
		}},
	"chmod": {files: func(args []word) []word { return chmodFiles("chmod", args) }},
	"chown": {files: func(args []word) []word { return chmodFiles("chown", args) }},
	"chgrp": {files: func(args []word) []word { return chmodFiles("chgrp", args) }},
	"zip": {spec: argSpec{
		oneDash: true,
		long:    []string{"TT", "unzip-command", "b", "temp-path", "n", "suffixes", "t", "from-date", "tt", "before-date", "P", "password", "Z", "compression-method", "s", "split-size", "O", "output-file", "lf", "logfile-path"},
		runs:    []string{"TT", "unzip-command"}, writes: []string{"O", "output-file", "lf", "logfile-path"},
	}, written: firstOperand},
	"rsync": {spec: argSpec{
		short: "eBfTM",
		long: []string{"rsh", "rsync-path", "log-file", "write-batch", "only-write-batch", "backup-dir", "filter", "exclude",
			"include", "exclude-from", "include-from", "files-from", "temp-dir", "compare-dest", "copy-dest", "link-dest",
			"suffix", "log-file-format", "read-batch", "partial-dir", "chmod", "chown", "usermap", "groupmap", "timeout",
			"contimeout", "port", "sockopts", "out-format", "password-file", "bwlimit", "max-size", "min-size", "max-delete",
			"block-size", "checksum-choice", "compress-choice", "compress-level", "skip-compress", "iconv", "modify-window",
			"protocol", "remote-option", "outbuf", "stop-after", "stop-at", "info", "debug", "address"},
		runs: []string{"e", "rsh", "rsync-path"}, writes: []string{"log-file", "write-batch", "only-write-batch", "backup-dir"},
	}, written: lastLocal},
	"scp":  {spec: argSpec{short: "cDFiJloPSX", runs: []string{"S", "D", "F"}}, written: lastLocal},
	"sftp": {spec: argSpec{short: "BbcDFiJloPRSsX", runs: []string{"S", "D", "F", "b"}}},
	"ssh":  {spec: argSpec{short: "BbcDEeFIiJLlmOoPpQRSWw", runs: []string{"F", "I"}, writes: []string{"E"}}},
	"curl": {spec: argSpec{
		short: "AbcCdDeEFHKmoQrTuUwxXYyz",
		long: []string{"config", "cookie-jar", "dump-header", "trace", "trace-ascii", "stderr", "libcurl", "etag-save", "hsts",
			"alt-svc", "output-dir", "output", "data", "data-binary", "data-raw", "data-urlencode", "header", "user", "request",
			"url", "form", "referer", "user-agent", "proxy", "max-time", "connect-timeout", "cookie", "upload-file", "cacert",
			"cert", "key", "resolve", "retry", "write-out", "range", "continue-at", "limit-rate", "interface", "json"},
		writes: []string{"c", "cookie-jar", "D", "dump-header", "trace", "trace-ascii", "stderr", "libcurl", "etag-save", "hsts", "alt-svc", "output-dir"},
	}},
	"wget": {spec: argSpec{
		short: "aeOoPtTwUQ",
		long:  []string{"use-askpass", "execute", "config", "append-output", "directory-prefix", "save-cookies", "rejected-log", "output-file", "output-document", "tries", "timeout", "wait", "user-agent", "quota", "header", "user", "password", "load-cookies", "post-data", "post-file", "warc-file"},
		runs:  []string{"use-askpass"}, writes: []string{"a", "append-output", "P", "directory-prefix", "save-cookies", "rejected-log", "output-file", "warc-file"},
	}},
	"openssl": {spec: argSpec{
		oneDash: true,
		long:    []string{"engine", "provider-path", "out", "keyout", "writerand", "sess_out", "in", "passin", "passout", "key", "config", "inkey", "signer", "certfile", "CAfile", "cert", "name", "subj", "days", "newkey", "pkeyopt", "rand", "md"},
		runs:    []string{"engine", "provider-path"}, writes: []string{"out", "keyout", "writerand", "sess_out"},
	}},
	"ssh-keygen": {spec: argSpec{short: "abCDEfFGIJjKmMnNOPrsSTtVwYzZ"}, written: func(p parsedArgs) []word {
		if p.has("l", "y", "B", "L", "F", "Q", "e", "i", "R") {
			return nil
		}
		for _, o := range p.opts {
			if o.name == "f" {
				return []word{o.arg}
			}
		}
		return nil
	}},
	"go": {spec: argSpec{
		oneDash: true,
		long: []string{"toolexec", "vettool", "exec", "C", "o", "p", "tags", "ldflags", "gcflags", "asmflags", "run", "bench",
			"count", "timeout", "mod", "modfile", "overlay", "pkgdir", "buildmode", "compiler", "covermode", "coverpkg",
			"coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "parallel",
			"cpu", "benchtime", "shuffle", "skip", "fuzz", "fuzztime", "fuzzminimizetime", "list", "installsuffix",
			"gccgoflags", "pgo"},
		runs: []string{"toolexec", "vettool", "exec"},
	}},
	"sdiff":  {spec: argSpec{short: "IoW", long: []string{"diff-program", "output", "ignore-matching-lines", "width", "tabsize"}, runs: []string{"diff-program"}, writes: []string{"o", "output"}}},
	"diff3":  {spec: argSpec{short: "L", long: []string{"diff-program", "label"}, runs: []string{"diff-program"}}},
	"pandoc": {spec: argSpec{short: "FLofrtMVd", long: []string{"filter", "lua-filter", "output", "from", "read", "to", "write", "metadata", "variable", "defaults", "extract-media", "log", "template", "data-dir"}, runs: []string{"F", "filter", "L", "lua-filter"}, writes: []string{"extract-media", "log"}}},
	"xxd":    {files: xxdFiles},
	// The last operand is the output (ffmpeg -i IN OUT, convert IN OUT).
	"ffmpeg":  {spec: argSpec{oneDash: true, long: []string{"i", "f", "c", "codec", "map", "ss", "t", "to", "vf", "af", "filter_complex", "b", "r", "s", "preset", "crf"}}, written: lastOperand},
	"convert": {written: lastOperand},
	"magick":  {written: lastOperand},
	"objcopy": {written: after(1)},
	"strip": {spec: argSpec{short: "FIOoRNK", long: []string{"output-file", "target", "input-target", "output-target", "remove-section", "strip-symbol", "keep-symbol"}}, written: func(p parsedArgs) []word {
		if p.has("o", "output-file") {
			return nil
		}
		return p.operands
	}},
}

// tarProgram is GNU tar's (and bsdtar's) table: the options that run compressors,
// scripts and remote shells, and the files it writes besides the archive's members.
var tarProgram = program{
	spec: argSpec{
		short:    "bCfFgHIKLNTVX",
		oldStyle: true,
		long: []string{"use-compress-program", "to-command", "checkpoint-action", "info-script", "new-volume-script",
			"rsh-command", "rmt-command", "file", "listed-incremental", "index-file", "volno-file", "directory", "files-from",
			"exclude-from", "exclude", "format", "blocking-factor", "label", "newer", "newer-mtime", "after-date",
			"starting-file", "tape-length", "owner", "group", "mode", "mtime", "transform", "xform", "suffix", "sort",
			"quoting-style", "record-size", "strip-components", "warning", "exclude-tag", "exclude-tag-all",
			"exclude-tag-under", "owner-map", "group-map", "pax-option", "hole-detection", "exclude-ignore",
			"exclude-ignore-recursive", "level", "clamp-mtime", "set-mtime-format"},
		longOptional: []string{"checkpoint", "backup", "occurrence", "one-top-level", "atime-preserve"},
		runs:         []string{"I", "use-compress-program", "to-command", "F", "info-script", "new-volume-script", "rsh-command", "rmt-command"},
		writes:       []string{"g", "listed-incremental", "index-file", "volno-file"},
	},
}

// tar judges what tarProgram's table cannot say: --checkpoint-action=exec=CMD runs
// CMD, an archive named host:file is reached through a remote shell, and in create
// mode (-c, -r, -u, -A, --delete) the archive is a file tar writes.
func (an *analyzer) tar(r *optionRun, p parsedArgs) {
	for _, o := range p.opts {
		if o.name == "checkpoint-action" && (!o.arg.lit || strings.HasPrefix(o.arg.val, "exec")) {
			text := o.arg
			if text.lit {
				_, v, _ := strings.Cut(text.val, "=")
				text = word{val: v, src: v, lit: true}
			}
			an.runs(r, "--checkpoint-action", text)
		}
	}
	create := p.has("c", "r", "u", "A", "create", "append", "update", "catenate", "concatenate", "delete")
	for _, o := range p.opts {
		if o.name != "f" && o.name != "file" || o.arg.src == "" {
			continue
		}
		if o.arg.lit && remotePath(o.arg.val) && !p.has("force-local") {
			an.runs(r, "-f", word{})
		}
		if create && !(o.arg.lit && o.arg.val == "-") {
			// Creating an archive makes no links: the archive is not a write that
			// this tar's links may redirect.
			an.place(o.arg)
		}
	}
}

// chmodFiles returns the files chmod, chown or chgrp (named name) changes: the operands
// after the mode or owner (all of them with --reference). A word with a dash that is
// not one of their flags is a mode (chmod -x f).
func chmodFiles(name string, args []word) []word {
	flags := "cfvR"
	if name != "chmod" {
		flags = "cfvhRHLP"
	}
	var operands []word
	reference := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit || !strings.HasPrefix(a.val, "-") || a.val == "-":
			operands = append(operands, a)
		case a.val == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a.val, "--"):
			opt, _, hasVal := strings.Cut(a.val[2:], "=")
			if strings.HasPrefix("reference", opt) && len(opt) > 2 {
				reference = true
				if !hasVal {
					i++
				}
			}
			if strings.HasPrefix("from", opt) && len(opt) > 1 && !hasVal {
				i++
			}
		case strings.Trim(a.val[1:], flags) == "":
		default:
			operands = append(operands, a) // a mode: chmod -x f
		}
	}
	if reference {
		return operands
	}
	if len(operands) == 0 {
		return nil
	}
	return operands[1:]
}

// xxdFiles returns the file xxd writes: its second operand (xxd IN OUT, xxd -r IN
// OUT). Its options taking a value take it attached when it is a number (-c16) and in
// the next word otherwise (-c 16, -cols 16).
func xxdFiles(args []word) []word {
	var operands []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit || a.val == "-" || !strings.HasPrefix(a.val, "-"):
			operands = append(operands, a)
		case strings.IndexByte("cglosnR", a.val[1]) >= 0:
			rest := a.val[2:]
			attached := rest != "" && (rest[0] >= '0' && rest[0] <= '9' || rest[0] == '+' || rest[0] == '-')
			if !attached && !(a.val[1] == 'c' && strings.HasPrefix(rest, "ap")) {
				i++
			}
		}
	}
	if len(operands) < 2 {
		return nil
	}
	return operands[1:]
}

// compilerFamily reports the C compilers and their kin (gcc-12, clang++, cc).
func compilerFamily(name string) bool {
	family := strings.TrimRight(name, "0123456789.-")
	switch family {
	case "gcc", "g++", "cc", "c++", "clang", "clang++", "gfortran", "tcc":
		return true
	}
	return strings.HasSuffix(family, "-gcc") || strings.HasSuffix(family, "-g++")
}

// compiler judges a compiler's options that run programs (-wrapper, -B, -fplugin=,
// -specs=) and its dependency file (-MF).
func (an *analyzer) compiler(name string, ws []word) {
	args := ws[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		v := a.val
		switch {
		case v == "-wrapper" || v == "-B" || v == "-MF":
			if i+1 < len(args) {
				i++
				if v == "-MF" {
					an.write(args[i])
				} else {
					an.danger("runs a program or command its options name: " + shorten(name+" "+v+" "+args[i].src))
				}
			}
		case strings.HasPrefix(v, "-MF"):
			an.write(word{val: v[3:], src: v[3:], lit: true})
		case strings.HasPrefix(v, "-B") || strings.HasPrefix(v, "-fplugin=") || strings.HasPrefix(v, "-specs=") || strings.HasPrefix(v, "--specs="):
			an.danger("runs a program or command its options name: " + shorten(name+" "+v))
		}
	}
}

// compressorFamily reports the compressors that replace the files they are given.
func compressorFamily(name string) bool {
	switch name {
	case "gzip", "gunzip", "pigz", "unpigz", "bzip2", "bunzip2", "pbzip2", "xz", "unxz", "lzma", "unlzma",
		"zstd", "unzstd", "lz4", "lzip", "compress", "uncompress", "brotli":
		return true
	}
	return false
}
