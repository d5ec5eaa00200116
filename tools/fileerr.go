package tools

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/agentls/agentls/workspace"
)

// FileError turns an error from package workspace or the file system into a typed tool
// error, keeping its message.
func FileError(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var outside *workspace.OutsideError
	t := ErrExecutionFailed
	switch {
	case errors.As(err, &outside):
		t = ErrPathNotInWorkspace
	case errors.Is(err, workspace.ErrStale):
		t = ErrStaleContent
	case errors.Is(err, fs.ErrNotExist):
		t = ErrFileNotFound
	case errors.Is(err, fs.ErrExist):
		t = ErrAttemptToCreateExists
	case errors.Is(err, workspace.ErrIsDirectory), errors.Is(err, syscall.EISDIR):
		t = ErrTargetIsDirectory
	case errors.Is(err, workspace.ErrTooLarge):
		t = ErrFileTooLarge
	case errors.Is(err, workspace.ErrBinary):
		t = ErrReadContentFailure
	case errors.Is(err, fs.ErrPermission):
		t = ErrPermissionDenied
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		t = ErrNoSpaceLeft
	}
	return &Error{Type: t, Message: err.Error(), Err: err}
}
