package stock_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// The item lifecycle: sold_quantity and the title, out_of_stock pauses,
// closing and relisting.

// sales is the sales service over the env's stock: the sales that move
// sold_quantity and the stock.
func (e *env) sales() *sales.Service { return sales.New(e.store, e.clock, e.svc, nil) }

func (e *env) mustSell(item string, q int64) sales.Order {
	e.tb.Helper()
	buyer := e.mustUser("MLA")
	o, err := e.sales().PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item, Quantity: q})
	if err != nil {
		e.tb.Fatalf("sell %d of %s: %v", q, item, err)
	}
	return o
}

func (e *env) mustItem(id string) stock.Item {
	e.tb.Helper()
	it, err := e.svc.Item(ctx, id)
	if err != nil {
		e.tb.Fatalf("item %s: %v", id, err)
	}
	return it
}

func (e *env) mustUpdate(seller int64, id string, in stock.ItemUpdate) stock.Item {
	e.tb.Helper()
	it, err := e.svc.UpdateItem(ctx, seller, id, in)
	if err != nil {
		e.tb.Fatalf("update %s: %v", id, err)
	}
	return it
}

// state hashes every value of the store but the backend's own keys, for
// checking that a refused operation changed nothing.
func (e *env) state() map[string]uint64 {
	e.tb.Helper()
	out := map[string]uint64{}
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if bytes.HasPrefix(it.Key(), []byte("sys/")) {
				continue
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			h := fnv.New64a()
			h.Write(v)
			out[string(it.Key())] = h.Sum64()
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("read the store: %v", err)
	}
	return out
}

func (e *env) unchanged(before map[string]uint64, op string) {
	e.tb.Helper()
	if !maps.Equal(before, e.state()) {
		e.tb.Fatalf("%s was refused but changed the store", op)
	}
}

func mustErr(tb fataler, err error, kind errs.Kind, msg string) *errs.Error {
	tb.Helper()
	de := errs.As(err)
	if de == nil || de.Kind != kind || de.Message != msg {
		tb.Fatalf("err = %v, want %v %q", err, kind, msg)
	}
	return de
}

func wantStatus(tb fataler, it stock.Item, status string, sub ...string) {
	tb.Helper()
	if sub == nil {
		sub = []string{}
	}
	if it.Status != status || !slices.Equal(it.SubStatus, sub) || it.SubStatus == nil {
		tb.Fatalf("item %s is %s %v, want %s %v", it.ID, it.Status, it.SubStatus, status, sub)
	}
}

func ptr[T any](v T) *T { return &v }

func TestUpdateItem_TheTitleCannotChangeOnceTheItemHasSales(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa de roble", "100", 5))
	e.mustUpdate(seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de roble macizo")})
	e.mustSell(item.ID, 2)
	before := e.state()
	_, err := e.svc.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de pino")})
	de := mustErr(t, err, errs.Invalid, "The title of item "+item.ID+" cannot change: the item has sales")
	if de.Code != "bad_request" || !slices.Equal(de.Causes, []errs.Cause{{Code: "item.title.not_modifiable",
		Message: "The title cannot be modified once the item has sales (sold_quantity > 0)"}}) {
		t.Fatalf("code %s causes %+v", de.Code, de.Causes)
	}
	// The whole update is refused, the price with it.
	_, err = e.svc.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de pino"), Price: ptr(money.MustParse("90"))})
	mustErr(t, err, errs.Invalid, "The title of item "+item.ID+" cannot change: the item has sales")
	e.unchanged(before, "a title change after sales")
	// The same title is no change; the price still changes.
	it := e.mustUpdate(seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de roble macizo"), Price: ptr(money.MustParse("90"))})
	if it.Title != "Mesa de roble macizo" || it.Price != "90" || it.SoldQuantity != 2 {
		t.Fatalf("item %+v", it)
	}
}

func TestUpdateItem_TheTitleChangesAgainOnceACancellationBringsSoldQuantityToZero(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa de roble", "100", 5))
	sv := e.sales()
	first, second := e.mustSell(item.ID, 1), e.mustSell(item.ID, 2)
	// An unpaid order is no sale.
	if _, err := sv.PlaceOrder(ctx, sales.NewOrder{BuyerID: e.mustUser("MLA"), ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired}); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Cancel(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if it := e.mustItem(item.ID); it.SoldQuantity != 2 {
		t.Fatalf("sold %d, want 2", it.SoldQuantity)
	}
	_, err := e.svc.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de pino")})
	mustErr(t, err, errs.Invalid, "The title of item "+item.ID+" cannot change: the item has sales")
	if _, err := sv.Cancel(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	it := e.mustUpdate(seller, item.ID, stock.ItemUpdate{Title: ptr("Mesa de pino")})
	if it.Title != "Mesa de pino" || it.SoldQuantity != 0 || it.AvailableQuantity != 5 {
		t.Fatalf("item %+v", it)
	}
}

func TestPublish_AnItemIsActiveWhateverItsQuantity(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	multi := e.mustPublishMulti(seller, multiItem("Bicicleta", "10", loc(stores[0], 0)))
	plain := e.mustPublish(e.mustUser("MLA"), plainItem("Mesa", "10", 0))
	wantStatus(t, e.mustItem(multi.ID), stock.StatusActive)
	wantStatus(t, e.mustItem(plain.ID), stock.StatusActive)
}

func TestPutStock_AnItemWithNoUnitsLeftIsPausedOutOfStockAndActiveAgainOnRestock(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	item := e.mustPublishMulti(seller, multiItem("Bicicleta", "10", loc(stores[0], 2), loc(stores[1], 1)))
	st := mustStock(t, e, seller, item.UserProductID)
	out, err := e.svc.PutStock(ctx, seller, item.UserProductID, st.Version, []stock.StockLocation{loc(stores[0], 0)})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.mustItem(item.ID), stock.StatusActive) // a store still has one
	out, err = e.svc.PutStock(ctx, seller, item.UserProductID, out.Version, []stock.StockLocation{loc(stores[1], 0)})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.mustItem(item.ID), stock.StatusPaused, stock.SubStatusOutOfStock)
	if _, err = e.svc.PutStock(ctx, seller, item.UserProductID, out.Version, []stock.StockLocation{loc(stores[1], 3)}); err != nil {
		t.Fatal(err)
	}
	it := e.mustItem(item.ID)
	wantStatus(t, it, stock.StatusActive)
	if it.AvailableQuantity != 3 {
		t.Fatalf("available %d", it.AvailableQuantity)
	}
}

func TestUpdateItem_AvailableQuantityMovesEveryItemOfTheUserProduct(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	first := e.mustPublish(seller, plainItem("Mesa", "10", 2))
	in := plainItem("Mesa grande", "12", 2)
	in.UserProductID = first.UserProductID
	second := e.mustPublish(seller, in)

	it := e.mustUpdate(seller, first.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(0))})
	wantStatus(t, it, stock.StatusPaused, stock.SubStatusOutOfStock)
	wantStatus(t, e.mustItem(second.ID), stock.StatusPaused, stock.SubStatusOutOfStock)

	it = e.mustUpdate(seller, second.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(4))})
	wantStatus(t, it, stock.StatusActive)
	first2 := e.mustItem(first.ID)
	wantStatus(t, first2, stock.StatusActive)
	if first2.AvailableQuantity != 4 || it.AvailableQuantity != 4 {
		t.Fatalf("available %d and %d, want 4", first2.AvailableQuantity, it.AvailableQuantity)
	}
	// A sale of the last units pauses both; its cancellation restores both.
	o := e.mustSell(first.ID, 4)
	wantStatus(t, e.mustItem(second.ID), stock.StatusPaused, stock.SubStatusOutOfStock)
	if _, err := e.sales().Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.mustItem(first.ID), stock.StatusActive)
	wantStatus(t, e.mustItem(second.ID), stock.StatusActive)
}

func TestRestock_LeavesTheSellersPauseAlone(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 2))
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusPaused)}), stock.StatusPaused)
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(0))}), stock.StatusPaused)
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(5))}), stock.StatusPaused)

	// A seller's pause of an item paused as out_of_stock is the seller's.
	other := e.mustPublish(seller, plainItem("Silla", "10", 1))
	e.mustSell(other.ID, 1)
	wantStatus(t, e.mustItem(other.ID), stock.StatusPaused, stock.SubStatusOutOfStock)
	wantStatus(t, e.mustUpdate(seller, other.ID, stock.ItemUpdate{Status: ptr(stock.StatusPaused)}), stock.StatusPaused)
	wantStatus(t, e.mustUpdate(seller, other.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(5))}), stock.StatusPaused)
}

func TestUpdateItem_ActiveWithNoUnitsIsPausedOutOfStock(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 0))
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusPaused)}), stock.StatusPaused)
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusActive)}), stock.StatusPaused, stock.SubStatusOutOfStock)
	// Units and active in one update: the units count.
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusPaused)}), stock.StatusPaused)
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusActive), AvailableQuantity: ptr(int64(1))}), stock.StatusActive)
	// Restock brings the out_of_stock item back.
	e.mustUpdate(seller, item.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(0))})
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(stock.StatusActive)}), stock.StatusPaused, stock.SubStatusOutOfStock)
	wantStatus(t, e.mustUpdate(seller, item.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(3))}), stock.StatusActive)
}

func TestUpdateItem_AClosedItemStaysClosed(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	multi := e.mustPublishMulti(seller, multiItem("Bicicleta", "10", loc(stores[0], 0)))
	plainSeller := e.mustUser("MLA")
	plain := e.mustPublish(plainSeller, plainItem("Mesa", "10", 0))
	wantStatus(t, e.mustUpdate(seller, multi.ID, stock.ItemUpdate{Status: ptr(stock.StatusClosed)}), stock.StatusClosed)
	wantStatus(t, e.mustUpdate(plainSeller, plain.ID, stock.ItemUpdate{Status: ptr(stock.StatusClosed)}), stock.StatusClosed)

	st := mustStock(t, e, seller, multi.UserProductID)
	if _, err := e.svc.PutStock(ctx, seller, multi.UserProductID, st.Version, []stock.StockLocation{loc(stores[0], 4)}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.mustItem(multi.ID), stock.StatusClosed)
	// Closed is final: no edit of its quantity, price or title either.
	for _, up := range []stock.ItemUpdate{{AvailableQuantity: ptr(int64(4))}, {Title: ptr("Mesa nueva")}} {
		before := e.state()
		_, err := e.svc.UpdateItem(ctx, plainSeller, plain.ID, up)
		mustErr(t, err, errs.Invalid, "Item "+plain.ID+" is closed and cannot change: relist it with POST /items/"+plain.ID+"/relist")
		e.unchanged(before, "an edit of a closed item")
	}
	wantStatus(t, e.mustItem(plain.ID), stock.StatusClosed)

	for _, c := range []struct {
		seller int64
		id     string
	}{{seller, multi.ID}, {plainSeller, plain.ID}} {
		before := e.state()
		for _, status := range []string{stock.StatusActive, stock.StatusPaused} {
			_, err := e.svc.UpdateItem(ctx, c.seller, c.id, stock.ItemUpdate{Status: ptr(status)})
			mustErr(t, err, errs.Invalid, "Item "+c.id+" is closed and cannot change status")
		}
		e.unchanged(before, "a closed item's status change")
		wantStatus(t, e.mustUpdate(c.seller, c.id, stock.ItemUpdate{Status: ptr(stock.StatusClosed)}), stock.StatusClosed)
		_, err := e.sales().PlaceOrder(ctx, sales.NewOrder{BuyerID: e.mustUser("MLA"), ItemID: c.id, Quantity: 1})
		mustErr(t, err, errs.Invalid, "Item "+c.id+" is not active: its status is closed")
	}
}

func TestUpdateItem_AvailableQuantityOfAMultiOriginItemIsRefused(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(1)
	item := e.mustPublishMulti(seller, multiItem("Bicicleta", "10", loc(stores[0], 2)))
	before := e.state()
	_, err := e.svc.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(5))})
	de := mustErr(t, err, errs.Invalid, "The fields [available_quantity] are invalid for requested call")
	want := []errs.Cause{{Code: "item.multi_origin",
		Message: "Item " + item.ID + " has stock per store: write it with PUT /user-products/" + item.UserProductID + "/stock/type/seller_warehouse"}}
	if !slices.Equal(de.Causes, want) {
		t.Fatalf("causes %+v, want %+v", de.Causes, want)
	}
	e.unchanged(before, "available_quantity of a multi-origin item")
}

func (e *env) mustClose(seller int64, id string) {
	e.tb.Helper()
	e.mustUpdate(seller, id, stock.ItemUpdate{Status: ptr(stock.StatusClosed)})
}

func TestRelist_OnlyAClosedItemIsRelisted(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 2))
	for _, status := range []string{stock.StatusActive, stock.StatusPaused} {
		e.mustUpdate(seller, item.ID, stock.ItemUpdate{Status: ptr(status)})
		before := e.state()
		_, err := e.svc.Relist(ctx, seller, item.ID, stock.RelistInput{Quantity: ptr(int64(1))})
		mustErr(t, err, errs.Invalid, "Item "+item.ID+" is not closed: only a closed item can be relisted")
		e.unchanged(before, "relisting a "+status+" item")
	}
}

func TestRelist_AClosedItemIsRelistedOnceAsANewItemNamingItsParent(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa de roble", "100", 3))
	e.mustSell(item.ID, 1)
	e.mustClose(seller, item.ID)
	closed := e.mustItem(item.ID)

	p, err := e.svc.Relist(ctx, seller, item.ID, stock.RelistInput{Quantity: ptr(int64(4)), Price: ptr(money.MustParse("120")), ListingTypeID: "gold_pro"})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == item.ID || p.ParentItemID == nil || *p.ParentItemID != item.ID || p.UserProductID == item.UserProductID {
		t.Fatalf("new item %s parent %v user product %s (old %s, %s)", p.ID, p.ParentItemID, p.UserProductID, item.ID, item.UserProductID)
	}
	got := e.mustItem(p.ID)
	wantStatus(t, got, stock.StatusActive)
	if got.Title != "Mesa de roble" || got.Price != "120" || got.ListingTypeID != "gold_pro" || got.AvailableQuantity != 4 ||
		got.SoldQuantity != 0 || got.ParentItemID == nil || *got.ParentItemID != item.ID {
		t.Fatalf("relisted item %+v", got)
	}
	// The old item is as it was, and keeps its stock.
	if old := e.mustItem(item.ID); old.Status != stock.StatusClosed || old.AvailableQuantity != closed.AvailableQuantity ||
		old.SoldQuantity != 1 || old.ParentItemID != nil {
		t.Fatalf("closed item after relist %+v", old)
	}
	before := e.state()
	_, err = e.svc.Relist(ctx, seller, item.ID, stock.RelistInput{Quantity: ptr(int64(4))})
	mustErr(t, err, errs.Invalid, "Item "+item.ID+" was already relisted as "+p.ID)
	_, err = e.svc.Relist(ctx, seller, p.ID, stock.RelistInput{Quantity: ptr(int64(4))})
	mustErr(t, err, errs.Invalid, "Item "+p.ID+" is not closed: only a closed item can be relisted")
	e.unchanged(before, "a second relist")

	// The defaults are the closed item's price and listing type; the
	// relisted item is relisted in turn once closed.
	e.mustClose(seller, p.ID)
	again, err := e.svc.Relist(ctx, seller, p.ID, stock.RelistInput{Quantity: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if again.Price != "120" || again.ListingTypeID != "gold_pro" || *again.ParentItemID != p.ID || again.Status != stock.StatusActive {
		t.Fatalf("second generation %+v", again)
	}
	// An order of a relisted item names its parent.
	o := e.mustSell(again.ID, 1)
	if got := o.OrderItems[0].Item.ParentItemID; got == nil || *got != p.ID {
		t.Fatalf("order's parent_item_id %v, want %s", got, p.ID)
	}
}

func TestItemJSON_SubStatusSoldQuantityAndParentAreAlwaysThere(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 1))
	e.mustClose(seller, item.ID)
	p, err := e.svc.Relist(ctx, seller, item.ID, stock.RelistInput{Quantity: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	e.mustSell(p.ID, 1)
	for _, c := range []struct {
		id   string
		want []string
	}{
		{item.ID, []string{`"sub_status":[]`, `"sold_quantity":0`, `"parent_item_id":null`}},
		{p.ID, []string{`"sub_status":["out_of_stock"]`, `"sold_quantity":1`, `"parent_item_id":"` + item.ID + `"`}},
	} {
		b, err := json.Marshal(e.mustItem(c.id))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Fatalf("item %s JSON %s lacks %s", c.id, b, w)
			}
		}
		// The mark of a relisted item is the engine's, not the API's.
		if strings.Contains(string(b), p.ID) && c.id == item.ID {
			t.Fatalf("the closed item's JSON names its relisting: %s", b)
		}
	}
}

func TestRelist_OnlyTheSellerRelistsAKnownItem(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 2))
	e.mustClose(seller, item.ID)
	other := e.mustUser("MLA")
	before := e.state()
	_, err := e.svc.Relist(ctx, other, item.ID, stock.RelistInput{Quantity: ptr(int64(1))})
	mustErr(t, err, errs.Forbidden, "The caller is not the seller of item "+item.ID)
	_, err = e.svc.Relist(ctx, seller, "MLA999", stock.RelistInput{Quantity: ptr(int64(1))})
	mustErr(t, err, errs.NotFound, "Item with id MLA999 not found")
	e.unchanged(before, "refused relists")
}

func TestRelist_APlainSellerSendsQuantityAWarehouseSellerStockLocations(t *testing.T) {
	e := newEnv(t)
	plainSeller := e.mustUser("MLA")
	plain := e.mustPublish(plainSeller, plainItem("Mesa", "10", 2))
	e.mustClose(plainSeller, plain.ID)
	warehouse, stores := e.mustSeller(2)
	multi := e.mustPublishMulti(warehouse, multiItem("Bicicleta", "10", loc(stores[0], 2)))
	e.mustClose(warehouse, multi.ID)

	before := e.state()
	for _, c := range []struct {
		seller int64
		id     string
		in     stock.RelistInput
		msg    string
	}{
		{plainSeller, plain.ID, stock.RelistInput{}, "The fields [quantity] are required for requested call"},
		{plainSeller, plain.ID, stock.RelistInput{Quantity: ptr(int64(1)), StockLocations: []stock.StockLocation{loc(stores[0], 1)}}, "The fields [stock_locations] are invalid for requested call"},
		{warehouse, multi.ID, stock.RelistInput{Quantity: ptr(int64(1))}, "The fields [quantity] are invalid for requested call"},
		{warehouse, multi.ID, stock.RelistInput{}, "The fields [stock_locations] are required for requested call"},
		{plainSeller, plain.ID, stock.RelistInput{Quantity: ptr(int64(-1))}, ""},
	} {
		_, err := e.svc.Relist(ctx, c.seller, c.id, c.in)
		if c.msg == "" {
			// The publication's own rules: any Invalid.
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("relist %+v: %v, want Invalid", c.in, err)
			}
			continue
		}
		mustErr(t, err, errs.Invalid, c.msg)
	}
	e.unchanged(before, "relists with the wrong stock")

	p, err := e.svc.Relist(ctx, warehouse, multi.ID, stock.RelistInput{StockLocations: []stock.StockLocation{loc(stores[1], 5)}})
	if err != nil {
		t.Fatal(err)
	}
	st := mustStock(t, e, warehouse, p.UserProductID)
	if p.UserProductID == multi.UserProductID || st.Version != 1 || len(st.Locations) != 1 ||
		st.Locations[0].StoreID != stores[1] || st.Locations[0].Quantity != 5 {
		t.Fatalf("relisted stock %s %+v version %d", p.UserProductID, st.Locations, st.Version)
	}
	if old := mustStock(t, e, warehouse, multi.UserProductID); len(old.Locations) != 1 || old.Locations[0].Quantity != 2 {
		t.Fatalf("the closed item's stock moved: %+v", old.Locations)
	}
}

func TestRelist_ConcurrentRelistsOfOneItemMakeOneNewItem(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	item := e.mustPublish(seller, plainItem("Mesa", "10", 2))
	e.mustClose(seller, item.ID)
	const n = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		made   []string
		errc   = make(chan error, n)
		refuse []error
		start  = make(chan struct{})
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			p, err := e.svc.Relist(ctx, seller, item.ID, stock.RelistInput{Quantity: ptr(int64(1))})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made = append(made, p.ID)
			case errs.Is(err, errs.Invalid):
				refuse = append(refuse, err)
			default:
				errc <- fmt.Errorf("relist: %v; want success or Invalid", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(made) != 1 {
		t.Fatalf("%d relists succeeded (%v), want 1", len(made), made)
	}
	for _, err := range refuse {
		mustErr(t, err, errs.Invalid, "Item "+item.ID+" was already relisted as "+made[0])
	}
	page, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Limit: 50})
	if err != nil || page.Total != 2 || !slices.Contains(page.Results, made[0]) {
		t.Fatalf("the seller's items %+v %v, want the closed one and %s", page, err, made[0])
	}
}

// events returns the topic and resource of every event after seq from.
func (e *env) events(from uint64) (evs []string, last uint64) {
	e.tb.Helper()
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(v)
			if err != nil {
				return err
			}
			last = max(last, ev.Seq)
			if ev.Seq > from {
				evs = append(evs, ev.Topic+" "+ev.Resource)
			}
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("outbox: %v", err)
	}
	slices.Sort(evs)
	return evs, last
}

func TestEvents_ItemChangesAndStoreQuantitiesAreAnnounced(t *testing.T) {
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	multi := e.mustPublishMulti(seller, multiItem("Bicicleta", "10", loc(stores[0], 1)))
	plainSeller := e.mustUser("MLA")
	plain := e.mustPublish(plainSeller, plainItem("Mesa", "10", 1))
	items := func(id string) string { return stock.TopicItems + " /items/" + id }
	stockLoc := stock.TopicStockLocation + " /user-products/" + multi.UserProductID + "/stock"

	_, mark := e.events(0)
	check := func(what string, want ...string) {
		t.Helper()
		var got []string
		got, mark = e.events(mark)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: events %v, want %v", what, got, want)
		}
	}
	st := mustStock(t, e, seller, multi.UserProductID)
	out, err := e.svc.PutStock(ctx, seller, multi.UserProductID, st.Version, []stock.StockLocation{loc(stores[1], 2)})
	if err != nil {
		t.Fatal(err)
	}
	check("a store added", items(multi.ID), stockLoc)
	if _, err = e.svc.PutStock(ctx, seller, multi.UserProductID, out.Version, []stock.StockLocation{loc(stores[1], 2)}); err != nil {
		t.Fatal(err)
	}
	check("the same quantities again")
	e.mustUpdate(plainSeller, plain.ID, stock.ItemUpdate{AvailableQuantity: ptr(int64(0))})
	check("a plain item running out", items(plain.ID))
	e.mustUpdate(seller, multi.ID, stock.ItemUpdate{Status: ptr(stock.StatusPaused)})
	check("a pause", items(multi.ID))
	e.mustClose(plainSeller, plain.ID)
	check("a close", items(plain.ID))
	p, err := e.svc.Relist(ctx, plainSeller, plain.ID, stock.RelistInput{Quantity: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	// The closed item's record gains its mark (not in its JSON), the new
	// item is created.
	got, _ := e.events(mark)
	if !slices.Contains(got, items(p.ID)) {
		t.Fatalf("relist: events %v, want %s", got, items(p.ID))
	}
}

func mustStock(tb fataler, e *env, seller int64, id string) stock.Stock {
	tb.Helper()
	st, err := e.svc.Stock(ctx, seller, id)
	if err != nil {
		tb.Fatalf("stock %s: %v", id, err)
	}
	return st
}
