package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/stock"
)

func decodeNewItem(r *http.Request) (stock.NewItem, error) {
	var in stock.NewItem
	if err := decode(r, &in); err != nil {
		return stock.NewItem{}, err
	}
	return in, nil
}

// handlePublishItem answers POST /items: a single-origin item with
// available_quantity.
func (s *Server) handlePublishItem(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	in, err := decodeNewItem(r)
	if err != nil {
		return err
	}
	out, err := s.m.Stock.Publish(r.Context(), caller, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

// handlePublishMultiOrigin answers POST /items/multiwarehouse.
func (s *Server) handlePublishMultiOrigin(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	in, err := decodeNewItem(r)
	if err != nil {
		return err
	}
	out, err := s.m.Stock.PublishMultiOrigin(r.Context(), caller, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

// handlePostItemName answers POST /items/multiwarehouse, which the router
// serves through POST /items/:item_id: httprouter cannot hold the name
// beside the parameter of POST /items/:item_id/relist. Any other name is
// no route.
func (s *Server) handlePostItemName(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if p.ByName("item_id") != "multiwarehouse" {
		return &httpError{status: http.StatusNotFound, code: "not_found",
			message: "Resource " + r.Method + " " + r.URL.Path + " not found"}
	}
	return s.handlePublishMultiOrigin(w, r, p, caller)
}

// handleRelistItem answers POST /items/:item_id/relist {price, quantity,
// listing_type_id, stock_locations} with the new item (201).
func (s *Server) handleRelistItem(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	var in stock.RelistInput
	if err := decode(r, &in); err != nil {
		return err
	}
	out, err := s.m.Stock.Relist(r.Context(), caller, p.ByName("item_id"), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, out)
	return nil
}

// handleGetItem answers GET /items/:item_id.
func (s *Server) handleGetItem(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	it, err := s.m.Stock.Item(r.Context(), p.ByName("item_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, it)
	return nil
}

// handleUpdateItem answers PUT /items/:item_id (status, price, title).
func (s *Server) handleUpdateItem(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	var in stock.ItemUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	it, err := s.m.Stock.UpdateItem(r.Context(), caller, p.ByName("item_id"), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, it)
	return nil
}

// handleGetStock answers GET /user-products/:user_product_id/stock with the
// version in x-version.
func (s *Server) handleGetStock(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	st, err := s.m.Stock.Stock(r.Context(), caller, p.ByName("user_product_id"))
	if err != nil {
		return err
	}
	w.Header().Set("x-version", strconv.FormatInt(st.Version, 10))
	s.writeJSON(w, http.StatusOK, st)
	return nil
}

// stockPutBody is the body of the stock PUT.
type stockPutBody struct {
	Locations []stock.StockLocation `json:"locations"`
}

// handlePutStock answers PUT
// /user-products/:user_product_id/stock/type/seller_warehouse; the new
// version goes in x-version.
func (s *Server) handlePutStock(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var in stockPutBody
	// An empty body sends no store: the domain answers the spec's "Store
	// cannot be null or empty", after the x-version checks.
	if len(bytes.TrimSpace(b)) > 0 {
		if err := decodeBytes(b, &in); err != nil {
			return err
		}
	}
	version, err := stock.ParseVersion(r.Header.Get("x-version"))
	if err != nil {
		return err
	}
	out, err := s.m.Stock.PutStock(r.Context(), caller, p.ByName("user_product_id"), version, in.Locations)
	if err != nil {
		return err
	}
	w.Header().Set("x-version", strconv.FormatInt(out.Version, 10))
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
