package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Memory files: instructions the user and the project keep for the agent.
const (
	// maxMemoryFile bounds what one memory file contributes, maxMemoryTotal all of
	// them, in bytes.
	maxMemoryFile  = 64 << 10
	maxMemoryTotal = 256 << 10
)

// memoryNames are the names of memory files, in the order they are read in a directory:
// AGENTS.md, the common name, and GEMINI.md, so that projects set up for Gemini CLI work
// unchanged.
var memoryNames = [...]string{"AGENTS.md", "GEMINI.md"}

// memoryFile is one memory file as the system instruction shows it.
type memoryFile struct {
	Path string
	Text string
	// Truncated reports that Text is only the beginning of the file.
	Truncated bool
}

// memoryDir is a directory whose memory files count, and the tree those files must lie
// in once symbolic links are followed ("" for anywhere).
type memoryDir struct {
	path, within string
	// file, when set, is the one memory file of the directory (an extension's
	// context file) instead of memoryNames.
	file string
}

// memoryDirs returns the directories whose memory files count, most general first: the
// user's configuration directory, then for each root every directory from its
// repository's top (the nearest ancestor holding .git, else the root itself) down to
// the root. The files of a root's directories must lie inside its repository's top: a
// project cannot make the agent read, and send to the model, a file of the user's
// elsewhere (AGENTS.md -> ~/.ssh/id_ed25519). The user's own directory may link
// anywhere.
func memoryDirs(env Environment) []memoryDir {
	var dirs []memoryDir
	seen := func(d string) bool {
		return slices.ContainsFunc(dirs, func(m memoryDir) bool { return m.path == d })
	}
	if env.ConfigDir != "" {
		dirs = append(dirs, memoryDir{path: filepath.Clean(env.ConfigDir)})
	}
	for _, f := range env.ContextFiles {
		dirs = append(dirs, memoryDir{path: filepath.Dir(f), file: filepath.Base(f)})
	}
	for _, root := range env.Roots {
		root = filepath.Clean(root)
		top := root
		for d := root; ; {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				top = d
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
		var chain []string
		for d := root; ; d = filepath.Dir(d) {
			chain = append(chain, d)
			if d == top {
				break
			}
		}
		slices.Reverse(chain)
		for _, d := range chain {
			if !seen(d) {
				dirs = append(dirs, memoryDir{path: d, within: top})
			}
		}
	}
	return dirs
}

// loadMemory reads the memory files of env, each up to maxMemoryFile bytes and all of
// them up to maxMemoryTotal. A file reached under several names (GEMINI.md linking to
// AGENTS.md) is read once. Files that cannot be read, that are not regular files, or
// that lead out of their project are left out with a warning.
func loadMemory(env Environment, logger *slog.Logger) []memoryFile {
	var files []memoryFile
	var read []string // the real paths of the files read
	budget := maxMemoryTotal
	dirs := memoryDirs(env)
	for _, dir := range dirs {
		names := memoryNames[:]
		if dir.file != "" {
			names = []string{dir.file}
		}
		for _, name := range names {
			if budget <= 0 {
				logger.Warn("memory files exceed the total limit; the rest are left out", "limit", maxMemoryTotal, "next", filepath.Join(dir.path, name))
				return files
			}
			path := filepath.Join(dir.path, name)
			real, err := filepath.EvalSymlinks(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				logger.Warn("memory file left out", "path", path, "err", err)
				continue
			}
			if dir.within != "" && !inside(dir.within, real) {
				logger.Warn("memory file left out: it links outside the project", "path", path, "target", real, "project", dir.within)
				continue
			}
			if slices.Contains(read, real) {
				continue
			}
			mf, err := readMemory(path, min(maxMemoryFile, budget))
			if err != nil {
				logger.Warn("memory file left out", "path", path, "err", err)
				continue
			}
			read = append(read, real)
			if strings.TrimSpace(mf.Text) == "" {
				continue
			}
			budget -= len(mf.Text)
			files = append(files, mf)
		}
	}
	return files
}

// inside reports whether the real path p lies in the tree of dir (whose own links are
// resolved here).
func inside(dir, p string) bool {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readMemory reads up to limit bytes of the memory file at path, cutting at a character
// boundary.
func readMemory(path string, limit int) (memoryFile, error) {
	// Look before opening: opening a named pipe for reading waits for a writer.
	if fi, err := os.Stat(path); err != nil {
		return memoryFile{}, err
	} else if !fi.Mode().IsRegular() {
		return memoryFile{}, fmt.Errorf("%s is a %s, not a file", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return memoryFile{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return memoryFile{}, err
	}
	if !fi.Mode().IsRegular() {
		return memoryFile{}, fmt.Errorf("%s is a %s, not a file", path, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return memoryFile{}, fmt.Errorf("reading %s: %w", path, err)
	}
	mf := memoryFile{Path: path}
	if len(data) > limit {
		data = data[:limit]
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0; i++ {
			if r, n := utf8.DecodeLastRune(data); r != utf8.RuneError || n > 1 {
				break
			}
			data = data[:len(data)-1]
		}
		mf.Truncated = true
	}
	mf.Text = string(data)
	return mf, nil
}

// formatMemory renders memory files for the system instruction, each with its path.
func formatMemory(files []memoryFile) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Memory\n\nThe user and the project keep these instructions and facts for you. " +
		"Follow them; the more specific (later) files take precedence over the general ones.\n")
	for _, f := range files {
		fmt.Fprintf(&b, "\n--- Context from: %s ---\n", f.Path)
		b.WriteString(f.Text)
		if !strings.HasSuffix(f.Text, "\n") {
			b.WriteByte('\n')
		}
		if f.Truncated {
			b.WriteString("[… the rest of this file is left out: it is too long]\n")
		}
		fmt.Fprintf(&b, "--- End of context from: %s ---\n", f.Path)
	}
	return b.String()
}
