package proptest

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/money"
)

// Shop is a generated seller of MLA with the warehouse_management tag, its
// stock-location stores, its multi-origin items with their stock split
// across the stores, and buyers who may ask about the items.
type Shop struct {
	// Doc declares it all; load it once per case, after a reset.
	Doc fixtures.Document
	// Seller, Stores, Items and Buyers are the fixture names in Doc, so
	// that a fixtures.Result gives their ids.
	Seller string
	Stores []string
	Items  []ShopItem
	Buyers []string
	// SellerToken and BuyerTokens are the access tokens Doc gives them.
	SellerToken string
	BuyerTokens []string
}

// ShopItem is an item of a Shop: its fixture name and its initial stock,
// Quantity[i] units in Stores[StoreIndex[i]].
type ShopItem struct {
	Name       string
	StoreIndex []int
	Quantity   []int64
}

// MaxQuantity bounds the quantities the generators draw: small numbers
// make stores that hold the same quantity, and stores emptied and filled
// again, frequent.
const MaxQuantity = 20

// Shops draws a Shop of 1 to maxStores stores (at least 1), 1 to maxItems
// items (at least 1), each stocked in a non-empty subset of the stores,
// and 1 to 3 buyers. Tokens and names are fixed by position, so that a
// case replayed after a reset uses the same ones.
func Shops(maxStores, maxItems int) *rapid.Generator[Shop] {
	maxStores, maxItems = max(maxStores, 1), max(maxItems, 1)
	return rapid.Custom(func(t *rapid.T) Shop {
		nStores := rapid.IntRange(1, maxStores).Draw(t, "stores")
		nItems := rapid.IntRange(1, maxItems).Draw(t, "items")
		nBuyers := rapid.IntRange(1, 3).Draw(t, "buyers")
		s := Shop{Seller: "seller", SellerToken: "APP_USR-proptest-seller-000001"}
		s.Doc.Users = append(s.Doc.Users, fixtures.User{
			Name: s.Seller, Nickname: "PROPTEST_SELLER", SiteID: "MLA",
			Tags: []string{"normal", "warehouse_management"}, Tokens: []string{s.SellerToken},
		})
		for i := range nBuyers {
			name, tok := fmt.Sprintf("buyer%d", i+1), fmt.Sprintf("APP_USR-proptest-buyer-%06d", i+1)
			s.Buyers, s.BuyerTokens = append(s.Buyers, name), append(s.BuyerTokens, tok)
			s.Doc.Users = append(s.Doc.Users, fixtures.User{
				Name: name, Nickname: fmt.Sprintf("PROPTEST_BUYER%d", i+1), SiteID: "MLA", Tokens: []string{tok},
			})
		}
		for i := range nStores {
			name := fmt.Sprintf("store%d", i+1)
			s.Stores = append(s.Stores, name)
			s.Doc.Stores = append(s.Doc.Stores, fixtures.Store{
				Name: name, User: s.Seller, Description: "Store " + name, Tags: []string{"stock_location"},
			})
		}
		for i := range nItems {
			it := ShopItem{Name: fmt.Sprintf("item%d", i+1)}
			it.StoreIndex = rapid.SliceOfNDistinct(rapid.IntRange(0, nStores-1), 1, nStores, rapid.ID[int]).
				Draw(t, it.Name+" stores")
			item := fixtures.Item{
				Name: it.Name, Seller: s.Seller, Title: "Producto " + it.Name, CategoryID: "MLA1055",
				Price: money.FromInt(1000), ListingTypeID: "gold_special", CurrencyID: "ARS",
			}
			for j, si := range it.StoreIndex {
				q := rapid.Int64Range(0, MaxQuantity).Draw(t, fmt.Sprintf("%s qty%d", it.Name, j))
				it.Quantity = append(it.Quantity, q)
				item.StockLocations = append(item.StockLocations, fixtures.StockLocation{Store: s.Stores[si], Quantity: &q})
			}
			s.Items = append(s.Items, it)
			s.Doc.Items = append(s.Doc.Items, item)
		}
		return s
	})
}

// StockWrite is a generated stock PUT: on item Item of the Shop, sending
// the version read plus VersionOffset (0 is the fresh version, anything
// else a stale or an unknown one), setting Quantity[i] units in the store
// Stores[StoreIndex[i]].
type StockWrite struct {
	Item          int
	VersionOffset int64
	StoreIndex    []int
	Quantity      []int64
}

// Fresh reports whether the write sends the version it read.
func (w StockWrite) Fresh() bool { return w.VersionOffset == 0 }

// StockWrites draws 1 to maxWrites writes on the items of s, about half of
// them with a stale or unknown version (1 to 3 behind, or 1 ahead).
func StockWrites(s Shop, maxWrites int) *rapid.Generator[[]StockWrite] {
	write := rapid.Custom(func(t *rapid.T) StockWrite {
		w := StockWrite{Item: rapid.IntRange(0, len(s.Items)-1).Draw(t, "item")}
		if rapid.Bool().Draw(t, "stale") {
			w.VersionOffset = rapid.SampledFrom([]int64{-3, -2, -1, 1}).Draw(t, "offset")
		}
		w.StoreIndex = rapid.SliceOfNDistinct(rapid.IntRange(0, len(s.Stores)-1), 1, len(s.Stores), rapid.ID[int]).
			Draw(t, "stores")
		for i := range w.StoreIndex {
			w.Quantity = append(w.Quantity, rapid.Int64Range(0, MaxQuantity).Draw(t, fmt.Sprintf("qty%d", i)))
		}
		return w
	})
	return rapid.SliceOfN(write, 1, max(maxWrites, 1))
}

// QAStep is a generated event on the questions of a Shop, After the
// previous one (the first after the case's start): a question by buyer
// Buyer about item Item, or, when Answer is set, the seller's answer to
// the Question-th question asked so far (skipped by the property when
// that question is answered already or does not exist).
type QAStep struct {
	After    time.Duration
	Answer   bool
	Buyer    int
	Item     int
	Question int
}

// QASteps draws 1 to maxSteps question and answer events on the items
// and buyers of s. The gaps between events are whole seconds, from a
// second to three days with a bias towards the short ones and the
// boundaries of the rules (an hour, 82.5 minutes, a week), so that a
// script crosses periods, daily refreshes, the one-week cap and the end
// of the 14-day window.
func QASteps(s Shop, maxSteps int) *rapid.Generator[[]QAStep] {
	gaps := []time.Duration{
		time.Second, 30 * time.Second, time.Minute, 59 * time.Minute, time.Hour, 61 * time.Minute,
		82*time.Minute + 30*time.Second, 9 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
	}
	step := rapid.Custom(func(t *rapid.T) QAStep {
		st := QAStep{}
		if rapid.Bool().Draw(t, "boundary") {
			st.After = rapid.SampledFrom(gaps).Draw(t, "gap")
		} else {
			st.After = time.Duration(rapid.Int64Range(1, 3*24*3600).Draw(t, "seconds")) * time.Second
		}
		st.Answer = rapid.Bool().Draw(t, "answer")
		if st.Answer {
			st.Question = rapid.IntRange(0, 15).Draw(t, "question")
		} else {
			st.Buyer = rapid.IntRange(0, len(s.Buyers)-1).Draw(t, "buyer")
			st.Item = rapid.IntRange(0, len(s.Items)-1).Draw(t, "item")
		}
		return st
	})
	return rapid.SliceOfN(step, 1, max(maxSteps, 1))
}
