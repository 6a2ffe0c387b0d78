package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/questions"
)

// blockRequest is the body of POST /users/:user_id/questions_blacklist.
type blockRequest struct {
	UserID *int64 `json:"user_id"`
}

// handleBlock answers POST /users/:user_id/questions_blacklist {user_id}:
// 201 with the entry when added, 200 when the user was already blocked.
func (s *Server) handleBlock(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	seller, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	var in blockRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.UserID == nil {
		return errRequired("user_id")
	}
	added, err := s.m.Questions.Block(r.Context(), caller, seller, *in.UserID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
	}
	s.writeJSON(w, status, questions.BlacklistEntry{UserID: *in.UserID})
	return nil
}

// blacklistResponse is the answer of GET /users/:user_id/questions_blacklist.
type blacklistResponse struct {
	Users  []questions.BlacklistEntry `json:"users"`
	Paging paging                     `json:"paging"`
}

// handleBlacklist answers GET /users/:user_id/questions_blacklist.
func (s *Server) handleBlacklist(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	seller, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	users, total, err := s.m.Questions.Blacklist(r.Context(), caller, seller, pg.Offset, pg.Limit)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, blacklistResponse{Users: users, Paging: paging{Total: total, Offset: pg.Offset, Limit: pg.Limit}})
	return nil
}

// handleUnblock answers DELETE /users/:user_id/questions_blacklist/:blocked_id.
func (s *Server) handleUnblock(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	seller, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	// The spec names this segment {user_id}; httprouter needs another name
	// beside the seller's :user_id.
	user, err := positiveInt("user_id", p.ByName("blocked_id"))
	if err != nil {
		return err
	}
	if err := s.m.Questions.Unblock(r.Context(), caller, seller, user); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, questions.BlacklistEntry{UserID: user})
	return nil
}
