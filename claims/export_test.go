package claims

import (
	"context"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// SetMaxExamined lowers the bound of a search by the records for one test;
// the returned function restores it.
func SetMaxExamined(n int) func() {
	old := maxExamined
	maxExamined = n
	return func() { maxExamined = old }
}

// SeedClaims writes n opened, answered claims of seller, the i-th by buyer
// buyers[i%len(buyers)] and created at from plus i ms, with their lists
// and counts as Open writes them but without orders behind them: what
// the benchmarks of the search read, at a cost a million claims can pay.
// The claims' ids start at first.
func (s *Service) SeedClaims(ctx context.Context, seller int64, buyers []int64, n int, first int64, from time.Time) error {
	const batch = 500
	for done := 0; done < n; done += batch {
		err := s.store.Update(ctx, func(tx storage.Tx) error {
			for i := done; i < min(done+batch, n); i++ {
				ms := from.Add(time.Duration(i) * time.Millisecond).UnixMilli()
				r := record{ID: first + int64(i), OrderID: 2000000000000001 + int64(i), SellerID: seller, BuyerID: buyers[i%len(buyers)],
					SiteID: "MLA", ItemID: "MLA1400000001", CurrencyID: "ARS", Amount: "1500.5", ShippingCost: "0",
					OrderQuantity: 1, Quantity: 1, ReasonID: "PNR3430", Stage: StageClaim, Status: StatusOpened,
					CreatedMs: ms, UpdatedMs: ms, Answered: true, Logistic: "drop_off",
					Expected: []expectedRecord{{Role: RoleComplainant, Kind: ResolutionProduct, Details: []KeyValue{}, CreatedMs: ms, UpdatedMs: ms, Status: ExpectedPending}},
					Statuses: []statusRecord{{Stage: StageClaim, Status: StatusOpened, AtMs: ms, By: RoleComplainant}}}
				if err := s.index(tx, "", &r); err != nil {
					return err
				}
				if err := kv.SetJSON(tx, claimKey(r.ID), r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
