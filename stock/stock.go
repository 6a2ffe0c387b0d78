package stock

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// Stock is a user product's stock per store as the stock read answers it;
// Version goes in the x-version header.
type Stock struct {
	Locations []StockLocation `json:"locations"`
	UserID    int64           `json:"user_id"`
	ID        string          `json:"id"`
	Version   int64           `json:"-"`
}

// StockUpdate is the answer of a stock replacement; Version is the new one.
type StockUpdate struct {
	UserID             int64           `json:"user_id"`
	ProductReleaseDate *string         `json:"product_release_date"`
	ID                 string          `json:"id"`
	Locations          []StockLocation `json:"locations"`
	Version            int64           `json:"-"`
}

// ownedUserProduct reads a user product that caller must own.
func ownedUserProduct(tx storage.Tx, caller int64, id string) (UserProduct, error) {
	up, err := getUserProduct(tx, id)
	if err != nil {
		return UserProduct{}, err
	}
	if up.UserID != caller {
		return UserProduct{}, errs.Forbiddenf("The caller is not the owner of user product %s", id)
	}
	return up, nil
}

func locationsOf(up UserProduct) []StockLocation {
	out := make([]StockLocation, len(up.Locations))
	for i, l := range up.Locations {
		l.Type = LocationTypeSellerWarehouse
		out[i] = l
	}
	return out
}

// Stock returns the stock per store of user product id and its version.
// Only the owning seller may read it. A single-origin user product has no
// locations. Errors: NotFound, Forbidden.
func (s *Service) Stock(ctx context.Context, caller int64, id string) (Stock, error) {
	var out Stock
	err := s.store.View(ctx, func(tx storage.Tx) error {
		up, err := ownedUserProduct(tx, caller, id)
		if err != nil {
			return err
		}
		out = Stock{Locations: locationsOf(up), UserID: up.UserID, ID: up.ID, Version: up.Version}
		return nil
	})
	return out, err
}

// ParseVersion reads the x-version header as sent. Errors: Invalid ("Missing
// X-Version header" when absent).
func ParseVersion(raw string) (int64, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, errs.Invalidf("Missing X-Version header")
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, errs.Invalidf("Invalid X-Version header: %s. It must be an integer", raw)
	}
	return v, nil
}

// PutStock replaces the quantities of the listed stores of user product id
// (type seller_warehouse), guarded by the version the caller read (over
// HTTP, the x-version header, read with ParseVersion). Listed stores get the sent quantity;
// stores left out keep theirs; every accepted PUT moves the version by one.
// The version check and the write are one transaction, so of any number of
// concurrent PUTs carrying the same version exactly one succeeds.
// Errors: Invalid ("Store cannot be null or empty", "Store not found: <id>", "Store does not belong to seller: <id>",
// "Store is not configured to be a stock location", bad quantities, a store
// listed twice, a single-origin user product), NotFound, Forbidden, Conflict
// ("Version mismatch").
func (s *Service) PutStock(ctx context.Context, caller int64, id string, version int64, locs []StockLocation) (StockUpdate, error) {
	if err := checkLocations(locs, errs.Invalidf("Store cannot be null or empty")); err != nil {
		return StockUpdate{}, err
	}
	var out StockUpdate
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The numbers of the events of the stock and of its item go
		// with the first read, where the store can.
		ctx := notify.DrawEventNumbers(ctx, tx, 2)
		if _, ok := tx.(storage.Prefetcher); ok {
			// The user product and the stores named are read together,
			// with the user product's items.
			keys := UserProductKeys(id)
			for _, l := range locs {
				keys = append(keys, accounts.StoreKeys(l.StoreID)...)
			}
			if err := storage.Prefetch(tx, keys...); err != nil {
				return err
			}
		}
		items, err := itemsOf(tx, id)
		if err != nil {
			return err
		}
		// Read with the next round trip.
		if err := storage.Prefetch(tx, ItemKeys(items...)...); err != nil {
			return err
		}
		up, err := ownedUserProduct(tx, caller, id)
		if err != nil {
			return err
		}
		if !up.MultiOrigin {
			return errs.Invalidf("User product %s has no seller_warehouse stock: it was published with available_quantity", id)
		}
		if version != up.Version {
			return errs.Conflictf("Version mismatch")
		}
		before := up
		before.Locations = slices.Clone(up.Locations)
		if err := applyLocations(tx, &up, caller, locs); err != nil {
			return err
		}
		up.Version++
		if err := putUserProduct(tx, up); err != nil {
			return err
		}
		if err := s.itemsFollow(ctx, tx, items, before, up, now, nil, ""); err != nil {
			return err
		}
		out = StockUpdate{UserID: up.UserID, ID: up.ID, Locations: locationsOf(up), Version: up.Version}
		return nil
	})
	return out, err
}
