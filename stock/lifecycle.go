package stock

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// Notification topics of stock: an item's JSON changed (its status, price,
// title or quantities), a store's quantity of a user product changed.
const (
	TopicItems         = notify.TopicItems
	TopicStockLocation = notify.TopicStockLocation
)

// followQuantity is the rule that ties an item's status to its stock, applied
// whenever the quantity of its user product changes: an active item whose
// user product has no units left is paused as out_of_stock, and an item
// paused that way is active again once units come back. The seller's own
// pause and a closed item are left alone.
func followQuantity(it *Item, quantity int64) {
	switch {
	case it.Status == StatusActive && quantity == 0:
		it.Status, it.SubStatus = StatusPaused, []string{SubStatusOutOfStock}
	case it.Status == StatusPaused && quantity > 0 && slices.Contains(it.SubStatus, SubStatusOutOfStock):
		it.Status, it.SubStatus = StatusActive, []string{}
	}
}

// setStatus is the seller's status change: the status asked for, with no
// sub-status, except that an item without units is not put on sale: asked
// to be active, it is paused as out_of_stock.
func setStatus(it *Item, status string, quantity int64) {
	it.Status, it.SubStatus = status, []string{}
	if status == StatusActive && quantity == 0 {
		it.Status, it.SubStatus = StatusPaused, []string{SubStatusOutOfStock}
	}
}

// itemsOf returns the ids of the items user product upID groups.
func itemsOf(tx storage.Tx, upID string) ([]string, error) {
	prefix := userProductItemsPrefix(upID)
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	var ids []string
	for ; it.Valid(); it.Next() {
		r := keycodec.Read(it.Key()[len(prefix):])
		id := r.Str()
		if err := r.Err(); err != nil {
			return nil, errs.Internalf(err, "user product %s item key", upID)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// quantityChanged carries a change of user product up's stock (already
// written) to its items, in the same transaction: each item's quantity and
// status follow it (followQuantity), sold moves the sold_quantity of the
// items it names, and the stores whose quantity changed since before are
// announced on the stock-location topic. skip names an item the caller
// writes itself.
func (s *Service) quantityChanged(ctx context.Context, tx storage.Tx, before, up UserProduct, now time.Time, sold map[string]int64, skip string) error {
	ids, err := itemsOf(tx, up.ID)
	if err != nil {
		return err
	}
	return s.itemsFollow(ctx, tx, ids, before, up, now, sold, skip)
}

// itemsFollow is quantityChanged for a caller that read the user product's
// items, ids, itself (before its first write, with its first reads).
func (s *Service) itemsFollow(ctx context.Context, tx storage.Tx, ids []string, before, up UserProduct, now time.Time, sold map[string]int64, skip string) error {
	q := up.Quantity()
	stamp := now.UTC().Format(TimeLayout)
	for _, id := range ids {
		if id == skip {
			continue
		}
		prev, err := getItemRecord(tx, id)
		if err != nil {
			return err
		}
		prev.AvailableQuantity = before.Quantity()
		next := prev
		next.SubStatus = slices.Clone(prev.SubStatus)
		next.AvailableQuantity = q
		next.SoldQuantity += sold[id]
		followQuantity(&next, q)
		if next.AvailableQuantity == prev.AvailableQuantity && next.SoldQuantity == prev.SoldQuantity && next.Status == prev.Status {
			continue
		}
		next.LastUpdated = stamp
		if err := putItem(tx, next); err != nil {
			return err
		}
		if err := s.itemChanged(ctx, tx, prev, next); err != nil {
			return err
		}
	}
	return s.announceStock(ctx, tx, before, up, now)
}

// announceStock writes a stock-location event when a store's quantity of
// the user product changed.
func (s *Service) announceStock(ctx context.Context, tx storage.Tx, before, up UserProduct, now time.Time) error {
	if !up.MultiOrigin || slices.Equal(before.Locations, up.Locations) {
		return nil
	}
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Topic: TopicStockLocation, UserID: up.UserID,
		Resource: "/user-products/" + up.ID + "/stock", Action: "updated", Received: now})
	return err
}

// announceItem writes an items event for a created or changed item.
func (s *Service) announceItem(ctx context.Context, tx storage.Tx, before, after Item) error {
	action := "updated"
	if before.ID == "" {
		action = "created"
	}
	when, err := time.Parse(TimeLayout, after.LastUpdated)
	if err != nil {
		return errs.Internalf(err, "item %s last_updated", after.ID)
	}
	_, err = notify.Append(ctx, s.store, tx, notify.Event{Topic: TopicItems, UserID: after.SellerID,
		Resource: "/items/" + after.ID, Action: action, Received: when})
	return err
}

// Source is the store a sale's units come from: the store and its
// network node for an item with stock per store, empty for a single-origin
// item.
type Source struct {
	StoreID       string `json:"store_id"`
	NetworkNodeID string `json:"network_node_id"`
}

// PickSource says where q units of item it would come from, without taking
// them, inside another package's transaction. A named store must hold
// stock of the item's user product and have the units; without a name the
// units come from the store with the most units (ties to the lowest store
// id), which must have them all: one order's units leave from one store.
// A single-origin item takes no store. Errors: Invalid.
func PickSource(tx storage.Tx, it Item, storeID string, q int64) (Source, error) {
	up, err := getUserProduct(tx, it.UserProductID)
	if err != nil {
		return Source{}, err
	}
	return pickSource(up, it.ID, storeID, q)
}

func pickSource(up UserProduct, itemID, storeID string, q int64) (Source, error) {
	n := strconv.FormatInt(q, 10)
	if !up.MultiOrigin {
		if storeID != "" {
			return Source{}, errs.Invalidf("Item %s has no stock per store: send no store_id", itemID)
		}
		if up.PlainQuantity < q {
			return Source{}, errs.Invalidf("Item %s has %d units available; the order needs %s", itemID, up.PlainQuantity, n)
		}
		return Source{}, nil
	}
	if storeID != "" {
		i := slices.IndexFunc(up.Locations, func(l StockLocation) bool { return l.StoreID == storeID })
		if i < 0 {
			return Source{}, errs.Invalidf("Store %s holds no stock of item %s", storeID, itemID)
		}
		if l := up.Locations[i]; l.Quantity < q {
			return Source{}, errs.Invalidf("Store %s has %d units of item %s; the order needs %s", storeID, l.Quantity, itemID, n)
		}
		return Source{StoreID: storeID, NetworkNodeID: up.Locations[i].NetworkNodeID}, nil
	}
	best := -1
	for i, l := range up.Locations {
		if best < 0 || l.Quantity > up.Locations[best].Quantity ||
			(l.Quantity == up.Locations[best].Quantity && lessStoreID(l.StoreID, up.Locations[best].StoreID)) {
			best = i
		}
	}
	if best < 0 || up.Locations[best].Quantity < q {
		return Source{}, errs.Invalidf("No store of item %s has the %s units the order needs", itemID, n)
	}
	l := up.Locations[best]
	return Source{StoreID: l.StoreID, NetworkNodeID: l.NetworkNodeID}, nil
}

// lessStoreID orders store ids (strings of digits, leading zeros allowed)
// by their number, and ids of one number ("099", "99") by their text.
func lessStoreID(a, b string) bool {
	na, nb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// TakeUnits takes q units of item itemID for a paid order, inside another
// package's transaction (the order's), at now: from src.StoreID when
// named, else from the store PickSource picks. The user product's version
// goes up (a stock PUT made with the version read before the sale is
// refused), the item's sold_quantity goes up by q, and every item of the
// user product follows its quantity (an item left with no units is paused
// as out_of_stock). Errors: NotFound, Invalid (see PickSource).
func (s *Service) TakeUnits(ctx context.Context, tx storage.Tx, itemID, storeID string, q int64, now time.Time) (Source, error) {
	if q < 1 {
		return Source{}, errs.Invalidf("Invalid quantity: %d. It must be at least 1", q)
	}
	it, err := getItemRecord(tx, itemID)
	if err != nil {
		return Source{}, err
	}
	up, err := getUserProduct(tx, it.UserProductID)
	if err != nil {
		return Source{}, err
	}
	src, err := pickSource(up, itemID, storeID, q)
	if err != nil {
		return Source{}, err
	}
	return src, s.moveUnits(ctx, tx, it, up, src, -q, now)
}

// ReturnUnits gives back q units of item itemID that a paid order took
// from src (its cancellation), inside the order's transaction, at now: the
// reverse of TakeUnits. An item paused as out_of_stock is active again.
// Errors: NotFound.
func (s *Service) ReturnUnits(ctx context.Context, tx storage.Tx, itemID string, src Source, q int64, now time.Time) error {
	it, err := getItemRecord(tx, itemID)
	if err != nil {
		return err
	}
	up, err := getUserProduct(tx, it.UserProductID)
	if err != nil {
		return err
	}
	return s.moveUnits(ctx, tx, it, up, src, q, now)
}

// moveUnits adds delta units (negative: taken) to src's entry of up, sold
// units of item it moving the other way.
func (s *Service) moveUnits(ctx context.Context, tx storage.Tx, it Item, up UserProduct, src Source, delta int64, now time.Time) error {
	before := up
	before.Locations = slices.Clone(up.Locations)
	if up.MultiOrigin {
		i := slices.IndexFunc(up.Locations, func(l StockLocation) bool { return l.StoreID == src.StoreID })
		if i < 0 {
			// A store's entry is never removed from a user product; this
			// is a return to a store the stock no longer lists.
			up.Locations = append(up.Locations, StockLocation{Type: LocationTypeSellerWarehouse, StoreID: src.StoreID, NetworkNodeID: src.NetworkNodeID})
			i = len(up.Locations) - 1
		}
		up.Locations[i].Quantity += delta
	} else {
		up.PlainQuantity += delta
	}
	up.Version++
	if err := putUserProduct(tx, up); err != nil {
		return err
	}
	return s.quantityChanged(ctx, tx, before, up, now, map[string]int64{it.ID: -delta}, "")
}
