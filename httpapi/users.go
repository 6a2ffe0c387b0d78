package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/accounts"
)

// handleHealth answers GET /health: the process is up and serving.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleGetUser answers GET /users/:user_id (and GET /users/me): the whole
// record for the user itself, the public subset for anyone else.
func (s *Server) handleGetUser(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := userIDParam(p, caller)
	if err != nil {
		return err
	}
	u, err := s.m.Accounts.UserFor(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeUserView(w, u)
	return nil
}

// storeSearchResponse is the answer of the store search.
type storeSearchResponse struct {
	Paging  paging           `json:"paging"`
	Results []accounts.Store `json:"results"`
}

// handleSearchStores answers GET /users/:user_id/stores/search?tags=...
func (s *Server) handleSearchStores(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := userIDParam(p, caller)
	if err != nil {
		return err
	}
	pg, q, err := readStoreQuery(r)
	if err != nil {
		return err
	}
	stores, total, err := s.m.Accounts.SearchStores(r.Context(), caller, id, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, storeSearchResponse{
		Paging:  paging{Total: total, Offset: pg.Offset, Limit: pg.Limit},
		Results: stores,
	})
	return nil
}

// userIDParam reads :user_id, where "me" is the caller: the public API's way
// to learn the id behind a token (httprouter cannot route a static "me"
// segment beside :user_id).
func userIDParam(p httprouter.Params, caller int64) (int64, error) {
	if p.ByName("user_id") == "me" {
		if caller == 0 {
			return 0, errNoToken // "me" is the token's user: there is none
		}
		return caller, nil
	}
	return int64Param(p, "user_id")
}

// readStoreQuery reads a store search's page and its comma-separated tags,
// every one of which a store must have.
func readStoreQuery(r *http.Request) (page, accounts.StoreQuery, error) {
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return page{}, accounts.StoreQuery{}, err
	}
	q := accounts.StoreQuery{Offset: pg.Offset, Limit: pg.Limit}
	for _, t := range strings.Split(r.URL.Query().Get("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			q.Tags = append(q.Tags, t)
		}
	}
	return pg, q, nil
}
