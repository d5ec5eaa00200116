package tools

import (
	"errors"
	"fmt"
)

// ErrorType classifies a failed tool call. Its string value is what the model and the
// editor see.
type ErrorType string

// The error types of a tool call.
const (
	ErrInvalidParams         ErrorType = "invalid_tool_params"
	ErrNotRegistered         ErrorType = "tool_not_registered"
	ErrPathNotInWorkspace    ErrorType = "path_not_in_workspace"
	ErrFileNotFound          ErrorType = "file_not_found"
	ErrTargetIsDirectory     ErrorType = "target_is_directory"
	ErrFileTooLarge          ErrorType = "file_too_large"
	ErrPermissionDenied      ErrorType = "permission_denied"
	ErrNoSpaceLeft           ErrorType = "no_space_left"
	ErrReadContentFailure    ErrorType = "read_content_failure"
	ErrFileWriteFailure      ErrorType = "file_write_failure"
	ErrAttemptToCreateExists ErrorType = "attempt_to_create_existing_file"
	ErrEditNoOccurrence      ErrorType = "edit_no_occurrence_found"
	ErrEditOccurrenceCount   ErrorType = "edit_expected_occurrence_mismatch"
	ErrEditNoChange          ErrorType = "edit_no_change"
	ErrStaleContent          ErrorType = "stale_content"
	ErrShellExecute          ErrorType = "shell_execute_error"
	ErrExecutionFailed       ErrorType = "execution_failed"
	ErrTimeout               ErrorType = "timeout"
	ErrNetwork               ErrorType = "network_error"
	ErrPolicyViolation       ErrorType = "policy_violation"
	ErrCancelled             ErrorType = "cancelled"
	ErrUnhandledException    ErrorType = "unhandled_exception"
)

// Fatal reports whether an error of this type should stop the agent's turn rather than be
// handed back to the model to recover from. As in the reference design, only a full disk
// is: no later tool call can succeed until a person frees space.
func (t ErrorType) Fatal() bool { return t == ErrNoSpaceLeft }

// Retryable reports whether a call that failed this way may succeed if repeated unchanged.
// The scheduler retries such failures only for idempotent tools.
func (t ErrorType) Retryable() bool { return t == ErrTimeout || t == ErrNetwork }

// Error is a typed tool failure.
type Error struct {
	Type    ErrorType
	Message string
	// Err is the underlying cause, if any; it is not shown to the model.
	Err error
}

// Errorf returns an *Error of type t with a formatted message. A %w verb in format is
// kept as the cause.
func Errorf(t ErrorType, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Type: t, Message: err.Error(), Err: errors.Unwrap(err)}
}

func (e *Error) Error() string { return string(e.Type) + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

// AsError returns err as an *Error: itself if it is one (anywhere in its chain), else an
// *Error of type fallback carrying err's message.
func AsError(err error, fallback ErrorType) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Type: fallback, Message: err.Error(), Err: err}
}
