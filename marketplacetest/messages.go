package marketplacetest

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/sales"
)

// SendBuyerMessage writes a message of the buyer of pack packID (or of
// the order of that id) to its seller, as the buyer does over POST
// /messages/packs/{pack_id}/sellers/{seller_id}: the seller's
// applications hear of it (messages, created), and the seller may answer
// it. It fails t when the message is refused (a blocked conversation, a
// text the rules refuse).
func (s *Server) SendBuyerMessage(t testing.TB, packID int64, text string) messages.Message {
	t.Helper()
	ctx := context.Background()
	var seller, buyer int64
	if p, err := s.Marketplace.Sales.Pack(ctx, sales.Operator, packID); err == nil {
		seller, buyer = sellerOfPack(t, s, p), p.Buyer.ID
	} else if errs.Is(err, errs.NotFound) {
		o, err := s.Marketplace.Sales.Order(ctx, sales.Operator, packID)
		if err != nil {
			t.Fatalf("marketplacetest: no pack or order %d: %v", packID, err)
		}
		seller, buyer = o.Seller.ID, o.Buyer.ID
	} else {
		t.Fatalf("marketplacetest: read pack %d: %v", packID, err)
	}
	m, err := s.Marketplace.Messages.Send(ctx, buyer, 0, packID, seller,
		messages.SendBody{From: buyer, To: seller, Text: text})
	if err != nil {
		t.Fatalf("marketplacetest: the buyer's message in pack %d: %v", packID, err)
	}
	return m
}

func sellerOfPack(t testing.TB, s *Server, p sales.Pack) int64 {
	t.Helper()
	o, err := s.Marketplace.Sales.Order(context.Background(), sales.Operator, p.Orders[0].ID)
	if err != nil {
		t.Fatalf("marketplacetest: read order %d: %v", p.Orders[0].ID, err)
	}
	return o.Seller.ID
}
