package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// statusByKind is the one place where domain error kinds become HTTP statuses.
var statusByKind = map[errs.Kind]int{
	errs.Internal:     http.StatusInternalServerError,
	errs.Invalid:      http.StatusBadRequest,
	errs.Unauthorized: http.StatusUnauthorized,
	errs.Forbidden:    http.StatusForbidden,
	errs.NotFound:     http.StatusNotFound,
	errs.Conflict:     http.StatusConflict,
	// 507 rather than 503: the server is up and reads are served; it is
	// the change that cannot be stored (docs/spec-decisions.md).
	errs.InsufficientStorage: http.StatusInsufficientStorage,
	errs.Unavailable:         http.StatusServiceUnavailable,
}

// errNoSpace answers a write that the store refused for want of disk space.
var errNoSpace = errs.WithCode(errs.InsufficientStorage, "insufficient_storage", "Not enough disk space to store the change")

// errUnavailable answers a request that the store could not serve because
// it cannot be reached right now.
var errUnavailable = errs.WithCode(errs.Unavailable, "service_unavailable", "The service is temporarily unavailable, try again later")

// errRequestTimeout answers a request that ran out of its time
// (Config.RequestTimeout), or whose read the database stopped at its own
// bound: like an outage, it is worth trying again later.
var errRequestTimeout = errs.WithCode(errs.Unavailable, "request_timeout", "The request took longer than the server allows, try again later")

// errorBody is the spec's error body shape.
type errorBody struct {
	Message string `json:"message"`
	// ErrorDescription is sent by the OAuth 2 token endpoint only.
	ErrorDescription string `json:"error_description,omitempty"`
	Error            string `json:"error"`
	Status           int    `json:"status"`
	Cause            []any  `json:"cause"`
}

// httpError is an error that only the HTTP layer knows (no route, wrong
// method, body too large), with its own status.
type httpError struct {
	status  int
	code    string
	message string
}

func (e *httpError) Error() string { return e.message }

// writeError answers err in the error body shape. Internal errors are logged
// with their details and answered with a generic message. A token or the
// operator token quoted in a message (an id read from the path) is
// redacted, in the answer and in the log.
//
// A storage error that the caller can act on is answered as such whatever
// the domain wrapped it in (often an Internal error with the storage error as
// its cause): storage.ErrNoSpace is a 507, storage.ErrUnavailable a 503.
// An outage is logged as a warning with its cause, which the answer does
// not show.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	body := s.errorBodyOf(r, err)
	s.writeJSON(w, body.Status, body)
}

// errorBodyOf is the body and status that answer err, also where an error
// is one element of a larger answer (a multiget).
func (s *Server) errorBodyOf(r *http.Request, err error) errorBody {
	switch {
	case errors.Is(err, storage.ErrNoSpace):
		err = errNoSpace
	case errors.Is(err, storage.ErrUnavailable):
		s.logger.Warn("storage unavailable", "method", r.Method, "path", s.redact.Path(r.URL.Path), "err", s.redact.Text(err.Error()))
		err = errUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		s.logger.Warn("request timed out", "method", r.Method, "path", s.redact.Path(r.URL.Path), "err", s.redact.Text(err.Error()))
		err = errRequestTimeout
	}
	body := errorBody{Cause: []any{}}
	var he *httpError
	if errors.As(err, &he) {
		// The messages of no route quote the path, where a token may
		// have been written.
		body.Status, body.Error, body.Message = he.status, he.code, s.redact.Text(he.message)
	} else if de := errs.As(err); de != nil && de.Kind != errs.Internal {
		body.Status = statusByKind[de.Kind]
		body.Error = de.Code
		if body.Error == "" {
			body.Error = de.Kind.DefaultCode()
		}
		body.Message = s.redact.Text(de.Message)
		body.ErrorDescription = s.redact.Text(de.Description)
		for _, c := range de.Causes {
			c.Message = s.redact.Text(c.Message)
			body.Cause = append(body.Cause, c)
		}
	} else {
		s.logger.Error("internal error", "method", r.Method, "path", s.redact.Path(r.URL.Path), "err", s.redact.Text(err.Error()))
		body.Status = http.StatusInternalServerError
		body.Error = "internal_error"
		body.Message = "Internal server error"
	}
	return body
}

// errRequired is the public API's message for a missing body field.
func errRequired(field string) error {
	return errs.Invalidf("The fields [%s] are required for requested call", field)
}
