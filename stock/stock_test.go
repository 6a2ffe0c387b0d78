package stock_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
)

func TestPublishMultiOrigin_ReturnsUserProductAndStockLocations(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	p := e.mustPublishMulti(seller, multiItem("Zapatilla Running", "1500.50", loc(stores[0], 3), loc(stores[1], 4)))
	is.Equal(p.SiteID, "MLA")
	is.True(len(p.ID) > 3 && p.ID[:3] == "MLA") // id is the site id and digits
	is.Equal(p.SellerID, seller)
	is.True(p.UserProductID != "")
	is.Equal(p.BasePrice, json.Number("1500.5"))
	is.Equal(p.AvailableQuantity, int64(7))
	is.Equal(len(p.StockLocations), 2)
	is.Equal(p.StockLocations[0].StoreID, stores[0])
	is.Equal(p.StockLocations[0].Quantity, int64(3))
	is.Equal(p.StockLocations[0].NetworkNodeID, stores[0]+"01") // the store's own node when none is sent

	st, err := e.svc.Stock(ctx, seller, p.UserProductID)
	is.NoErr(err)
	is.Equal(st.Version, int64(1))
	is.Equal(len(st.Locations), 2)
	is.Equal(st.Locations[1].Type, stock.LocationTypeSellerWarehouse)
}

func TestPublish_ErrorsChangeNothing(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	other, otherStores := e.mustSeller(1)
	_ = other
	untagged := e.mustStore(seller)
	plain := e.mustUser("MLA")
	qty := int64(2)
	cases := []struct {
		name   string
		seller int64
		multi  bool
		in     stock.NewItem
		msg    string
	}{
		{"StockLocationsAbsent", seller, true, multiItem("Mesa", "10"), "The fields [stock_locations] are required for requested call"},
		{"StoreOfAnotherSeller", seller, true, multiItem("Mesa", "10", loc(otherStores[0], 1)), "Store does not belong to seller: " + otherStores[0]},
		{"UnknownStore", seller, true, multiItem("Mesa", "10", loc("999", 1)), "Store not found: 999"},
		{"StoreWithoutStockLocationTag", seller, true, multiItem("Mesa", "10", loc(untagged, 1)), "Store is not configured to be a stock location"},
		{"StoreListedTwice", seller, true, multiItem("Mesa", "10", loc(stores[0], 1), loc(stores[0], 2)), "Store listed more than once: " + stores[0]},
		{"NegativeQuantity", seller, true, multiItem("Mesa", "10", loc(stores[0], -1)), "Invalid quantity for store " + stores[0] + ": -1. It must be between 0 and 1000000000"},
		{"AvailableQuantityFromTaggedSeller", seller, true, func() stock.NewItem {
			in := multiItem("Mesa", "10", loc(stores[0], 1))
			in.AvailableQuantity = &qty
			return in
		}(), "The fields [available_quantity] are invalid for requested call"},
		{"PlainPublicationByTaggedSeller", seller, false, plainItem("Mesa", "10", 2), "The fields [available_quantity] are invalid for requested call"},
		{"PlainPublicationByTaggedSellerWithoutAvailableQuantity", seller, false, func() stock.NewItem {
			in := plainItem("Mesa", "10", 2)
			in.AvailableQuantity = nil
			return in
		}(), "The fields [stock_locations] are required for requested call"},
		{"PlainPublicationWithoutAvailableQuantity", plain, false, func() stock.NewItem {
			in := plainItem("Mesa", "10", 2)
			in.AvailableQuantity = nil
			return in
		}(), "The fields [available_quantity] are required for requested call"},
		{"MultiOriginByUntaggedSeller", plain, true, multiItem("Mesa", "10", loc(stores[0], 1)), "The fields [stock_locations] are invalid for requested call"},
		{"MissingTitle", seller, true, multiItem("  ", "10", loc(stores[0], 1)), "The fields [title] are required for requested call"},
		{"ZeroPrice", seller, true, multiItem("Mesa", "0", loc(stores[0], 1)), "Invalid price: 0. It must be greater than 0"},
		{"NegativePrice", seller, true, multiItem("Mesa", "-3", loc(stores[0], 1)), "Invalid price: -3. It must be greater than 0"},
		{"ThreeDecimals", seller, true, multiItem("Mesa", "1.005", loc(stores[0], 1)), "Invalid price: 1.005. A price in ARS may have at most 2 decimal places"},
		{"ForeignCategory", seller, true, func() stock.NewItem {
			in := multiItem("Mesa", "10", loc(stores[0], 1))
			in.CategoryID = "MLB1055"
			return in
		}(), "Invalid category_id: MLB1055. A category id of site MLA is MLA followed by digits, such as MLA1055"},
		{"UnknownListingType", seller, true, func() stock.NewItem {
			in := multiItem("Mesa", "10", loc(stores[0], 1))
			in.ListingTypeID = "platinum"
			return in
		}(), "Invalid listing_type_id: platinum. Valid values are: [gold_pro, gold_premium, gold_special, gold, silver, bronze, free]"},
		{"OtherSiteCurrency", seller, true, func() stock.NewItem {
			in := multiItem("Mesa", "10", loc(stores[0], 1))
			in.CurrencyID = "BRL"
			return in
		}(), "Invalid currency_id: BRL. Valid values for site MLA are: [ARS, USD]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.multi {
				_, err = e.svc.PublishMultiOrigin(ctx, c.seller, c.in)
			} else {
				_, err = e.svc.Publish(ctx, c.seller, c.in)
			}
			de := errs.As(err)
			if de == nil || de.Kind != errs.Invalid || de.Message != c.msg {
				t.Fatalf("err = %v, want Invalid %q", err, c.msg)
			}
		})
	}
	res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Limit: 50})
	if err != nil || res.Total != 0 {
		t.Fatalf("refused publications left items behind: total %d, err %v", res.Total, err)
	}
}

func TestPublish_JoiningAUserProductSharesItsStock(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	first := e.mustPublishMulti(seller, multiItem("Mesa roble", "100", loc(stores[0], 5)))
	in := multiItem("Mesa roble premium", "120", loc(stores[1], 2))
	in.UserProductID = first.UserProductID
	second := e.mustPublishMulti(seller, in)
	is.Equal(second.UserProductID, first.UserProductID)
	is.Equal(second.AvailableQuantity, int64(7))
	again, err := e.svc.Item(ctx, first.ID)
	is.NoErr(err)
	is.Equal(again.AvailableQuantity, int64(7)) // both items read the shared stock
	st, err := e.svc.Stock(ctx, seller, first.UserProductID)
	is.NoErr(err)
	is.Equal(st.Version, int64(2)) // joining wrote the stock

	other, otherStores := e.mustSeller(1)
	foreign := multiItem("Mesa", "100", loc(otherStores[0], 1))
	foreign.UserProductID = first.UserProductID
	_, err = e.svc.PublishMultiOrigin(ctx, other, foreign)
	is.Equal(errs.KindOf(err), errs.Invalid) // another seller's user product cannot be joined
}

func TestItem_DoesNotCarryStockLocationsAndSumsStock(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	p := e.mustPublishMulti(seller, multiItem("Silla", "50", loc(stores[0], 1), loc(stores[1], 2)))
	_, err := e.putStock(seller, p.UserProductID, "1", []stock.StockLocation{loc(stores[1], 10)})
	is.NoErr(err)
	it, err := e.svc.Item(ctx, p.ID)
	is.NoErr(err)
	is.Equal(it.AvailableQuantity, int64(11))
	b, _ := json.Marshal(it)
	var m map[string]any
	is.NoErr(json.Unmarshal(b, &m))
	_, has := m["stock_locations"]
	is.True(!has) // rule 3
}

func TestPutStock_Rules(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	_, otherStores := e.mustSeller(1)
	untagged := e.mustStore(seller)
	p := e.mustPublishMulti(seller, multiItem("Silla", "50", loc(stores[0], 1)))
	plain := e.mustUser("MLA")
	pp := e.mustPublish(plain, plainItem("Silla", "50", 3))
	cases := []struct {
		name    string
		caller  int64
		up      string
		version string
		locs    []stock.StockLocation
		kind    errs.Kind
		msg     string
	}{
		{"MissingVersionIsRejectedWith400", seller, p.UserProductID, "", []stock.StockLocation{loc(stores[0], 1)}, errs.Invalid, "Missing X-Version header"},
		{"NonIntegerVersionIsRejectedWith400", seller, p.UserProductID, "v1", []stock.StockLocation{loc(stores[0], 1)}, errs.Invalid, "Invalid X-Version header: v1. It must be an integer"},
		{"StaleVersionIsRejectedWith409", seller, p.UserProductID, "7", []stock.StockLocation{loc(stores[0], 1)}, errs.Conflict, "Version mismatch"},
		{"NoStoreIsRejected", seller, p.UserProductID, "1", nil, errs.Invalid, "Store cannot be null or empty"},
		{"EmptyStoreIDIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc("", 1)}, errs.Invalid, "Store cannot be null or empty"},
		{"ForeignStoreIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc(otherStores[0], 1)}, errs.Invalid, "Store does not belong to seller: " + otherStores[0]},
		{"UnknownStoreIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc("424242", 1)}, errs.Invalid, "Store not found: 424242"},
		{"UntaggedStoreIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc(untagged, 1)}, errs.Invalid, "Store is not configured to be a stock location"},
		{"StoreTwiceIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc(stores[0], 1), loc(stores[0], 2)}, errs.Invalid, "Store listed more than once: " + stores[0]},
		{"NegativeQuantityIsRejected", seller, p.UserProductID, "1", []stock.StockLocation{loc(stores[0], -5)}, errs.Invalid, "Invalid quantity for store " + stores[0] + ": -5. It must be between 0 and 1000000000"},
		{"OtherCallerIsForbidden", plain, p.UserProductID, "1", []stock.StockLocation{loc(stores[0], 1)}, errs.Forbidden, "The caller is not the owner of user product " + p.UserProductID},
		{"UnknownUserProductIsNotFound", seller, "MLAU1", "1", []stock.StockLocation{loc(stores[0], 1)}, errs.NotFound, "User product not found: MLAU1"},
		{"SingleOriginUserProductIsRejected", plain, pp.UserProductID, "1", []stock.StockLocation{loc(stores[0], 1)}, errs.Invalid, "User product " + pp.UserProductID + " has no seller_warehouse stock: it was published with available_quantity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.putStock(c.caller, c.up, c.version, c.locs)
			de := errs.As(err)
			if de == nil || de.Kind != c.kind || de.Message != c.msg {
				t.Fatalf("err = %v, want %v %q", err, c.kind, c.msg)
			}
		})
	}
	st, err := e.svc.Stock(ctx, seller, p.UserProductID)
	if err != nil || st.Version != 1 || len(st.Locations) != 1 || st.Locations[0].Quantity != 1 {
		t.Fatalf("refused PUTs changed the stock: %+v %v", st, err)
	}
}

func TestPutStock_ListedStoresAreSetOthersKeptVersionMoves(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, stores := e.mustSeller(3)
	p := e.mustPublishMulti(seller, multiItem("Silla", "50", loc(stores[0], 0), loc(stores[1], 4)))
	out, err := e.putStock(seller, p.UserProductID, "1", []stock.StockLocation{
		{StoreID: stores[0], NetworkNodeID: "anything-goes", Quantity: 9}, loc(stores[2], 2)})
	is.NoErr(err)
	is.Equal(out.Version, int64(2))
	is.Equal(out.ProductReleaseDate, (*string)(nil))
	want := []stock.StockLocation{
		{Type: "seller_warehouse", StoreID: stores[0], NetworkNodeID: "anything-goes", Quantity: 9},  // rule 5 and rule 6
		{Type: "seller_warehouse", StoreID: stores[1], NetworkNodeID: stores[1] + "01", Quantity: 4}, // left out: kept
		{Type: "seller_warehouse", StoreID: stores[2], NetworkNodeID: stores[2] + "01", Quantity: 2}, // new store: added
	}
	is.Equal(out.Locations, want)
	st, err := e.svc.Stock(ctx, seller, p.UserProductID)
	is.NoErr(err)
	is.Equal(st.Locations, want)
	is.Equal(st.Version, int64(2))

	// A PUT that changes nothing is still a write: the version moves.
	out, err = e.putStock(seller, p.UserProductID, "2", []stock.StockLocation{loc(stores[1], 4)})
	is.NoErr(err)
	is.Equal(out.Version, int64(3))
}

func TestStock_OnlyTheOwnerMayRead(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	p := e.mustPublishMulti(seller, multiItem("Silla", "50", loc(stores[0], 1)))
	other := e.mustUser("MLA")
	if _, err := e.svc.Stock(ctx, other, p.UserProductID); !errs.Is(err, errs.Forbidden) {
		t.Fatalf("err = %v, want Forbidden", err)
	}
	if _, err := e.svc.Stock(ctx, seller, "MLAU9"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
}

// concurrentPuts checks, on e's backend, that of n PUTs carrying the same
// version exactly one wins and the others get a conflict, and that n writers
// retrying on conflict lose no update.
func concurrentPuts(t *testing.T, e *env, n int) {
	seller, stores := e.mustSeller(1)
	p := e.mustPublishMulti(seller, multiItem("Silla", "50", loc(stores[0], 0)))

	var wg sync.WaitGroup
	results := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, results[i] = e.putStock(seller, p.UserProductID, "1", []stock.StockLocation{loc(stores[0], int64(100+i))})
		}(i)
	}
	wg.Wait()
	wins, winner := 0, -1
	for i, err := range results {
		switch {
		case err == nil:
			wins++
			winner = i
		case !errs.Is(err, errs.Conflict):
			t.Fatalf("put %d: %v, want nil or Conflict", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d PUTs with the same version succeeded, want exactly 1", wins)
	}
	st, err := e.svc.Stock(ctx, seller, p.UserProductID)
	if err != nil || st.Version != 2 || st.Locations[0].Quantity != int64(100+winner) {
		t.Fatalf("stock after the race = %+v (%v), want version 2 and the winner's %d", st, err, 100+winner)
	}

	// Read-modify-write increments, retried on conflict: none may be lost.
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cur, err := e.svc.Stock(ctx, seller, p.UserProductID)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				_, err = e.putStock(seller, p.UserProductID, ver(cur.Version), []stock.StockLocation{loc(stores[0], cur.Locations[0].Quantity+1)})
				if err == nil {
					return
				}
				if !errs.Is(err, errs.Conflict) {
					t.Errorf("put: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, err = e.svc.Stock(ctx, seller, p.UserProductID)
	if err != nil || st.Version != int64(2+n) || st.Locations[0].Quantity != int64(100+winner+n) {
		t.Fatalf("after %d increments: %+v (%v), want version %d and quantity %d", n, st, err, 2+n, 100+winner+n)
	}
}

func TestPutStock_ConcurrentSameVersionExactlyOneWins_Memory(t *testing.T) {
	concurrentPuts(t, newEnv(t), 32)
}

func TestPutStock_ConcurrentSameVersionExactlyOneWins_Badger(t *testing.T) {
	concurrentPuts(t, newBadgerEnv(t), 16)
}

// titleRefusals are the characters no item title may hold, with the
// message and cause code that refuse each (internal/textcheck).
var titleRefusals = []struct {
	name, title, message, code string
}{
	{"ControlCharacter", "Mesa\x1b[31m", "The field [title] must not contain control characters", "text.control_character"},
	{"LineFeed", "Mesa\nroble", "The field [title] must not contain control characters", "text.control_character"},
	{"C1Control", "Mesa \u0085roble", "The field [title] must not contain control characters", "text.control_character"},
	{"BidiOverride", "Mesa \u202eelbor", "The field [title] must not contain bidirectional control characters", "text.bidi_control"},
	{"BidiIsolate", "Mesa \u2066roble", "The field [title] must not contain bidirectional control characters", "text.bidi_control"},
	{"OnlyInvisible", "\u200b\u2060\ufeff", "The field [title] must have visible characters", "text.invisible_only"},
}

func TestPublish_TitleWithControlBidiOrOnlyInvisibleCharactersIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	plain := e.mustUser("MLA")
	for _, c := range titleRefusals {
		t.Run(c.name, func(t *testing.T) {
			before := e.state()
			_, err := e.svc.PublishMultiOrigin(ctx, seller, multiItem(c.title, "10", loc(stores[0], 1)))
			de := mustErr(t, err, errs.Invalid, c.message)
			if len(de.Causes) != 1 || de.Causes[0].Code != c.code {
				t.Fatalf("causes = %+v, want one %s", de.Causes, c.code)
			}
			_, err = e.svc.Publish(ctx, plain, plainItem(c.title, "10", 1))
			mustErr(t, err, errs.Invalid, c.message)
			e.unchanged(before, "publishing "+c.name)
		})
	}
}

func TestUpdateItem_TitleWithControlBidiOrOnlyInvisibleCharactersIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	plain := e.mustUser("MLA")
	item := e.mustPublish(plain, plainItem("Mesa roble", "10", 1)).ID
	for _, c := range titleRefusals {
		t.Run(c.name, func(t *testing.T) {
			before := e.state()
			title := c.title
			_, err := e.svc.UpdateItem(ctx, plain, item, stock.ItemUpdate{Title: &title})
			de := mustErr(t, err, errs.Invalid, c.message)
			if len(de.Causes) != 1 || de.Causes[0].Code != c.code {
				t.Fatalf("causes = %+v, want one %s", de.Causes, c.code)
			}
			e.unchanged(before, "updating the title: "+c.name)
		})
	}
}
