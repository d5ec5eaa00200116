// Package search holds the built-in search tools, named and shaped as Gemini CLI declares
// them: glob (files by name) and grep_search (file contents by regular expression; its
// earlier name search_file_content is accepted as an alias, never declared).
//
// grep_search runs ripgrep when it is installed and a pure-Go search otherwise; both
// engines produce the same output for the same tree, so which one ran never shows. The
// pattern is always Go (RE2) syntax: it is validated with Go's regexp package and, for
// ripgrep, printed from Go's parse tree in an equivalent Rust form. Documents open in the
// editor are searched in their unsaved form by either engine.
package search

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Options configure the search tools.
type Options struct {
	// Ripgrep is the rg binary: "" looks it up on PATH; "none" forces the pure-Go search.
	Ripgrep string
}

// Tools returns the search tools over ws: glob and grep_search.
func Tools(ws *workspace.Workspace, opts Options) []tools.Tool {
	return []tools.Tool{&globTool{ws: ws}, &grepTool{ws: ws, rg: findRipgrep(opts.Ripgrep)}}
}

// findRipgrep returns the path of the rg binary to use, or "" for the pure-Go search.
func findRipgrep(want string) string {
	switch want {
	case "none":
		return ""
	case "":
		p, err := exec.LookPath("rg")
		if err != nil {
			slog.Debug("ripgrep not found on PATH; grep_search uses the pure-Go search")
			return ""
		}
		return p
	default:
		p, err := exec.LookPath(want)
		if err != nil {
			slog.Warn("configured ripgrep is unusable; grep_search uses the pure-Go search", "ripgrep", want, "err", err)
			return ""
		}
		return p
	}
}

// resolveDir resolves the dir_path argument of a search (empty: the first root) to an
// absolute directory inside the workspace.
func resolveDir(ws *workspace.Workspace, dirPath string) (string, error) {
	abs, err := resolvePath(ws, dirPath)
	if err != nil {
		return "", err
	}
	if err := checkDir(abs, dirPath); err != nil {
		return "", err
	}
	return abs, nil
}

// resolvePath resolves the dir_path argument of a search (empty: the first root) to an
// absolute path inside the workspace, without checking what it names.
func resolvePath(ws *workspace.Workspace, dirPath string) (string, error) {
	if strings.TrimSpace(dirPath) == "" {
		return ws.Roots()[0], nil
	}
	abs, err := ws.Resolve(dirPath)
	if err != nil {
		var outside *workspace.OutsideError
		if errors.As(err, &outside) {
			return "", tools.FileError(err)
		}
		return "", tools.Errorf(tools.ErrInvalidParams, "dir_path %q: %v", dirPath, err)
	}
	return abs, nil
}

// checkTarget is checkDir for grep_search, which searches a regular file as well as a
// directory; it reports whether abs is a file.
func checkTarget(abs, dirPath string) (bool, error) {
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return true, nil
	case err == nil && !fi.IsDir():
		return false, tools.Errorf(tools.ErrInvalidParams, "dir_path %q is neither a directory nor a regular file", dirPath)
	}
	return false, checkDir(abs, dirPath)
}

// checkDir reports, as a tool error, why abs (the resolution of dirPath) cannot be
// searched, if it cannot.
func checkDir(abs, dirPath string) error {
	if dirPath == "" {
		dirPath = abs
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Errorf(tools.ErrFileNotFound, "dir_path %q does not exist (resolved to %s)", dirPath, abs)
	case err != nil:
		return tools.FileError(fmt.Errorf("dir_path %q: %w", dirPath, err))
	case !fi.IsDir():
		return tools.Errorf(tools.ErrInvalidParams, "dir_path %q is a file, not a directory: search its directory instead (with include_pattern to pick files) or read it with read_file", dirPath)
	}
	return nil
}

// intArg checks an optional integer argument: present, whole and at least min.
func intArg(name string, v *float64, def, min int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v != float64(int64(*v)) {
		return 0, tools.Errorf(tools.ErrInvalidParams, "%s must be a whole number, not %v", name, *v)
	}
	if *v < float64(min) {
		return 0, tools.Errorf(tools.ErrInvalidParams, "%s must be at least %d, not %v", name, min, *v)
	}
	if *v > 1<<31 {
		return 1 << 31, nil
	}
	return int(*v), nil
}

// within reports whether p is dir or below it; both are clean absolute paths.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir) && len(p) > len(dir) && (p[len(dir)] == filepath.Separator || dir == string(filepath.Separator))
}

// relTo returns p relative to dir with slashes; p must be below dir.
func relTo(dir, p string) string {
	if dir == string(filepath.Separator) {
		return filepath.ToSlash(p[1:])
	}
	return filepath.ToSlash(p[len(dir)+1:])
}
