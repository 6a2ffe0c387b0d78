package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/notify"
	listpaging "github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/stock"
)

// listResponse is the answer of the operator lists: the paging object of
// every list of the API, and the records of the page.
type listResponse[T any] struct {
	Paging  paging `json:"paging"`
	Results []T    `json:"results"`
}

func newListResponse[T any](pg page, total int, results []T) listResponse[T] {
	return listResponse[T]{Paging: paging{Total: total, Offset: pg.Offset, Limit: pg.Limit}, Results: results}
}

// handleOperatorListUsers answers GET /operator/users?offset=&limit=: every
// user, whole, in id order.
func (s *Server) handleOperatorListUsers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	users, total, err := s.m.Accounts.Users(r.Context(), listpaging.Page{Offset: pg.Offset, Limit: pg.Limit})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newListResponse(pg, total, users))
	return nil
}

// handleOperatorListStores answers GET
// /operator/users/:user_id/stores?tags=&offset=&limit=: the user's stores,
// as the store search gives them to the user itself.
func (s *Server) handleOperatorListStores(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	pg, q, err := readStoreQuery(r)
	if err != nil {
		return err
	}
	stores, total, err := s.m.Accounts.UserStores(r.Context(), id, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newListResponse(pg, total, stores))
	return nil
}

// handleOperatorListItems answers GET
// /operator/items?seller_id=&offset=&limit=: the seller's items, whole,
// in the order of publication.
func (s *Server) handleOperatorListItems(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	seller, err := requiredIDQuery(r, "seller_id")
	if err != nil {
		return err
	}
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	list, err := s.m.Stock.SellerItemsOf(r.Context(), seller, listpaging.Page{Offset: pg.Offset, Limit: pg.Limit})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newListResponse[stock.Item](pg, list.Total, list.Results))
	return nil
}

// handleOperatorListApplications answers GET
// /operator/applications?owner_user_id=&offset=&limit=: every application
// (or one owner's), in id order.
func (s *Server) handleOperatorListApplications(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var owner int64
	if r.URL.Query().Has("owner_user_id") {
		var err error
		if owner, err = requiredIDQuery(r, "owner_user_id"); err != nil {
			return err
		}
	}
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	apps, total, err := s.m.Notify.Applications(r.Context(), notify.AppQuery{OwnerUserID: owner, Offset: pg.Offset, Limit: pg.Limit})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newListResponse(pg, total, apps))
	return nil
}
