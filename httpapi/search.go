package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/stock"
)

// searchSeller is the seller of a search result.
type searchSeller struct {
	ID int64 `json:"id"`
}

// searchResult is one element of results in the site search answer.
type searchResult struct {
	ID                string       `json:"id"`
	SiteID            string       `json:"site_id"`
	Title             string       `json:"title"`
	Price             json.Number  `json:"price"`
	CurrencyID        string       `json:"currency_id"`
	AvailableQuantity int64        `json:"available_quantity"`
	Condition         string       `json:"condition"`
	ListingTypeID     string       `json:"listing_type_id"`
	Permalink         string       `json:"permalink"`
	Thumbnail         string       `json:"thumbnail"`
	Seller            searchSeller `json:"seller"`
	CategoryID        string       `json:"category_id"`
	UserProductID     string       `json:"user_product_id"`
	CatalogProductID  *string      `json:"catalog_product_id"`
	CatalogListing    bool         `json:"catalog_listing"`
}

// searchSort is a sort of the search answer.
type searchSort struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// searchResponse is the site search envelope.
type searchResponse struct {
	SiteID           string         `json:"site_id"`
	Query            string         `json:"query"`
	Paging           paging         `json:"paging"`
	Results          []searchResult `json:"results"`
	Sort             searchSort     `json:"sort"`
	AvailableSorts   []searchSort   `json:"available_sorts"`
	Filters          []any          `json:"filters"`
	AvailableFilters []any          `json:"available_filters"`
}

// handleSiteSearch answers GET /sites/:site_id/search?q=&sort=&limit=&offset=.
func (s *Server) handleSiteSearch(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	sq := stock.SearchQuery{SiteID: p.ByName("site_id"), Q: q.Get("q"), Sort: q.Get("sort"), Offset: pg.Offset, Limit: pg.Limit}
	res, err := s.m.Stock.Search(r.Context(), sq)
	if err != nil {
		return err
	}
	out := searchResponse{
		SiteID: sq.SiteID, Query: sq.Q,
		Paging:  paging{Total: res.Total, Offset: pg.Offset, Limit: pg.Limit},
		Results: make([]searchResult, 0, len(res.Results)),
		Filters: []any{}, AvailableFilters: []any{}, AvailableSorts: []searchSort{},
	}
	for _, it := range res.Results {
		out.Results = append(out.Results, searchResult{
			ID: it.ID, SiteID: it.SiteID, Title: it.Title, Price: it.Price, CurrencyID: it.CurrencyID,
			AvailableQuantity: it.AvailableQuantity, Condition: it.Condition, ListingTypeID: it.ListingTypeID,
			Permalink: it.Permalink, Thumbnail: it.Thumbnail, Seller: searchSeller{ID: it.SellerID},
			CategoryID: it.CategoryID, UserProductID: it.UserProductID,
			CatalogProductID: it.CatalogProductID, CatalogListing: it.CatalogListing,
		})
	}
	for _, n := range stock.SortNames {
		if n.ID == res.Sort {
			out.Sort = searchSort{ID: n.ID, Name: n.Name}
		} else {
			out.AvailableSorts = append(out.AvailableSorts, searchSort{ID: n.ID, Name: n.Name})
		}
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
