package marketplacetest_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/sales"
)

func TestSendBuyerMessage_TheSellerReadsItOverHTTPAndMayAnswer(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	item, _ := mustMultiItem(t, srv, 3, 4)
	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	m := srv.SendBuyerMessage(t, o.PackID, "¿Cuándo llega?")
	is.Equal(m.From.UserID, srv.Buyer.ID)
	is.Equal(m.To.UserID, srv.Seller.ID)

	seller := srv.Client(srv.Seller.Token)
	path := fmt.Sprintf("/messages/packs/%d/sellers/%d?tag=post_sale", o.PackID, srv.Seller.ID)
	res := do(t, seller, "GET", path, nil)
	is.Equal(res.Status, 200)
	msgs := obj(t, res)["messages"].([]any)
	is.Equal(len(msgs), 1)
	is.Equal(msgs[0].(map[string]any)["id"], m.ID)
	res = do(t, seller, "POST", path, map[string]any{"from": map[string]any{"user_id": srv.Seller.ID},
		"to": map[string]any{"user_id": srv.Buyer.ID}, "text": "Mañana"})
	is.Equal(res.Status, 201) // the buyer wrote first: the seller answers

	// An order's id names its pack's conversation.
	srv.SendBuyerMessage(t, o.ID, "Gracias")
	res = do(t, seller, "GET", path+"&mark_as_read=false", nil)
	is.Equal(obj(t, res)["paging"].(map[string]any)["total"], 3.0)
}
