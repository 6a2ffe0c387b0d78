package marketplacetest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/marketplacetest"
)

func TestResetClock_BringsTheStateAndTheClockBackToTheStart(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	res, err := srv.Operator.Do(ctx, "POST", "/operator/users", map[string]any{"nickname": "LATER", "site_id": "MLA"})
	is.NoErr(err)
	is.Equal(res.Status, http.StatusCreated)
	is.NoErr(srv.Clock.Advance(10 * 24 * time.Hour))
	is.NoErr(srv.ResetClock())
	is.True(srv.Clock.Now().Equal(marketplacetest.DefaultStart)) // the clock is back at the start
	is.True(srv.StartTime().Equal(marketplacetest.DefaultStart))
	var users struct {
		Paging struct {
			Total int `json:"total"`
		} `json:"paging"`
	}
	res, err = srv.Operator.Do(ctx, "GET", "/operator/users", nil)
	is.NoErr(err)
	is.NoErr(res.Decode(&users))
	is.Equal(users.Paging.Total, 2) // the seller and the buyer only
	res, err = srv.Operator.Do(ctx, "GET", "/operator/clock", nil)
	is.NoErr(err)
	is.Equal(string(res.Body), `{"now":"2026-03-04T15:00:00Z"}`+"\n") // over HTTP too
}

func TestClient_DoWithSendsHeadersThatReplaceTheClientsOwn(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	seller := srv.Client(srv.Seller.Token)
	res, err := seller.DoWith(ctx, "GET", "/users/me", nil, http.Header{"Authorization": {"Bearer " + srv.Buyer.Token}})
	is.NoErr(err)
	var me struct {
		ID int64 `json:"id"`
	}
	is.NoErr(res.Decode(&me))
	is.Equal(me.ID, srv.Buyer.ID) // the header given replaced the client's token
	// The stock PUT checks x-version first: without it a 400, with it the
	// next check (an unknown user product, 404).
	path := "/user-products/MLAU399999999/stock/type/seller_warehouse"
	body := map[string]any{"locations": []map[string]any{{"store_id": srv.Seller.Stores[0].ID, "quantity": 1}}}
	res, err = seller.Do(ctx, "PUT", path, body)
	is.NoErr(err)
	is.Equal(res.Status, http.StatusBadRequest) // Do sends no x-version
	res, err = seller.DoWith(ctx, "PUT", path, body, http.Header{"X-Version": {"1"}})
	is.NoErr(err)
	is.Equal(res.Status, http.StatusNotFound) // x-version was sent
}
