// Package errs holds the error kinds, codes and messages that every domain
// package returns. It is a leaf: it imports nothing of the project, so any
// package can use it without an import cycle.
//
// A domain error carries three things the HTTP adapter needs to answer in the
// spec's body shape {message, error, status, cause}: a Kind (mapped to the
// status in one place, httpapi/errors.go), the error Code and the exact
// Message. Anything that is not an *Error counts as Internal.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error. The list is short and append-only.
type Kind int

const (
	// Internal is a failure of the service itself, never of the input.
	Internal Kind = iota
	// Invalid means the input breaks a rule; nothing was changed.
	Invalid
	// Unauthorized means the caller could not be identified.
	Unauthorized
	// Forbidden means the caller is known but may not do this.
	Forbidden
	// NotFound means the addressed resource does not exist (for this caller).
	NotFound
	// Conflict means the write lost a race or carried a stale version.
	Conflict
	// InsufficientStorage means the change was refused because the store's
	// disk is (nearly) full; nothing was changed, and the same change may
	// succeed once space is freed.
	InsufficientStorage
	// Unavailable means the store cannot be reached right now (a database
	// server that is down or restarting); the same request may succeed
	// later, with no change on the caller's side.
	Unavailable
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Unauthorized:
		return "unauthorized"
	case Forbidden:
		return "forbidden"
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case InsufficientStorage:
		return "insufficient_storage"
	case Unavailable:
		return "unavailable"
	default:
		return "internal"
	}
}

// DefaultCode is the error code used when a rule gives none of its own; it is
// the value of the "error" field of the body.
func (k Kind) DefaultCode() string {
	switch k {
	case Invalid:
		return "bad_request"
	case Unauthorized:
		return "unauthorized"
	case Forbidden:
		return "forbidden"
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case InsufficientStorage:
		return "insufficient_storage"
	case Unavailable:
		return "service_unavailable"
	default:
		return "internal_error"
	}
}

// Cause is one entry of the body's cause array. The spec gives its shape only
// as "array"; we fill it with {code, message} objects where a rule has more
// to say than the message.
type Cause struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is a domain error.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Causes  []Cause
	// Description is the OAuth 2 error_description (RFC 6749 5.2) that the
	// token endpoint adds to the body; empty elsewhere, and then not shown.
	Description string
	// Err is an underlying error kept for logs; it is never shown to callers.
	Err error
}

// Error returns the code and the message, and the underlying error when
// there is one, for logs; callers are shown only Code and Message.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the underlying error, so that errors.Is and errors.As see it.
func (e *Error) Unwrap() error { return e.Err }

// New builds an error of kind k with the kind's default code.
func New(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Code: k.DefaultCode(), Message: fmt.Sprintf(format, args...)}
}

// WithCode builds an error of kind k with an explicit code and an exact message
// (no formatting, so that a spec message containing braces stays as it is).
func WithCode(k Kind, code, message string) *Error {
	return &Error{Kind: k, Code: code, Message: message}
}

// Invalidf builds an Invalid error.
func Invalidf(format string, args ...any) *Error { return New(Invalid, format, args...) }

// NotFoundf builds a NotFound error.
func NotFoundf(format string, args ...any) *Error { return New(NotFound, format, args...) }

// Forbiddenf builds a Forbidden error.
func Forbiddenf(format string, args ...any) *Error { return New(Forbidden, format, args...) }

// Conflictf builds a Conflict error.
func Conflictf(format string, args ...any) *Error { return New(Conflict, format, args...) }

// Unauthorizedf builds an Unauthorized error.
func Unauthorizedf(format string, args ...any) *Error { return New(Unauthorized, format, args...) }

// Internalf wraps err as an Internal error with context for the logs.
func Internalf(err error, format string, args ...any) *Error {
	e := New(Internal, format, args...)
	e.Err = err
	return e
}

// WithDescription returns e with the OAuth 2 error_description set.
func (e *Error) WithDescription(d string) *Error {
	e.Description = d
	return e
}

// WithCauses returns e with causes appended.
func (e *Error) WithCauses(causes ...Cause) *Error {
	e.Causes = append(e.Causes, causes...)
	return e
}

// KindOf returns the kind of err; an error that is not an *Error is Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is a domain error of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// As returns the domain error inside err, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
