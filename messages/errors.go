package messages

import (
	"fmt"

	"github.com/marketplace/marketplace/errs"
)

// Shape is the body an error of this package is answered with. Most are
// the platform's standard body; the messaging routes answer some refusals
// in shapes of their own (spec section 2, variant B).
type Shape uint8

const (
	// ShapeStandard is {message, error, status, cause: []}.
	ShapeStandard Shape = iota
	// ShapeStatusCode is {status_code, code, message}: a send refused
	// because the conversation is blocked.
	ShapeStatusCode
	// ShapeCause is {cause, error, message, status_code}, cause a string:
	// the action guide's refusals.
	ShapeCause
)

// Error is a refusal of this package that the public API answers other
// than its kind alone says: in another body shape, or with a status no
// kind has (422 for an attachment key). Its Err is the domain error that
// carries the kind, the code and the message, so that an adapter that
// knows nothing of Error answers it in the standard shape.
type Error struct {
	Err *errs.Error
	// Shape is the body's shape.
	Shape Shape
	// Unprocessable answers 422 Unprocessable Entity rather than the
	// kind's status.
	Unprocessable bool
	// Cause is the cause string of a ShapeCause body.
	Cause string
}

// Error returns the domain error's text.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the domain error, for errors.As and errs.As.
func (e *Error) Unwrap() error { return e.Err }

func shaped(shape Shape, err *errs.Error, cause string) *Error {
	return &Error{Err: err, Shape: shape, Cause: cause}
}

// The error messages of the spec, where a test or another package names
// them.
const (
	// MsgBlocked is the message of a send refused because the conversation
	// is blocked (variant B).
	MsgBlocked = "blocked_conversation_send_message_forbidden"
	// MsgTagRequired answers a messages route called without
	// tag=post_sale.
	MsgTagRequired = "Resource not found: the query parameter tag=post_sale is required"
	// MsgResourceNotFound answers the removed GET /messages/orders/{id}.
	MsgResourceNotFound = "Resource not found."
)

func errTagRequired() error { return errs.WithCode(errs.NotFound, "not_found", MsgTagRequired) }

// ErrRemovedRoute is the answer of the legacy routes the public API
// removed (GET /messages/orders/{order_id}).
func ErrRemovedRoute() error { return errs.WithCode(errs.NotFound, "not_found", MsgResourceNotFound) }

func errPackNotFound(id string) error {
	return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("The pack %s was not found", id))
}

func errTokenForResource(resource string) error {
	return errs.WithCode(errs.Forbidden, "forbidden", "User access token invalid for resource "+resource)
}

func errBlocked() error {
	return shaped(ShapeStatusCode, errs.WithCode(errs.Forbidden, "forbidden", MsgBlocked), "")
}

func errUnprocessableAttachment() error {
	return &Error{Err: errs.WithCode(errs.Invalid, "unprocessable_entity", "Attachment key is invalid or not found"), Unprocessable: true}
}

// guideError is a refusal of the action guide (variant B, with a cause).
func guideError(kind errs.Kind, code, message, cause string) error {
	if cause == "" {
		cause = code
	}
	return shaped(ShapeCause, errs.WithCode(kind, code, message), cause)
}

func invalid(message string) error { return errs.WithCode(errs.Invalid, "bad_request", message) }
