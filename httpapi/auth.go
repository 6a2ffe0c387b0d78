package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
	"github.com/marketplace/marketplace/errs"
)

// token returns the access token of r: the Authorization header's bearer
// token, else the older access_token query parameter.
func token(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:])
		}
		return ""
	}
	return r.URL.Query().Get("access_token")
}

func hasCredentials(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.URL.Query().Has("access_token")
}

var errNoToken = &httpError{status: http.StatusUnauthorized, code: "unauthorized",
	message: "Missing access token: send Authorization: Bearer <token>"}

// authorize wraps e's handler in the check of who may call it.
func (s *Server) authorize(e endpoint) handlerFunc {
	switch e.who {
	case anyoneWithToken:
		return s.optionalUser(e.ah)
	case aUser:
		return s.user(e.ah)
	case theOperator:
		return s.operator(e.h)
	default:
		return e.h
	}
}

// user requires a user token.
func (s *Server) user(h authedFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		if !hasCredentials(r) {
			return errNoToken
		}
		caller, err := s.m.Accounts.Authenticate(r.Context(), token(r))
		if err != nil {
			return err
		}
		noteCaller(w, r, caller)
		return h(w, r, p, caller)
	}
}

// optionalUser accepts anonymous calls (caller 0); credentials that are sent
// must be valid.
func (s *Server) optionalUser(h authedFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		if !hasCredentials(r) {
			return h(w, r, p, 0)
		}
		caller, err := s.m.Accounts.Authenticate(r.Context(), token(r))
		if err != nil {
			return err
		}
		noteCaller(w, r, caller)
		return h(w, r, p, caller)
	}
}

// operator requires the operator token; a user token gets 403.
func (s *Server) operator(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		if !hasCredentials(r) {
			return errNoToken
		}
		tok := token(r)
		if s.cfg.OperatorToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.OperatorToken)) == 1 {
			return h(w, r, p)
		}
		if _, err := s.m.Accounts.Authenticate(r.Context(), tok); err != nil {
			return err
		}
		return errs.Forbiddenf("Operator routes need the operator token")
	}
}
