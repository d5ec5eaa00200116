// Package files holds agentls's built-in file tools — read_file, read_many_files,
// list_directory, write_file and replace — and notebook_edit, with the names, parameters and descriptions
// Gemini CLI 0.61 declares, so that prompts written for it work unchanged.
//
// Every path goes through workspace.Resolve, every read through the workspace (so the
// text of a document open in the editor is what a tool sees) and every write through
// workspace.Commit (so the front end decides how an edit lands).
package files

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Limits shared by the reading tools. They keep one call's output within what a model
// can use, and match Gemini CLI's defaults.
const (
	// maxFileBytes is the largest file any tool reads or edits.
	maxFileBytes = 20 << 20
	// maxLines is the most lines one read returns.
	maxLines = 2000
	// maxLineChars is the longest line returned in full; longer ones are cut.
	maxLineChars = 2000
	// truncatedMarker ends a line that was cut.
	truncatedMarker = "... [truncated]"
)

// Tools returns the built-in file tools over ws.
func Tools(ws *workspace.Workspace) []tools.Tool {
	return []tools.Tool{
		NewReadFile(ws),
		NewReadManyFiles(ws),
		NewListDirectory(ws),
		NewWriteFile(ws),
		NewReplace(ws),
		NewNotebookEdit(ws),
	}
}

// intParam converts an optional numeric parameter to an int of at least 1. JSON has no
// integers, so a model may send 10.0; the schema accepts it and so does this.
func intParam(name string, v *float64) (int, error) {
	if v == nil {
		return 0, nil
	}
	f := *v
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, tools.Errorf(tools.ErrInvalidParams, "%s must be a whole number, not %v", name, f)
	}
	if f < 1 {
		return 0, tools.Errorf(tools.ErrInvalidParams, "%s must be 1 or more, not %v", name, f)
	}
	if f > math.MaxInt32 {
		f = math.MaxInt32
	}
	return int(f), nil
}

// resolvePath confines p, the value of parameter param, to the workspace.
func resolvePath(ws *workspace.Workspace, param, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", tools.Errorf(tools.ErrInvalidParams, "%s must not be empty", param)
	}
	abs, err := ws.Resolve(p)
	if err != nil {
		te := tools.FileError(err)
		if te.Type == tools.ErrExecutionFailed {
			// Not outside, yet unresolvable (a NUL byte, a symlink loop): the
			// argument is at fault, not the machine.
			te = &tools.Error{Type: tools.ErrInvalidParams, Message: fmt.Sprintf("%s %q cannot be used: %v", param, p, err), Err: err}
		}
		return "", te
	}
	return abs, nil
}

// fileError maps err, from reading or writing abs, to a typed tool error whose message
// names the file as the model knows it and says what to do about it.
func fileError(ws *workspace.Workspace, abs string, err error) *tools.Error {
	te := tools.FileError(err)
	rel := ws.Rel(abs)
	msg := te.Message
	switch te.Type {
	case tools.ErrFileNotFound:
		msg = "File not found: " + rel
	case tools.ErrTargetIsDirectory:
		msg = fmt.Sprintf("Path is a directory, not a file: %s. Use list_directory to see what it holds.", rel)
	case tools.ErrFileTooLarge:
		msg = fmt.Sprintf("File is too large: %s is over the limit of %s.", rel, formatSize(maxFileBytes))
		if fi, serr := ws.Stat(abs); serr == nil {
			msg = fmt.Sprintf("File is too large: %s is %s, over the limit of %s.", rel, formatSize(fi.Size()), formatSize(maxFileBytes))
		}
	case tools.ErrPermissionDenied:
		msg = fmt.Sprintf("Permission denied: %s (%v)", rel, err)
	case tools.ErrStaleContent:
		msg = fmt.Sprintf("%s changed (on disk or in the editor) while the change was being written, so nothing was written%s. Read the file again and redo the change.", rel, strings.ReplaceAll(staleCause(te), abs, rel))
	case tools.ErrNoSpaceLeft:
		msg = fmt.Sprintf("No space left on the device while writing %s: %v", rel, err)
	}
	if msg == te.Message {
		return te
	}
	return &tools.Error{Type: te.Type, Message: msg, Err: err}
}

// staleCause returns what te says of why a write was refused as stale, such as the
// editor's reason for refusing an edit, as " (cause)" to append to the explanation; ""
// when it says no more than that the file changed.
func staleCause(te *tools.Error) string {
	cause := strings.TrimSpace(te.Message)
	cause = strings.TrimSuffix(cause, ": "+workspace.ErrStale.Error())
	cause = strings.TrimRight(cause, ". ")
	if cause == "" || cause == workspace.ErrStale.Error() {
		return ""
	}
	return " (" + cause + ")"
}

// readText reads the text of abs — from the editor's overlay when the document is open —
// for a tool that is about to verb it ("read", "edit", "overwrite"). A file that is not
// text gets an error saying why.
func readText(ws *workspace.Workspace, abs, verb string) (*workspace.File, error) {
	f, err := ws.ReadText(abs, maxFileBytes)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, workspace.ErrBinary) {
		return nil, notTextError(ws, abs, verb, err)
	}
	return nil, fileError(ws, abs, err)
}

// notTextError explains why abs, which workspace.Decode refused, cannot be handled as
// text: binary content, or text in an encoding other than UTF-8 and UTF-16, which would
// turn into mojibake if it were decoded as UTF-8.
func notTextError(ws *workspace.Workspace, abs, verb string, cause error) *tools.Error {
	data, err := ws.ReadBytes(abs, maxFileBytes)
	if err != nil {
		return fileError(ws, abs, err)
	}
	reason, legacy := notTextReason(data)
	msg := fmt.Sprintf("Cannot %s %s: %s.", verb, ws.Rel(abs), reason)
	if legacy {
		msg += " It is probably in a legacy encoding such as Latin-1 or Windows-1252; only UTF-8 and UTF-16 text (with a byte-order mark) can be read and edited. " +
			"Convert it to UTF-8 first (e.g. with iconv) if it must be changed."
	}
	return &tools.Error{Type: tools.ErrReadContentFailure, Message: msg, Err: cause}
}

func isUTF16(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF})
}

// notTextReason says in a phrase why data, which workspace.Decode refused, is not text,
// and whether it looks like text in a legacy 8-bit encoding.
func notTextReason(data []byte) (reason string, legacy bool) {
	body := bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	switch {
	case isUTF16(data):
		return "it starts with a UTF-16 byte-order mark but is not valid UTF-16 text", false
	case workspace.IsBinary(body):
		return "it is a binary file, not text", false
	case utf8.Valid(body):
		return "it is not text", false // Decode refused it for a reason not known here
	}
	at, line := invalidUTF8(body)
	return fmt.Sprintf("it is not valid UTF-8 text (byte 0x%02X on line %d is not UTF-8)", body[at], line), true
}

// invalidUTF8 returns the offset of the first byte of data that is not valid UTF-8 and
// its 1-based line. data must hold such a byte.
func invalidUTF8(data []byte) (offset, line int) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, bytes.Count(data[:i], []byte{'\n'}) + 1
		}
		i += size
	}
	return 0, 1
}

// normalizeNewlines turns CRLF into LF: tools work on LF text and the file's own line
// endings are restored when it is written.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r\n") {
		return s
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// formatSize renders a byte count for people and models: 512 B, 1.2 KB, 3.4 MB.
func formatSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	}
}

// statRegular checks that abs, which exists, is a regular file: reading a named pipe or
// a device would block or never end.
func statRegular(ws *workspace.Workspace, abs string) (fs.FileInfo, error) {
	fi, err := ws.Stat(abs)
	if err != nil {
		return nil, fileError(ws, abs, err)
	}
	if fi.IsDir() {
		return nil, fileError(ws, abs, fmt.Errorf("%s: %w", abs, workspace.ErrIsDirectory))
	}
	if !fi.Mode().IsRegular() {
		return nil, tools.Errorf(tools.ErrReadContentFailure, "Cannot read %s: it is not a regular file (%s).", ws.Rel(abs), workspace.FileKind(fi.Mode()))
	}
	return fi, nil
}

// filtering is Gemini CLI's file_filtering_options: which ignore files to honour.
type filtering struct {
	RespectGitIgnore    *bool `json:"respect_git_ignore,omitempty" schema:"default=true"`
	RespectGeminiIgnore *bool `json:"respect_gemini_ignore,omitempty" jsonschema:"Also .agentlsignore." schema:"default=true"`
}

// walkOptions combines the top-level respect_git_ignore with file_filtering_options:
// an ignore file is honoured unless either says not to.
func walkOptions(respectGit *bool, ff *filtering, defaultExcludes bool) workspace.WalkOptions {
	opts := workspace.WalkOptions{GitIgnore: true, AgentIgnore: true, DefaultExcludes: defaultExcludes}
	if respectGit != nil && !*respectGit {
		opts.GitIgnore = false
	}
	if ff != nil {
		if ff.RespectGitIgnore != nil && !*ff.RespectGitIgnore {
			opts.GitIgnore = false
		}
		if ff.RespectGeminiIgnore != nil && !*ff.RespectGeminiIgnore {
			opts.AgentIgnore = false
		}
	}
	return opts
}
