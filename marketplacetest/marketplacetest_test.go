package marketplacetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
)

var ctx = context.Background()

func do(t *testing.T, c *marketplacetest.Client, method, path string, body any) *marketplacetest.Response {
	t.Helper()
	res, err := c.Do(ctx, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res
}

func obj(t *testing.T, res *marketplacetest.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := res.Decode(&m); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	return m
}

func storesPath(id int64) string { return fmt.Sprintf("/users/%d/stores/search", id) }

func TestNewServer_GivesASellerWithTwoStockLocationsABuyerAndAnOperator(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	is.True(strings.HasPrefix(srv.URL, "http://127.0.0.1:")) // loopback
	is.True(srv.Seller.HasTag("warehouse_management"))
	is.Equal(len(srv.Seller.Stores), 2)

	res := do(t, srv.Client(srv.Seller.Token), "GET", storesPath(srv.Seller.ID)+"?tags=stock_location", nil)
	is.Equal(res.Status, 200)
	is.Equal(obj(t, res)["paging"].(map[string]any)["total"], 2.0)

	res = do(t, srv.Client(srv.Buyer.Token), "GET", fmt.Sprintf("/users/%d", srv.Buyer.ID), nil)
	is.Equal(res.Status, 200)

	res = do(t, srv.Operator, "GET", "/operator/clock", nil)
	is.Equal(res.Status, 200)
	is.Equal(obj(t, res)["now"], "2026-03-04T15:00:00Z")
}

func TestNewServer_ClockMovesEveryRuleThatReadsTime(t *testing.T) {
	is := is.New(t)
	start := time.Date(2027, 1, 2, 3, 0, 0, 0, time.UTC)
	srv := marketplacetest.NewServer(t, marketplacetest.WithStart(start))
	is.NoErr(srv.Clock.Advance(time.Hour))
	res := do(t, srv.Operator, "GET", "/operator/clock", nil)
	is.Equal(obj(t, res)["now"], "2027-01-02T04:00:00Z")
	is.True(srv.Marketplace.Clock.Now().Equal(start.Add(time.Hour)))
}

func TestReset_OverHTTPRemovesEveryoneAndDemoTrueBringsTheAccountsBack(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	seller := srv.Client(srv.Seller.Token)

	res := do(t, srv.Operator, "POST", "/operator/users", map[string]any{"nickname": "EXTRA", "site_id": "MLA"})
	is.Equal(res.Status, 201)
	extraID := obj(t, res)["id"]

	res = do(t, srv.Operator, "POST", "/operator/reset", nil)
	is.Equal(res.Status, 204)
	is.Equal(len(res.Body), 0)
	is.Equal(do(t, seller, "GET", storesPath(srv.Seller.ID), nil).Status, 401) // the seller's token is gone
	is.Equal(do(t, srv.Operator, "GET", "/operator/clock", nil).Status, 200)   // the operator token stays

	res = do(t, srv.Operator, "POST", "/operator/reset?demo=true", nil)
	is.Equal(res.Status, 204)
	is.Equal(do(t, seller, "GET", storesPath(srv.Seller.ID), nil).Status, 200) // the same ids again

	res = do(t, srv.Operator, "POST", "/operator/users", map[string]any{"nickname": "EXTRA", "site_id": "MLA"})
	is.Equal(obj(t, res)["id"], extraID) // ids start again from their first values

	res = do(t, srv.Operator, "POST", "/operator/reset?demo=maybe", nil)
	is.Equal(res.Status, 400)
	is.Equal(obj(t, res)["message"], "Invalid demo: maybe. It must be true or false")
	is.Equal(do(t, srv.Client(srv.Seller.Token), "POST", "/operator/reset", nil).Status, 403)
	is.Equal(do(t, srv.Client(""), "POST", "/operator/reset", nil).Status, 401)
}

func TestSnapshots_OverHTTPCreateListRestoreAndDelete(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	seller := srv.Client(srv.Seller.Token)

	res := do(t, srv.Operator, "POST", "/operator/snapshots", map[string]any{"name": "two stores"})
	is.Equal(res.Status, 201)
	snap := obj(t, res)
	is.Equal(snap["name"], "two stores")
	is.Equal(snap["created"], "2026-03-04T15:00:00Z")
	id := int64(snap["id"].(float64))

	res = do(t, srv.Operator, "POST", "/operator/snapshots", nil) // the name is optional
	is.Equal(res.Status, 201)
	is.Equal(obj(t, res)["name"], "")

	res = do(t, srv.Operator, "POST", fmt.Sprintf("/operator/users/%d/stores", srv.Seller.ID),
		map[string]any{"description": "Third", "tags": []string{"stock_location"}})
	is.Equal(res.Status, 201)
	is.Equal(obj(t, do(t, seller, "GET", storesPath(srv.Seller.ID), nil))["paging"].(map[string]any)["total"], 3.0)

	res = do(t, srv.Operator, "GET", "/operator/snapshots", nil)
	is.Equal(res.Status, 200)
	var list []map[string]any
	is.NoErr(res.Decode(&list))
	is.Equal(len(list), 3) // marketplacetest's own, and the two above
	is.Equal(list[0]["name"], marketplacetest.InitialSnapshot)

	res = do(t, srv.Operator, "POST", fmt.Sprintf("/operator/snapshots/%d/restore", id), nil)
	is.Equal(res.Status, 204)
	is.Equal(obj(t, do(t, seller, "GET", storesPath(srv.Seller.ID), nil))["paging"].(map[string]any)["total"], 2.0)

	is.Equal(do(t, srv.Operator, "DELETE", fmt.Sprintf("/operator/snapshots/%d", id), nil).Status, 204)
	res = do(t, srv.Operator, "POST", fmt.Sprintf("/operator/snapshots/%d/restore", id), nil)
	is.Equal(res.Status, 404)
	is.Equal(obj(t, res)["message"], fmt.Sprintf("Snapshot %d not found", id))
	is.Equal(obj(t, res)["status"], 404.0)
	is.Equal(do(t, srv.Operator, "DELETE", fmt.Sprintf("/operator/snapshots/%d", id), nil).Status, 404)
	is.Equal(do(t, srv.Operator, "POST", "/operator/snapshots/abc/restore", nil).Status, 400)
	is.Equal(do(t, srv.Operator, "POST", "/operator/snapshots", `{"name": 5}`).Status, 400)
	is.Equal(do(t, srv.Operator, "POST", "/operator/snapshots", map[string]any{"name": strings.Repeat("n", 201)}).Status, 400)
	is.Equal(do(t, seller, "GET", "/operator/snapshots", nil).Status, 403)
}

func TestServerReset_BringsBackTheStartingStateWithItsIds(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	res := do(t, srv.Operator, "POST", "/operator/users", map[string]any{"nickname": "FIRST", "site_id": "MLA"})
	first := obj(t, res)["id"]
	is.NoErr(srv.Reset())
	res = do(t, srv.Operator, "POST", "/operator/users", map[string]any{"nickname": "AGAIN", "site_id": "MLA"})
	is.Equal(obj(t, res)["id"], first)
	is.Equal(do(t, srv.Client(srv.Seller.Token), "GET", storesPath(srv.Seller.ID), nil).Status, 200)
}

// TestRestore_UnderConcurrentLoadEveryRequestSeesOneStateOrTheOther flips
// the state between two snapshots while readers call a route that
// authenticates and then reads: in state A the user, its token and its two
// stores exist; in state B none of them. A request that authenticated in A
// and read in B would get a 404 or an empty list.
func TestRestore_UnderConcurrentLoadEveryRequestSeesOneStateOrTheOther(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	m := srv.Marketplace
	// Enough records that replacing the state takes several transactions.
	for i := range 400 {
		if _, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: fmt.Sprintf("FILL%d", i), SiteID: "MLA"}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := m.CreateSnapshot(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Reset(ctx, marketplace.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := m.CreateSnapshot(ctx, "B")
	if err != nil {
		t.Fatal(err)
	}
	seller := srv.Client(srv.Seller.Token)
	path := storesPath(srv.Seller.ID)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := seller.Do(ctx, "GET", path, nil)
				if err != nil {
					t.Error(err)
					return
				}
				var page struct {
					Paging struct{ Total int } `json:"paging"`
				}
				_ = json.Unmarshal(res.Body, &page)
				outcome := fmt.Sprintf("%d/%d", res.Status, page.Paging.Total)
				if outcome != "200/2" && res.Status != 401 {
					t.Errorf("a mix: %s %s", outcome, res.Body)
				}
				mu.Lock()
				seen[fmt.Sprint(res.Status)]++
				mu.Unlock()
			}
		}()
	}
	for i := range 20 {
		id := a.ID
		if i%2 == 1 {
			id = b.ID
		}
		// Over HTTP like the readers, so the gate is the server's.
		if res := do(t, srv.Operator, "POST", fmt.Sprintf("/operator/snapshots/%d/restore", id), nil); res.Status != 204 {
			t.Fatalf("restore: %d %s", res.Status, res.Body)
		}
		if i%5 == 0 {
			if res := do(t, srv.Operator, "POST", "/operator/reset?demo=true", nil); res.Status != 204 {
				t.Fatalf("reset: %d %s", res.Status, res.Body)
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("answers: %v", seen)
}

// receiver records the notifications POSTed to it.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	fail bool
	note chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{note: make(chan struct{}, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var n map[string]any
		_ = json.NewDecoder(req.Body).Decode(&n)
		r.mu.Lock()
		r.got = append(r.got, n)
		fail := r.fail
		r.mu.Unlock()
		r.note <- struct{}{}
		if fail {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *receiver) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for r.count() < n {
		select {
		case <-r.note:
		case <-deadline:
			t.Fatalf("%d notifications after 20s; want %d", r.count(), n)
		}
	}
}

func shopDoc(callback string) fixtures.Document {
	qty := int64(5)
	return fixtures.Document{
		Users: []fixtures.User{
			{Name: "shop", Nickname: "SHOP", SiteID: "MLA", Tags: []string{"normal"}, Tokens: []string{"APP_USR-shop-token-000000000001"}},
			{Name: "fan", Nickname: "FAN", SiteID: "MLA", Tokens: []string{"APP_USR-fan-token-0000000000002"}},
		},
		Items: []fixtures.Item{{Name: "shoe", Seller: "shop", Title: "Zapatillas Running", CategoryID: "MLA1055",
			Price: money.FromInt(1500), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty}},
		Applications: []fixtures.Application{{Name: "hook", Owner: "shop", CallbackURL: callback, Topics: []string{"questions"}}},
	}
}

func TestReset_NoNotificationOfTheOldStateIsSentAfterIt(t *testing.T) {
	old, fresh := newReceiver(t), newReceiver(t)
	srv := marketplacetest.NewServer(t, marketplacetest.WithFixtures(shopDoc(old.srv.URL)))
	fan := srv.Client("APP_USR-fan-token-0000000000002")
	ask := map[string]any{"item_id": srv.Fixtures.Items["shoe"], "text": "Tienen talle 38?"}

	if res := do(t, fan, "POST", "/questions", ask); res.Status != 201 {
		t.Fatalf("ask: %d %s", res.Status, res.Body)
	}
	old.wait(t, 1)
	// The next notification fails and stays due for a retry.
	old.mu.Lock()
	old.fail = true
	old.mu.Unlock()
	if res := do(t, fan, "POST", "/questions", ask); res.Status != 201 {
		t.Fatalf("ask: %d %s", res.Status, res.Body)
	}
	old.wait(t, 2)

	if res := do(t, srv.Operator, "POST", "/operator/reset", nil); res.Status != 204 {
		t.Fatalf("reset: %d", res.Status)
	}
	before := old.count()
	if res := do(t, srv.Operator, "PUT", "/operator/fixtures", shopDoc(fresh.srv.URL)); res.Status != 200 {
		t.Fatalf("fixtures: %d %s", res.Status, res.Body)
	}
	// Past every retry the old delivery could have had.
	if err := srv.Clock.Advance(48 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if res := do(t, fan, "POST", "/questions", ask); res.Status != 201 {
		t.Fatalf("ask after reset: %d %s", res.Status, res.Body)
	}
	fresh.wait(t, 1) // the delivery runs again after the reset
	if n := old.count(); n != before {
		t.Errorf("the old receiver got %d notifications after the reset", n-before)
	}
}

func TestFixtures_OverHTTPLoadOnceAndRefuseABadDocumentWithNothingChanged(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	doc := shopDoc("https://example.com/hook")

	res := do(t, srv.Operator, "PUT", "/operator/fixtures", doc)
	is.Equal(res.Status, 200)
	var first fixtures.Result
	is.NoErr(res.Decode(&first))
	is.True(first.Users["shop"] != 0)
	is.True(strings.HasPrefix(first.Items["shoe"], "MLA"))

	res = do(t, srv.Operator, "PUT", "/operator/fixtures", doc)
	is.Equal(res.Status, 200)
	var again fixtures.Result
	is.NoErr(res.Decode(&again))
	is.Equal(again, first) // loading twice is loading once

	shop := srv.Client("APP_USR-shop-token-000000000001")
	res = do(t, shop, "GET", "/items/"+first.Items["shoe"], nil)
	is.Equal(res.Status, 200)
	is.Equal(obj(t, res)["title"], "Zapatillas Running")

	bad := shopDoc("https://example.com/hook")
	bad.Users[0].Name = "other-shop"
	bad.Users[0].Tokens = []string{"APP_USR-new-token-00000000000009"}
	bad.Items[0].Seller = "nobody"
	res = do(t, srv.Operator, "PUT", "/operator/fixtures", bad)
	is.Equal(res.Status, 400)
	body := obj(t, res)
	is.Equal(body["message"], `Invalid fixture items[0] ("shoe"), field seller: no record of users is named "nobody"`)
	is.Equal(body["error"], "bad_request")
	is.Equal(body["status"], 400.0)
	is.Equal(do(t, srv.Client("APP_USR-new-token-00000000000009"), "GET", storesPath(srv.Seller.ID), nil).Status, 401) // nothing created

	res = do(t, srv.Operator, "PUT", "/operator/fixtures", `{"users": [{"name": "x", "nick": "X"}]}`)
	is.Equal(res.Status, 400)
	is.Equal(obj(t, res)["message"], `Invalid fixture users[0] ("x"), field nick: unknown field`)
	is.Equal(do(t, srv.Operator, "PUT", "/operator/fixtures", `not json`).Status, 400)
	is.Equal(do(t, srv.Client(srv.Seller.Token), "PUT", "/operator/fixtures", doc).Status, 403)
}

func TestWithFixturesFile_LoadsTheDocumentOfMarketplacedFixtures(t *testing.T) {
	is := is.New(t)
	path := t.TempDir() + "/shop.json"
	b, err := json.Marshal(shopDoc("https://example.com/hook"))
	is.NoErr(err)
	is.NoErr(os.WriteFile(path, b, 0o600))
	srv := marketplacetest.NewServer(t, marketplacetest.WithFixturesFile(path))
	is.True(srv.Fixtures.Applications["hook"] != 0)
	res := do(t, srv.Client("APP_USR-fan-token-0000000000002"), "GET", fmt.Sprintf("/users/%d", srv.Fixtures.Users["fan"]), nil)
	is.Equal(res.Status, 200)

	// Reset keeps the fixtures: they are part of the starting state.
	is.NoErr(srv.Reset())
	is.Equal(do(t, srv.Client("APP_USR-fan-token-0000000000002"), "GET", fmt.Sprintf("/users/%d", srv.Fixtures.Users["fan"]), nil).Status, 200)
}

// mustMultiItem publishes, as the seller over HTTP, an item with quantities
// in the seller's two stores; it returns the item's id and user product's.
func mustMultiItem(t *testing.T, srv *marketplacetest.Server, first, second int) (string, string) {
	t.Helper()
	res := do(t, srv.Client(srv.Seller.Token), "POST", "/items/multiwarehouse", map[string]any{
		"title": "Zapatillas Running", "category_id": "MLA1055", "price": 1500, "listing_type_id": "gold_special",
		"currency_id": "ARS", "channels": []string{"marketplace"},
		"stock_locations": []map[string]any{
			{"store_id": srv.Seller.Stores[0].ID, "quantity": first},
			{"store_id": srv.Seller.Stores[1].ID, "quantity": second},
		},
	})
	if res.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", res.Status, res.Body)
	}
	o := obj(t, res)
	return o["id"].(string), o["user_product_id"].(string)
}

// storeQuantities reads, as the seller over HTTP, the quantity of each of
// its stores.
func storeQuantities(t *testing.T, srv *marketplacetest.Server, up string) map[string]float64 {
	t.Helper()
	res := do(t, srv.Client(srv.Seller.Token), "GET", "/user-products/"+up+"/stock", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("stock: %d %s", res.Status, res.Body)
	}
	out := map[string]float64{}
	for _, l := range obj(t, res)["locations"].([]any) {
		l := l.(map[string]any)
		out[l["store_id"].(string)] = l["quantity"].(float64)
	}
	return out
}

func TestPlaceOrder_TheBuyerBuysFromTheNamedStoreAndTheSellerSeesItOverHTTP(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	north, south := srv.Seller.Stores[0].ID, srv.Seller.Stores[1].ID
	item, up := mustMultiItem(t, srv, 3, 4)

	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 2, StoreID: north})
	is.Equal(o.Buyer.ID, srv.Buyer.ID) // no buyer named: srv.Buyer
	is.Equal(o.Seller.ID, srv.Seller.ID)
	is.Equal(o.Status, "paid")
	is.Equal(o.OrderItems[0].Stock[0].StoreID, north)
	is.Equal(storeQuantities(t, srv, up), map[string]float64{north: 1, south: 4})
	res := do(t, srv.Client(srv.Seller.Token), "GET", "/items/"+item, nil)
	is.Equal(obj(t, res)["available_quantity"], 5.0)
	is.Equal(obj(t, res)["sold_quantity"], 2.0)

	other, _, err := srv.Marketplace.CreateUser(ctx, accounts.NewUser{Nickname: "OTHER", SiteID: "MLA"})
	is.NoErr(err)
	o = srv.PlaceOrder(t, sales.NewOrder{BuyerID: other.ID, ItemID: item, Quantity: 1})
	is.Equal(o.Buyer.ID, other.ID)                    // a buyer named is the buyer
	is.Equal(o.OrderItems[0].Stock[0].StoreID, south) // the store with the most units
}

func TestPayOrder_APaymentRequiredOrderTakesItsUnitsWhenPaid(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	north, south := srv.Seller.Stores[0].ID, srv.Seller.Stores[1].ID
	item, up := mustMultiItem(t, srv, 3, 4)

	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 3, StoreID: north, Status: "payment_required"})
	is.Equal(o.Status, "payment_required")
	is.Equal(storeQuantities(t, srv, up), map[string]float64{north: 3, south: 4}) // nothing taken yet

	o = srv.PayOrder(t, o.ID)
	is.Equal(o.Status, "paid")
	is.Equal(len(o.Payments), 1)
	is.Equal(o.Payments[0].Status, "approved")
	is.Equal(storeQuantities(t, srv, up), map[string]float64{north: 0, south: 4})
	sh, err := srv.Marketplace.Sales.Shipment(ctx, sales.Operator, *o.Shipping.ID)
	is.NoErr(err)
	is.Equal(sh.Status, "ready_to_ship")
}

func TestMoveShipment_FollowsTheFlowWithASubstatusAndDeliveryTagsTheOrder(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	item, _ := mustMultiItem(t, srv, 3, 4)
	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	id := *o.Shipping.ID

	sh := srv.MoveShipment(t, id, "shipped", "out_for_delivery")
	is.Equal(sh.Status, "shipped")
	is.Equal(*sh.Substatus, "out_for_delivery")
	sh = srv.MoveShipment(t, id, "delivered")
	is.Equal(sh.Status, "delivered")
	is.Equal(sh.Substatus, (*string)(nil)) // none asked, none set

	read, err := srv.Marketplace.Sales.Order(ctx, sales.Operator, o.ID)
	is.NoErr(err)
	is.True(slices.Contains(read.Tags, "delivered"))
}

func TestCancelOrder_TheUnitsGoBackToTheirStoreAndTheShipmentIsCancelled(t *testing.T) {
	is := is.New(t)
	srv := marketplacetest.NewServer(t)
	north, south := srv.Seller.Stores[0].ID, srv.Seller.Stores[1].ID
	item, up := mustMultiItem(t, srv, 3, 4)
	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 2, StoreID: south})
	is.Equal(storeQuantities(t, srv, up), map[string]float64{north: 3, south: 2})

	o = srv.CancelOrder(t, o.ID)
	is.Equal(o.Status, "cancelled")
	is.Equal(o.Payments[0].Status, "refunded")
	is.Equal(storeQuantities(t, srv, up), map[string]float64{north: 3, south: 4})
	sh, err := srv.Marketplace.Sales.Shipment(ctx, sales.Operator, *o.Shipping.ID)
	is.NoErr(err)
	is.Equal(sh.Status, "cancelled")
}

// fatalRecorder stands for a test: it keeps what a helper failed it with.
type fatalRecorder struct {
	testing.TB
	failed string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestSaleHelpers_ARefusalFailsTheTestWithTheMarketplacesMessage(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	item, _ := mustMultiItem(t, srv, 2, 0)
	paid := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	cancelled := srv.CancelOrder(t, srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1}).ID)
	tests := []struct {
		name string
		call func(tb testing.TB)
		want string
	}{
		{"PlaceOrder", func(tb testing.TB) { srv.PlaceOrder(tb, sales.NewOrder{ItemID: item, Quantity: 2}) },
			fmt.Sprintf("marketplacetest: place order of 2 units of item %s: bad_request: No store of item %s has the 2 units the order needs", item, item)},
		{"PlaceOrderBySeller", func(tb testing.TB) {
			srv.PlaceOrder(tb, sales.NewOrder{BuyerID: srv.Seller.ID, ItemID: item, Quantity: 1})
		}, fmt.Sprintf("marketplacetest: place order of 1 units of item %s: bad_request: User %d is the seller of item %s and cannot buy it", item, srv.Seller.ID, item)},
		{"PayOrder", func(tb testing.TB) { srv.PayOrder(tb, paid.ID) },
			fmt.Sprintf("marketplacetest: pay order %d: bad_request: Order %d is paid: only a payment_required order takes a payment", paid.ID, paid.ID)},
		{"MoveShipment", func(tb testing.TB) { srv.MoveShipment(tb, *paid.Shipping.ID, "delivered") },
			fmt.Sprintf("marketplacetest: move shipment %d to delivered: bad_request: Shipment %d cannot move from ready_to_ship to delivered", *paid.Shipping.ID, *paid.Shipping.ID)},
		{"CancelOrder", func(tb testing.TB) { srv.CancelOrder(tb, cancelled.ID) },
			fmt.Sprintf("marketplacetest: cancel order %d: bad_request: Order %d is already cancelled", cancelled.ID, cancelled.ID)},
		{"CancelUnknownOrder", func(tb testing.TB) { srv.CancelOrder(tb, 1) }, "marketplacetest: cancel order 1: order_not_found: Order does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fatalRecorder{TB: t}
			tc.call(rec)
			if rec.failed != tc.want {
				t.Errorf("the test failed with %q; want %q", rec.failed, tc.want)
			}
		})
	}
}

func TestPlaceOrder_TheSellersSubscribedApplicationHearsOfTheSale(t *testing.T) {
	is := is.New(t)
	rcv := newReceiver(t)
	srv := marketplacetest.NewServer(t)
	res := do(t, srv.Operator, "POST", "/operator/applications", map[string]any{
		"name": "orders", "owner_user_id": srv.Seller.ID, "callback_url": rcv.srv.URL, "topics": []string{"orders_v2"},
	})
	is.Equal(res.Status, http.StatusCreated)
	item, _ := mustMultiItem(t, srv, 3, 4)

	o := srv.PlaceOrder(t, sales.NewOrder{ItemID: item, Quantity: 1})
	rcv.wait(t, 1) // delivered by the server's background work
	rcv.mu.Lock()
	got := rcv.got[0]
	rcv.mu.Unlock()
	is.Equal(got["topic"], "orders_v2")
	is.Equal(got["resource"], fmt.Sprintf("/orders/%d", o.ID))
	is.Equal(got["user_id"], float64(srv.Seller.ID))
}

func TestWithFixtures_OrdersOfEveryDocumentAreInFixtures(t *testing.T) {
	is := is.New(t)
	first := shopDoc("https://example.com/hook")
	second := fixtures.Document{Orders: []fixtures.Order{
		{Name: "sale", Buyer: "fan", Item: "shoe", Quantity: 2, ShipmentStatus: "shipped"},
	}}
	// The second document names the first's records: they are loaded again,
	// which creates nothing, and the order is placed.
	second.Users, second.Items = first.Users, first.Items
	srv := marketplacetest.NewServer(t, marketplacetest.WithFixtures(first), marketplacetest.WithFixtures(second))
	id := srv.Fixtures.Orders["sale"]
	is.True(id != 0)
	o, err := srv.Marketplace.Sales.Order(ctx, sales.Operator, id)
	is.NoErr(err)
	is.Equal(o.Buyer.ID, srv.Fixtures.Users["fan"])
	is.Equal(o.OrderItems[0].Item.ID, srv.Fixtures.Items["shoe"])
	sh, err := srv.Marketplace.Sales.Shipment(ctx, sales.Operator, *o.Shipping.ID)
	is.NoErr(err)
	is.Equal(sh.Status, "shipped")
	is.True(srv.Fixtures.Applications["hook"] != 0) // the first document's records stay
}
