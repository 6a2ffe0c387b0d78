package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/recording"
)

// recordingStatus is the answer of the recording routes that tell the
// state, WireMock's shape.
type recordingStatus struct {
	Status recording.Status `json:"status"`
}

// recordedMappings is the answer of a recording's stop and of a snapshot,
// WireMock's shape.
type recordedMappings struct {
	Mappings []json.RawMessage `json:"mappings"`
}

// handleStartRecording answers POST /operator/recordings/start: every
// request forwarded from now on, to targetBaseUrl (or the server's
// -upstream), is recorded until the recording stops.
func (s *Server) handleStartRecording(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var b json.RawMessage
	if err := decode(r, &b); err != nil {
		return err
	}
	spec, err := recording.ParseStart(b)
	if err != nil {
		return err
	}
	if spec.Target == nil && s.up.base == nil {
		return errs.Invalidf("Invalid recording field targetBaseUrl: it is required, as the server has no -upstream")
	}
	if err := s.up.session.Start(spec, s.cfg.RecordRepeats); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, recordingStatus{Status: recording.Recording})
	return nil
}

// handleRecordingStatus answers GET /operator/recordings/status.
func (s *Server) handleRecordingStatus(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	s.writeJSON(w, http.StatusOK, recordingStatus{Status: s.up.session.Status()})
	return nil
}

// handleStopRecording answers POST /operator/recordings/stop: the
// recording's mappings, also added to the stubs unless it was started
// with "persist": false.
func (s *Server) handleStopRecording(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	mappings, spec, err := s.up.session.Stop()
	if err != nil {
		return err
	}
	return s.answerRecorded(w, r.Context(), mappings, spec.Persist)
}

// handleSnapshot answers POST /operator/recordings/snapshot: the mappings
// of the exchanges forwarded lately (the journal's count of them, with a
// journal of bodies), whether or not a recording ran, also added to the
// stubs unless "persist" is false.
func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var b json.RawMessage
	if r.Body != nil && r.Body != http.NoBody {
		raw, err := readBody(r)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := decodeBytes(raw, &b); err != nil {
				return err
			}
		}
	}
	spec, err := recording.ParseSnapshot(b)
	if err != nil {
		return err
	}
	if s.up.log == nil {
		return errs.Conflictf("A snapshot draws on the journal's bodies: start the server with -journal-bodies, or record with POST /operator/recordings/start")
	}
	return s.answerRecorded(w, r.Context(), s.up.log.Snapshot(spec, s.cfg.RecordRepeats), spec.Persist)
}

// answerRecorded adds mappings to the stubs when persist says so, and
// answers them.
func (s *Server) answerRecorded(w http.ResponseWriter, ctx context.Context, mappings []json.RawMessage, persist bool) error {
	if mappings == nil {
		mappings = []json.RawMessage{}
	}
	if persist {
		for _, m := range mappings {
			if _, err := s.m.Stubs.Create(ctx, m); err != nil {
				return err
			}
		}
	}
	s.writeJSON(w, http.StatusOK, recordedMappings{Mappings: mappings})
	return nil
}
