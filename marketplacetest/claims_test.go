package marketplacetest_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/sales"
)

func TestOpenClaim_TheSellerReturnsTheProductAndTheBuyerIsRefunded(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	item, _ := mustMultiItem(t, srv, 3, 4)
	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	srv.MoveShipment(t, *o.Shipping.ID, "shipped")
	srv.MoveShipment(t, *o.Shipping.ID, "delivered")
	c := srv.OpenClaim(t, o.ID, "PDD9549")
	is.Equal(c.Stage, "claim")

	seller := srv.Client(srv.Seller.Token)
	base := fmt.Sprintf("/post-purchase/v1/claims/%d", c.ID)
	is.Equal(do(t, seller, "POST", base+"/expected-resolutions/allow-return", nil).Status, 200)
	ret := obj(t, do(t, seller, "GET", fmt.Sprintf("/post-purchase/v2/claims/%d/returns", c.ID), nil))
	id := int64(ret["id"].(float64))
	srv.MoveReturn(t, id, "shipped")
	rt := srv.MoveReturn(t, id, "delivered")
	is.Equal(rt.Status, "delivered")
	res := do(t, seller, "POST", fmt.Sprintf("/post-purchase/v1/returns/%d/return-review", id), map[string]any{})
	is.Equal(res.Status, 200)
	is.Equal(obj(t, res)["status_money"], "refunded") // the seller's OK refunds the buyer
	is.Equal(obj(t, do(t, seller, "GET", base, nil))["status"], "closed")
}

func TestResolveClaim_TakesTheClaimToTheMediatorWhoDecides(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	item, _ := mustMultiItem(t, srv, 3, 4)
	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	c := srv.OpenClaim(t, o.ID, "PNR3430")
	c = srv.ResolveClaim(t, c.ID, "coverage_decision")
	is.Equal(c.Status, "closed")
	is.Equal(c.Resolution.ClosedBy, "mediator")
	is.True(c.Resolution.AppliedCoverage)
	order := obj(t, do(t, srv.Client(srv.Seller.Token), "GET", fmt.Sprintf("/orders/%d", o.ID), nil))
	is.Equal(order["payments"].([]any)[0].(map[string]any)["status"], "refunded") // decided for the buyer
}
