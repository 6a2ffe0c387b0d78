package proptest

import (
	"fmt"

	"github.com/marketplace/marketplace/fixtures"
)

// ShopIDs are the ids the engine gave a Shop's records when it loaded its
// Doc, by position: Stores[i] is the id of Shop.Stores[i], Items[i] that
// of Shop.Items[i], Buyers[i] that of Shop.Buyers[i]. The steps the
// generators draw name records by those positions.
type ShopIDs struct {
	Seller int64
	Stores []string
	Items  []string
	Buyers []int64
}

// IDs turns the shop's fixture names into the ids of res, the result of
// loading s.Doc (fixtures.Load, (*marketplace.Marketplace).LoadFixtures
// or PUT /operator/fixtures). It fails when res lacks one of the names:
// a result of another document.
func (s Shop) IDs(res fixtures.Result) (ShopIDs, error) {
	ids := ShopIDs{Seller: res.Users[s.Seller]}
	if ids.Seller == 0 {
		return ShopIDs{}, fmt.Errorf("proptest: the fixtures result has no user %q", s.Seller)
	}
	for _, name := range s.Stores {
		id := res.Stores[name]
		if id == "" {
			return ShopIDs{}, fmt.Errorf("proptest: the fixtures result has no store %q", name)
		}
		ids.Stores = append(ids.Stores, id)
	}
	for _, it := range s.Items {
		id := res.Items[it.Name]
		if id == "" {
			return ShopIDs{}, fmt.Errorf("proptest: the fixtures result has no item %q", it.Name)
		}
		ids.Items = append(ids.Items, id)
	}
	for _, name := range s.Buyers {
		id := res.Users[name]
		if id == 0 {
			return ShopIDs{}, fmt.Errorf("proptest: the fixtures result has no user %q", name)
		}
		ids.Buyers = append(ids.Buyers, id)
	}
	return ids, nil
}

// StoreIDs returns the ids of the stores at positions idx, as a
// ShopItem's StoreIndex or a StockWrite's name them.
func (ids ShopIDs) StoreIDs(idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ids.Stores[j]
	}
	return out
}

// Store returns the id of the store at position i, or "" when i is
// negative: a Purchase that names no store, so that the rule picks one.
func (ids ShopIDs) Store(i int) string {
	if i < 0 {
		return ""
	}
	return ids.Stores[i]
}
