package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/notify"
)

// handleCreateApplication answers POST /operator/applications.
func (s *Server) handleCreateApplication(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in notify.NewApplication
	if err := decode(r, &in); err != nil {
		return err
	}
	app, err := s.m.Notify.CreateApplication(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, app)
	return nil
}

// handleGetApplication answers GET /operator/applications/:app_id.
func (s *Server) handleGetApplication(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "app_id")
	if err != nil {
		return err
	}
	app, err := s.m.Notify.Application(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, app)
	return nil
}

// handleUpdateApplication answers PUT /operator/applications/:app_id: the
// fields sent (callback_url, topics) replace the stored ones.
func (s *Server) handleUpdateApplication(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "app_id")
	if err != nil {
		return err
	}
	var in notify.ApplicationUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	app, err := s.m.Notify.UpdateApplication(r.Context(), id, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, app)
	return nil
}

// deliveriesResponse is the answer of the operator's attempt list.
type deliveriesResponse struct {
	Paging  paging           `json:"paging"`
	Results []notify.Attempt `json:"results"`
}

// handleListDeliveries answers GET /operator/applications/:app_id/deliveries:
// every POST made to the application, newest first.
func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "app_id")
	if err != nil {
		return err
	}
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	attempts, total, err := s.m.Notify.Attempts(r.Context(), id, pg.Offset, pg.Limit)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, deliveriesResponse{
		Paging:  paging{Total: total, Offset: pg.Offset, Limit: pg.Limit},
		Results: attempts,
	})
	return nil
}

// missedFeedsResponse is the answer of the missed feed.
type missedFeedsResponse struct {
	Messages []notify.MissedMessage `json:"messages"`
}

// handleMissedFeeds answers GET /missed_feeds?app_id=&topic=&offset=&limit=
// for the application's owner.
func (s *Server) handleMissedFeeds(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	q := r.URL.Query()
	appID, err := requiredIDQuery(r, "app_id")
	if err != nil {
		return err
	}
	pg, err := readPage(r, notify.MissedFeedsDefaultLimit)
	if err != nil {
		return err
	}
	msgs, err := s.m.Notify.MissedFeeds(r.Context(), caller, notify.FeedQuery{
		AppID: appID, Topic: q.Get("topic"), Offset: pg.Offset, Limit: pg.Limit,
	})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, missedFeedsResponse{Messages: msgs})
	return nil
}
