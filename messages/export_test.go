package messages

import (
	"context"

	"github.com/marketplace/marketplace/storage"
)

// SendMany writes n messages of the buyer in the conversation of pack id,
// batch to a transaction, each as Send writes it: the benchmarks' large
// conversations, made in seconds rather than in a synced commit each.
func (s *Service) SendMany(ctx context.Context, id int64, n, batch int, text string) error {
	q, err := s.store.Sequence(messageSequence)
	if err != nil {
		return err
	}
	for n > 0 {
		k := min(n, batch)
		now := s.clock.Now()
		err := s.store.Update(ctx, func(tx storage.Tx) error {
			p, err := s.readPack(tx, id, nil)
			if err != nil {
				return err
			}
			for range k {
				seq, err := q.Next(ctx)
				if err != nil {
					return err
				}
				r := record{ID: messageID(seq), Seq: seq, PackID: p.sale.packID, SellerID: p.sale.sellerID, SiteID: p.sale.siteID,
					From: p.sale.buyerID, To: p.sale.sellerID, Text: text, Created: now}
				if _, err := s.write(ctx, tx, p, r, "", 0, now); err != nil {
					return err
				}
				if p.conv, err = getConversation(tx, p.sale.packID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		n -= k
	}
	return nil
}
