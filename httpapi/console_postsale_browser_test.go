package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/sales"
)

// TestConsole_PostSaleScreenWritesAsTheBuyerAndPlaysTheClaimsOtherSide
// drives the Post-sale screen: the operator writes to the seller as the
// buyer, opens a claim for the buyer and sees the seller's actions with
// their due dates, the seller allows a return that the operator moves, and
// the buyer's escalation and the mediator's decision close the claim.
func TestConsole_PostSaleScreenWritesAsTheBuyerAndPlaysTheClaimsOtherSide(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	ctx := context.Background()
	paid, _ := seedOrders(t, srv)
	if _, err := srv.Marketplace.Sales.MoveShipment(ctx, shipmentOf(t, srv, paid), sales.ShipmentMove{Status: "shipped"}); err != nil {
		t.Fatalf("ship: %v", err)
	}
	if _, err := srv.Marketplace.Sales.MoveShipment(ctx, shipmentOf(t, srv, paid), sales.ShipmentMove{Status: "delivered"}); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	p := openConsole(t, srv)
	p.signIn()
	p.step("open the Post-sale screen", p.nav("postsale"))
	p.step("open the order's post-sale",
		chromedp.SendKeys("#ps-order", fmt.Sprint(paid)),
		chromedp.Click("#ps-open"),
		p.settled(),
		p.until(`!document.querySelector("#ps-body").hidden`),
	)
	p.step("write as the buyer",
		chromedp.SendKeys("#ps-message-text", "¿Cuándo llega?"),
		chromedp.Click("#ps-message-send"),
		p.settled(),
		p.until(`[...document.querySelectorAll("#ps-messages .ps-message-text")].some(td => td.textContent === "¿Cuándo llega?")`),
	)
	if from := p.text("#ps-messages tbody tr .ps-message-from"); from != "buyer" {
		t.Fatalf("the message is shown from %q, want the buyer", from)
	}
	p.step("open a claim as the buyer",
		p.choose("#ps-claim-reason", "PDD9549"),
		chromedp.Click("#ps-claim-open"),
		p.settled(),
		p.until(`document.querySelector("#ps-claims .ps-claim-state") && document.querySelector("#ps-claims .ps-claim-state").textContent === "claim / opened"`),
	)
	due := p.text(`#ps-claims .ps-claim-action[data-role="respondent"][data-action="send_message_to_complainant"]`)
	if due == "" || !containsAll(due, "mandatory", "due") {
		t.Fatalf("the seller's mandatory answer reads %q; want it with its due date", due)
	}
	claimID := claimOf(t, srv, paid)
	if _, err := srv.Marketplace.Claims.AllowReturn(ctx, srv.Seller.ID, claimID); err != nil {
		t.Fatalf("allow the return: %v", err)
	}
	p.step("see the return and move it",
		chromedp.Click("#ps-open"),
		p.settled(),
		p.until(`document.querySelector("#ps-returns .ps-return")`),
		p.choose("#ps-returns .ps-return-next", "shipped"),
		chromedp.Click("#ps-returns .ps-return-move"),
		p.settled(),
		p.until(`document.querySelector("#ps-returns .ps-return-status").textContent === "shipped"`),
	)
	p.step("the buyer asks for mediation, the mediator decides for the buyer",
		p.choose("#ps-claims .ps-claim-move", "complainant open_dispute"),
		chromedp.Click("#ps-claims .ps-claim-act"),
		p.settled(),
		p.until(`document.querySelector("#ps-claims .ps-claim-state").textContent === "dispute / opened"`),
		p.choose("#ps-claims .ps-claim-move", "mediator resolve:complainant"),
		chromedp.Click("#ps-claims .ps-claim-act"),
		p.settled(),
		p.until(`document.querySelector("#ps-claims .ps-claim-state").textContent.endsWith("/ closed")`),
	)
	c, err := srv.Marketplace.Claims.Claim(ctx, srv.Seller.ID, claimID)
	if err != nil || c.Status != "closed" || c.Resolution == nil {
		t.Fatalf("the claim after the mediator's decision: %+v %v", c, err)
	}
}

func shipmentOf(t *testing.T, srv *marketplacetest.Server, orderID int64) int64 {
	t.Helper()
	o, err := srv.Marketplace.Sales.Order(context.Background(), sales.Operator, orderID)
	if err != nil {
		t.Fatal(err)
	}
	return *o.Shipping.ID
}

func claimOf(t *testing.T, srv *marketplacetest.Server, orderID int64) int64 {
	t.Helper()
	res, err := srv.Marketplace.Claims.Search(context.Background(), srv.Seller.ID, claims.SearchQuery{OrderID: orderID, Limit: 10})
	if err != nil || len(res.Data) != 1 {
		t.Fatalf("the order's claims: %+v %v", res, err)
	}
	return res.Data[0].ID
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
