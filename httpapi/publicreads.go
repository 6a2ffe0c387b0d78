package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/stock"
)

// handleSites answers GET /sites: [{default_currency_id, id, name}].
func (s *Server) handleSites(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ int64) error {
	out, err := s.m.Geo.SiteList(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleSite answers GET /sites/:site_id.
func (s *Server) handleSite(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Catalog.Site(r.Context(), p.ByName("site_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleSiteCategories answers GET /sites/:site_id/categories: the site's
// root categories, [{id, name}].
func (s *Server) handleSiteCategories(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Catalog.SiteCategories(r.Context(), p.ByName("site_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCategory answers GET /categories/:category_id.
func (s *Server) handleCategory(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Catalog.Category(r.Context(), p.ByName("category_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// multigetEntry is one element of a multiget answer: the status the by-id
// read would have answered, and its body.
type multigetEntry struct {
	Code int `json:"code"`
	Body any `json:"body"`
}

// idsParam reads the comma-separated ids query parameter; blanks between
// commas are no ids.
func idsParam(r *http.Request) []string {
	var ids []string
	for _, id := range strings.Split(r.URL.Query().Get("ids"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// entry is the multiget element of one result.
func (s *Server) entry(r *http.Request, v any, err error) multigetEntry {
	if err != nil {
		body := s.errorBodyOf(r, err)
		return multigetEntry{Code: body.Status, Body: body}
	}
	return multigetEntry{Code: http.StatusOK, Body: v}
}

// handleItemsMultiget answers GET /items?ids=A,B,C: [{code, body}], one per
// id in the order asked.
func (s *Server) handleItemsMultiget(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ int64) error {
	res, err := s.m.Stock.Items(r.Context(), idsParam(r))
	if err != nil {
		return err
	}
	out := make([]multigetEntry, len(res))
	for i, x := range res {
		out[i] = s.entry(r, x.Item, x.Err)
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleUsersMultiget answers GET /users?ids=1,2: [{code, body}], each user
// as the caller may see it.
func (s *Server) handleUsersMultiget(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	res, err := s.m.Accounts.UsersFor(r.Context(), caller, idsParam(r))
	if err != nil {
		return err
	}
	out := make([]multigetEntry, len(res))
	for i, x := range res {
		out[i] = s.entry(r, x.User, x.Err)
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// sellerItemsResponse is the answer of a seller's item search, in the
// public API's shape: query is null (the public API documents no text
// query on this route), orders the order applied and available_orders
// every order offered, the applied one included, as the public API lists
// them.
type sellerItemsResponse struct {
	SellerID        string             `json:"seller_id"`
	Query           *string            `json:"query"`
	Paging          paging             `json:"paging"`
	Results         []string           `json:"results"`
	Orders          []stock.SellerSort `json:"orders"`
	AvailableOrders []stock.SellerSort `json:"available_orders"`
}

// handleSellerItems answers GET
// /users/:user_id/items/search?status=&listing_type_id=&sku=&tags=&orders=&limit=&offset=:
// the seller's item ids; the seller's own token only.
func (s *Server) handleSellerItems(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := userIDParam(p, caller)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	pg, err := readPageOf(qv, defaultLimit)
	if err != nil {
		return err
	}
	q := stock.SellerItemsQuery{Status: qv.Get("status"), ListingTypeID: qv.Get("listing_type_id"), SKU: qv.Get("sku"),
		Sort: qv.Get("orders"), Offset: pg.Offset, Limit: pg.Limit}
	if q.SKU == "" {
		q.SKU = qv.Get("seller_sku")
	}
	for _, t := range strings.Split(qv.Get("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			q.Tags = append(q.Tags, t)
		}
	}
	res, err := s.m.Stock.SellerItems(r.Context(), caller, id, q)
	if err != nil {
		return err
	}
	out := sellerItemsResponse{
		SellerID: strconv.FormatInt(res.SellerID, 10),
		Paging:   paging{Total: res.Total, Offset: pg.Offset, Limit: pg.Limit},
		Results:  res.Results, Orders: []stock.SellerSort{}, AvailableOrders: stock.SellerSorts,
	}
	for _, o := range stock.SellerSorts {
		if o.ID == res.Sort {
			out.Orders = append(out.Orders, o)
		}
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
