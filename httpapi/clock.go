package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
)

// clockBody is the body of the clock routes. RFC 3339 with nanoseconds, so
// that a time read can be written back unchanged.
type clockBody struct {
	Now string `json:"now"`
}

func clockJSON(t time.Time) clockBody {
	return clockBody{Now: t.UTC().Format(time.RFC3339Nano)}
}

// errWallClock answers the clock routes of a server on the wall clock: the
// routes exist, but there is no clock the operator may move.
var errWallClock = errs.Conflictf("The server runs on the wall clock; start it with -clock manual to read and move its clock")

// handleGetClock answers GET /operator/clock.
func (s *Server) handleGetClock(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if s.cfg.ManualClock == nil {
		return errWallClock
	}
	s.writeJSON(w, http.StatusOK, clockJSON(s.cfg.ManualClock.Now()))
	return nil
}

// handlePutClock answers PUT /operator/clock {"now": "<RFC 3339>"}: the clock
// moves forward to now, and what the move makes due (the daily response time
// refresh) is done before the answer.
func (s *Server) handlePutClock(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if s.cfg.ManualClock == nil {
		return errWallClock
	}
	var in struct {
		Now *string `json:"now"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Now == nil {
		return errRequired("now")
	}
	t, err := time.Parse(time.RFC3339Nano, *in.Now)
	if err != nil {
		return errs.Invalidf("Invalid now: %q. It must be an RFC 3339 time, such as 2026-03-04T12:00:00-03:00", *in.Now)
	}
	if err := s.cfg.ManualClock.Set(t); err != nil {
		if errors.Is(err, clock.ErrBackwards) {
			return errs.Invalidf("The clock cannot move backwards: it is %s", clockJSON(s.cfg.ManualClock.Now()).Now)
		}
		return err
	}
	s.writeJSON(w, http.StatusOK, clockJSON(s.cfg.ManualClock.Now()))
	return nil
}
