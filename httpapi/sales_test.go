package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/httpapi/openapi"
)

// saleWorld is a seller with an item whose stock is split across two
// stores (3 and 5 units), a buyer, and another seller who is neither.
type saleWorld struct {
	ts       *testServer
	seller   user
	stores   []string
	buyer    user
	stranger user
	item, up string
}

func newSaleWorld(t *testing.T) *saleWorld {
	t.Helper()
	ts := newTestServer(t)
	w := &saleWorld{ts: ts, buyer: ts.mustUser("MLA")}
	w.seller, w.stores = ts.mustSeller(2)
	w.stranger, _ = ts.mustSeller(1)
	w.item, w.up = ts.mustMultiItem(w.seller.Token, w.stores[0], 3, w.stores[1], 5)
	return w
}

// sale is an order as the tests name it: its id, its pack's and its
// shipment's, as path segments, and the answer that created it.
type sale struct {
	id, pack, shipment string
	body               map[string]any
}

func saleOf(o map[string]any) sale {
	return sale{
		id:       idString(o["id"]),
		pack:     idString(o["pack_id"]),
		shipment: idString(o["shipping"].(map[string]any)["id"]),
		body:     o,
	}
}

// idString writes a JSON number id as the path writes it.
func idString(v any) string { return strconv.FormatInt(int64(v.(float64)), 10) }

// mustSale makes a sale through the operator route.
func (ts *testServer) mustSale(body map[string]any) sale {
	ts.t.Helper()
	res := ts.operator("POST", "/operator/orders", body)
	if res.Status != http.StatusCreated {
		ts.t.Fatalf("place order: %d %s", res.Status, res.Raw)
	}
	return saleOf(res.Obj())
}

// buy sells quantity units of the world's item to its buyer, with the
// fields of extra (key, value pairs) added.
func (w *saleWorld) buy(quantity int, extra ...any) sale {
	w.ts.t.Helper()
	return w.ts.mustSale(with(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.item, "quantity": quantity}, extra...))
}

// stock reads the user product's stock: its x-version and the quantity of
// each store.
func (w *saleWorld) stock() (int64, map[string]float64) {
	w.ts.t.Helper()
	res := w.ts.do("GET", "/user-products/"+w.up+"/stock", w.seller.Token, nil)
	if res.Status != http.StatusOK {
		w.ts.t.Fatalf("read stock: %d %s", res.Status, res.Raw)
	}
	v, err := strconv.ParseInt(res.Header.Get("x-version"), 10, 64)
	if err != nil {
		w.ts.t.Fatalf("x-version %q: %v", res.Header.Get("x-version"), err)
	}
	q := map[string]float64{}
	for _, l := range res.Obj()["locations"].([]any) {
		l := l.(map[string]any)
		q[l["store_id"].(string)] = l["quantity"].(float64)
	}
	return v, q
}

// itemOf reads an item as anyone sees it.
func (ts *testServer) itemOf(id string) map[string]any {
	ts.t.Helper()
	res := ts.do("GET", "/items/"+id, "", nil)
	if res.Status != http.StatusOK {
		ts.t.Fatalf("read item: %d %s", res.Status, res.Raw)
	}
	return res.Obj()
}

// ordersOf is the total of the operator's search of the seller's orders.
func (w *saleWorld) ordersOf(seller int64) float64 {
	w.ts.t.Helper()
	res := w.ts.operator("GET", fmt.Sprintf("/operator/orders?seller=%d", seller), nil)
	if res.Status != http.StatusOK {
		w.ts.t.Fatalf("operator search: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["paging"].(map[string]any)["total"].(float64)
}

// mustAppToken is the access token an OAuth application of owner gets for
// userID through the code flow.
func (ts *testServer) mustAppToken(owner, userID int64) string {
	ts.t.Helper()
	app := ts.mustOAuthApp(owner, appRedirect)
	code := ts.mustCode(app, userID, appRedirect, nil)
	res := ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
		"client_secret": {app.Secret}, "code": {code}, "redirect_uri": {appRedirect}})
	if res.Status != http.StatusOK {
		ts.t.Fatalf("token: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["access_token"].(string)
}

// wantBody checks that res is exactly the error body {message, error,
// status, cause}; cause nil means [].
func wantBody(t testing.TB, res response, status int, code, message string, cause []any) {
	t.Helper()
	if cause == nil {
		cause = []any{}
	}
	want := map[string]any{"message": message, "error": code, "status": float64(status), "cause": cause}
	if res.Status != status || !reflect.DeepEqual(res.Body, want) {
		t.Fatalf("got %d %s\nwant %d %v", res.Status, res.Raw, status, want)
	}
}

func badRequest(t testing.TB, res response, message string) {
	t.Helper()
	wantBody(t, res, http.StatusBadRequest, "bad_request", message, nil)
}

const msgNoToken = "Missing access token: send Authorization: Bearer <token>"

func TestPlaceOrder_APaidOrderTakesItsUnitsFromOneStoreAndMovesTheStockVersion(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	before, _ := w.stock()
	o := w.buy(2)
	is.Equal(o.body["status"], "paid")
	line := o.body["order_items"].([]any)[0].(map[string]any)
	// Without store_id the units leave the store with the most units.
	is.Equal(line["stock"], []any{map[string]any{"store_id": w.stores[1], "network_node_id": w.stores[1] + "01"}})
	is.Equal(line["quantity"], float64(2))
	is.Equal(line["item"].(map[string]any)["id"], w.item)
	is.Equal(o.body["tags"], []any{"paid"})
	is.True(o.body["date_closed"] != nil) // a paid order is closed
	payments := o.body["payments"].([]any)
	is.Equal(len(payments), 1)
	is.Equal(payments[0].(map[string]any)["status"], "approved")
	is.Equal(o.body["seller"].(map[string]any)["id"], float64(w.seller.ID))
	is.Equal(o.body["buyer"].(map[string]any)["id"], float64(w.buyer.ID))

	res := w.ts.do("GET", "/orders/"+o.id, w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Body, any(o.body)) // the order read is the order made

	after, q := w.stock()
	is.True(after > before) // the sale moved the stock version
	is.Equal(q, map[string]float64{w.stores[0]: 3, w.stores[1]: 3})
	put := w.ts.do("PUT", "/user-products/"+w.up+"/stock/type/seller_warehouse", w.seller.Token,
		map[string]any{"locations": []any{map[string]any{"store_id": w.stores[0], "quantity": 10}}},
		"x-version", strconv.FormatInt(before, 10))
	wantBody(t, put, http.StatusConflict, "conflict", "Version mismatch", nil)

	it := w.ts.itemOf(w.item)
	is.Equal(it["available_quantity"], float64(6))
	is.Equal(it["sold_quantity"], float64(2))
}

func TestPlaceOrder_ANamedStoreGivesTheUnits(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	o := w.buy(1, "store_id", w.stores[0])
	line := o.body["order_items"].([]any)[0].(map[string]any)
	is.Equal(line["stock"], []any{map[string]any{"store_id": w.stores[0], "network_node_id": w.stores[0] + "01"}})
	_, q := w.stock()
	is.Equal(q, map[string]float64{w.stores[0]: 2, w.stores[1]: 5})
	sh := w.ts.do("GET", "/shipments/"+o.shipment, w.seller.Token, nil)
	is.Equal(sh.Status, http.StatusOK)
	origin := sh.Obj()["origin"].(map[string]any)
	is.Equal(origin["type"], "seller_warehouse")
	is.Equal(origin["shipping_address"].(map[string]any)["node"], map[string]any{"node_id": w.stores[0] + "01"}) // the shipment leaves from the store
}

func TestPlaceOrder_EveryRefusalHasItsBodyAndChangesNothing(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	plainSeller := ts.mustUser("MLA", "normal")
	plain := ts.mustPlainItem(plainSeller.Token, "Taza roja", 100, 2)
	paused := ts.mustPlainItem(plainSeller.Token, "Taza azul", 100, 2)
	if res := ts.do("PUT", "/items/"+paused, plainSeller.Token, map[string]any{"status": "paused"}); res.Status != http.StatusOK {
		t.Fatalf("pause: %d %s", res.Status, res.Raw)
	}
	otherStore := ts.mustStore(w.seller.ID, "stock_location")
	version, stock := w.stock()
	order := func(kv ...any) map[string]any {
		return with(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.item, "quantity": 1}, kv...)
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		msg    string
	}{
		{"ErrEmptyBody", "", 400, "bad_request", "The request body is empty; a JSON object is expected"},
		{"ErrNotJSON", "{", 400, "bad_request", "Malformed JSON body: unexpected EOF"},
		{"ErrArray", "[]", 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
		{"ErrNull", "null", 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
		{"ErrNoBuyer", map[string]any{"item_id": w.item, "quantity": 1}, 400, "bad_request", "The field [buyer_id] is required: the id of the user who buys"},
		{"ErrBuyerAsString", order("buyer_id", strconv.FormatInt(w.buyer.ID, 10)), 400, "bad_request", "Invalid JSON: the field [buyer_id] must be of type integer"},
		{"ErrNoItem", order("item_id", nil), 400, "bad_request", "The field [item_id] is required: the id of the item bought"},
		{"ErrItemAsNumber", order("item_id", 5), 400, "bad_request", "Invalid JSON: the field [item_id] must be of type string"},
		{"ErrNoQuantity", order("quantity", nil), 400, "bad_request", "Invalid quantity: 0. It must be between 1 and 1000000000"},
		{"ErrZeroQuantity", order("quantity", 0), 400, "bad_request", "Invalid quantity: 0. It must be between 1 and 1000000000"},
		{"ErrNegativeQuantity", order("quantity", -3), 400, "bad_request", "Invalid quantity: -3. It must be between 1 and 1000000000"},
		{"ErrQuantityOverTheMaximum", order("quantity", 1000000001), 400, "bad_request", "Invalid quantity: 1000000001. It must be between 1 and 1000000000"},
		{"ErrHugeQuantity", `{"buyer_id":1,"item_id":"x","quantity":1e30}`, 400, "bad_request", "Invalid JSON: the field [quantity] must be of type integer"},
		{"ErrFractionalQuantity", order("quantity", 1.5), 400, "bad_request", "Invalid JSON: the field [quantity] must be of type integer"},
		{"ErrQuantityAsString", order("quantity", "2"), 400, "bad_request", "Invalid JSON: the field [quantity] must be of type integer"},
		{"ErrStatus", order("status", "PAID"), 400, "bad_request", "Invalid status: PAID. Valid values are: [paid, payment_required]"},
		{"ErrUnknownItem", order("item_id", "MLA999"), 404, "not_found", "Item with id MLA999 not found"},
		{"ErrUnknownBuyer", order("buyer_id", 999), 404, "not_found", "User not found: 999"},
		{"ErrItemNotActive", order("item_id", paused), 400, "bad_request", "Item " + paused + " is not active: its status is paused"},
		{"ErrSellerBuysItsOwnItem", order("buyer_id", w.seller.ID), 400, "bad_request",
			fmt.Sprintf("User %d is the seller of item %s and cannot buy it", w.seller.ID, w.item)},
		{"ErrStoreWithoutTheItem", order("store_id", otherStore), 400, "bad_request", "Store " + otherStore + " holds no stock of item " + w.item},
		{"ErrStoreWithTooFewUnits", order("store_id", w.stores[0], "quantity", 4), 400, "bad_request",
			"Store " + w.stores[0] + " has 3 units of item " + w.item + "; the order needs 4"},
		{"ErrNoStoreHasEveryUnit", order("quantity", 6), 400, "bad_request", "No store of item " + w.item + " has the 6 units the order needs"},
		{"ErrStoreOfASingleOriginItem", order("item_id", plain, "store_id", w.stores[0]), 400, "bad_request", "Item " + plain + " has no stock per store: send no store_id"},
		{"ErrSingleOriginItemWithTooFewUnits", order("item_id", plain, "quantity", 3), 400, "bad_request", "Item " + plain + " has 2 units available; the order needs 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, ts.operator("POST", "/operator/orders", c.body), c.status, c.code, c.msg, nil)
		})
	}
	v, q := w.stock()
	if v != version || !reflect.DeepEqual(q, stock) {
		t.Errorf("stock moved: version %d %v, was %d %v", v, q, version, stock)
	}
	if n := w.ordersOf(w.seller.ID); n != 0 {
		t.Errorf("%v orders were made", n)
	}
	if it := ts.itemOf(plain); it["available_quantity"] != float64(2) || it["sold_quantity"] != float64(0) {
		t.Errorf("the single-origin item changed: %v", it)
	}
}

// The order's seller and buyer read the order, its pack and its shipment,
// by their own token or an OAuth application's; anyone else is refused.
func TestSalesReads_SellerAndBuyerSeeOthersGet403AndNoTokenGets401(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	o := w.buy(1)
	dev := ts.mustUser("MLA")
	callers := []struct {
		name  string
		token string
		sees  bool
	}{
		{"Seller", w.seller.Token, true},
		{"Buyer", w.buyer.Token, true},
		{"SellersApplication", ts.mustAppToken(dev.ID, w.seller.ID), true},
		{"BuyersApplication", ts.mustAppToken(dev.ID, w.buyer.ID), true},
		{"AnotherSeller", w.stranger.Token, false},
		{"AnotherSellersApplication", ts.mustAppToken(dev.ID, w.stranger.ID), false},
		{"TheApplicationsOwner", dev.Token, false},
	}
	routes := []struct{ path, forbidden string }{
		{"/orders/" + o.id, "The user has not access to the order"},
		{"/packs/" + o.pack, "The user has not access to the pack"},
		{"/shipments/" + o.shipment, "The user has not access to the shipment"},
		{"/shipments/" + o.shipment + "/history", "The user has not access to the shipment"},
	}
	for _, rt := range routes {
		t.Run(rt.path, func(t *testing.T) {
			var seen []any
			for _, c := range callers {
				res := ts.do("GET", rt.path, c.token, nil)
				if !c.sees {
					wantBody(t, res, http.StatusForbidden, "forbidden", rt.forbidden, nil)
					continue
				}
				if res.Status != http.StatusOK {
					t.Fatalf("%s: %d %s", c.name, res.Status, res.Raw)
				}
				seen = append(seen, res.Body)
			}
			for _, b := range seen[1:] {
				if !reflect.DeepEqual(b, seen[0]) {
					t.Errorf("the parties see different answers: %v and %v", b, seen[0])
				}
			}
			wantBody(t, ts.do("GET", rt.path, "", nil), http.StatusUnauthorized, "unauthorized", msgNoToken, nil)
			wantBody(t, ts.do("GET", rt.path, "not-a-token", nil), http.StatusUnauthorized, "unauthorized", "Invalid access token", nil)
		})
	}
}

func TestOrderSearch_OnlyTheCallersOwnOrdersAndTheOperatorsAnyone(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	w.buy(1)
	dev := ts.mustUser("MLA")
	sellerApp := ts.mustAppToken(dev.ID, w.seller.ID)
	strangerApp := ts.mustAppToken(dev.ID, w.stranger.ID)
	bySeller := fmt.Sprintf("/orders/search?seller=%d", w.seller.ID)
	byBuyer := fmt.Sprintf("/orders/search?buyer=%d", w.buyer.ID)
	for _, c := range []struct {
		name, path, token string
		found             bool
		forbidden         int64
	}{
		{"SellerAsSeller", bySeller, w.seller.Token, true, 0},
		{"SellersApplication", bySeller, sellerApp, true, 0},
		{"BuyerAsBuyer", byBuyer, w.buyer.Token, true, 0},
		{"BuyerAsSeller", fmt.Sprintf("/orders/search?seller=%d", w.buyer.ID), w.buyer.Token, false, 0},
		{"AnotherSeller", bySeller, w.stranger.Token, false, w.stranger.ID},
		{"AnotherSellersApplication", bySeller, strangerApp, false, w.stranger.ID},
		{"BuyerAsTheSeller", bySeller, w.buyer.Token, false, w.buyer.ID},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do("GET", c.path, c.token, nil)
			if c.forbidden != 0 {
				party := w.seller.ID
				wantBody(t, res, http.StatusForbidden, "forbidden", fmt.Sprintf("The caller %d cannot search the orders of user %d", c.forbidden, party), nil)
				return
			}
			if res.Status != http.StatusOK {
				t.Fatalf("%d %s", res.Status, res.Raw)
			}
			total := res.Obj()["paging"].(map[string]any)["total"]
			if want := map[bool]float64{true: 1, false: 0}[c.found]; total != want {
				t.Errorf("total %v, want %v", total, want)
			}
		})
	}
	wantBody(t, ts.do("GET", bySeller, "", nil), http.StatusUnauthorized, "unauthorized", msgNoToken, nil)
	op := ts.operator("GET", fmt.Sprintf("/operator/orders?buyer=%d", w.buyer.ID), nil)
	if op.Status != http.StatusOK || op.Obj()["paging"].(map[string]any)["total"] != float64(1) {
		t.Errorf("operator search: %d %s", op.Status, op.Raw)
	}
}

func TestOperatorSalesRoutes_AUserTokenGets403AndNoTokenGets401(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	o := w.buy(1)
	dev := ts.mustUser("MLA")
	appToken := ts.mustAppToken(dev.ID, w.seller.ID)
	routes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/operator/orders", map[string]any{"buyer_id": w.buyer.ID, "item_id": w.item, "quantity": 1}},
		{"GET", fmt.Sprintf("/operator/orders?seller=%d", w.seller.ID), nil},
		{"GET", "/operator/orders/" + o.id, nil},
		{"POST", "/operator/orders/" + o.id + "/payments", map[string]any{"status": "approved"}},
		{"POST", "/operator/orders/" + o.id + "/cancel", nil},
		{"PUT", "/operator/shipments/" + o.shipment + "/status", map[string]any{"status": "shipped"}},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, tok := range []string{w.seller.Token, w.buyer.Token, appToken} {
				wantBody(t, ts.do(rt.method, rt.path, tok, rt.body), http.StatusForbidden, "forbidden", "Operator routes need the operator token", nil)
			}
			wantBody(t, ts.do(rt.method, rt.path, "", rt.body), http.StatusUnauthorized, "unauthorized", msgNoToken, nil)
		})
	}
	// None of the refused calls changed the sale.
	if n := w.ordersOf(w.seller.ID); n != 1 {
		t.Errorf("%v orders, want 1", n)
	}
	res := ts.operator("GET", "/operator/orders/"+o.id, nil)
	if res.Status != http.StatusOK || !reflect.DeepEqual(res.Body, any(o.body)) {
		t.Errorf("the order changed: %d %s", res.Status, res.Raw)
	}
}

func TestSalesReads_MalformedAndUnknownIDs(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	tok := w.seller.Token
	cases := []struct {
		name, method, path, token string
		status                    int
		code, msg                 string
	}{
		{"UnknownOrder", "GET", "/orders/2000000000000999", tok, 404, "order_not_found", "Order does not exist"},
		{"OrderIDNotANumber", "GET", "/orders/abc", tok, 400, "bad_request", "Invalid order_id: abc. It must be a positive integer"},
		{"OrderIDZero", "GET", "/orders/0", tok, 400, "bad_request", "Invalid order_id: 0. It must be a positive integer"},
		{"OrderIDOverflows", "GET", "/orders/99999999999999999999", tok, 400, "bad_request", "Invalid order_id: 99999999999999999999. It must be a positive integer"},
		{"UnknownPack", "GET", "/packs/2100000000000999", tok, 404, "pack_not_found", "Pack does not exist"},
		{"PackIDNotANumber", "GET", "/packs/x", tok, 400, "bad_request", "Invalid pack_id: x. It must be a positive integer"},
		{"UnknownShipment", "GET", "/shipments/40000000999", tok, 404, "shipment_not_found", "Shipment does not exist"},
		{"UnknownShipmentsHistory", "GET", "/shipments/40000000999/history", tok, 404, "shipment_not_found", "Shipment does not exist"},
		{"ShipmentIDNotANumber", "GET", "/shipments/-1", tok, 400, "bad_request", "Invalid shipment_id: -1. It must be a positive integer"},
		{"OperatorUnknownOrder", "GET", "/operator/orders/2000000000000999", testOperatorToken, 404, "order_not_found", "Order does not exist"},
		{"OperatorOrderIDNotANumber", "GET", "/operator/orders/search", testOperatorToken, 400, "bad_request", "Invalid order_id: search. It must be a positive integer"},
		{"PayUnknownOrder", "POST", "/operator/orders/2000000000000999/payments", testOperatorToken, 404, "order_not_found", "Order does not exist"},
		{"CancelUnknownOrder", "POST", "/operator/orders/2000000000000999/cancel", testOperatorToken, 404, "order_not_found", "Order does not exist"},
		{"CancelOrderIDNotANumber", "POST", "/operator/orders/x/cancel", testOperatorToken, 400, "bad_request", "Invalid order_id: x. It must be a positive integer"},
		{"MoveUnknownShipment", "PUT", "/operator/shipments/40000000999/status", testOperatorToken, 404, "shipment_not_found", "Shipment does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			switch {
			case strings.HasSuffix(c.path, "/payments"):
				body = map[string]any{"status": "approved"}
			case strings.HasSuffix(c.path, "/status"):
				body = map[string]any{"status": "shipped"}
			}
			wantBody(t, ts.do(c.method, c.path, c.token, body), c.status, c.code, c.msg, nil)
		})
	}
}

func TestOrderSearch_EnvelopeFiltersAndSorts(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	ts := w.ts
	first := w.buy(1)
	is.NoErr(ts.clock.Advance(time.Minute))
	second := w.buy(1, "status", "payment_required")
	is.NoErr(ts.clock.Advance(time.Minute))
	third := w.buy(1)
	if res := ts.operator("POST", "/operator/orders/"+third.id+"/cancel", nil); res.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", res.Status, res.Raw)
	}
	res := ts.do("GET", fmt.Sprintf("/orders/search?seller=%d", w.seller.ID), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	is.Equal(keys, []string{"available_filters", "available_sorts", "display", "filters", "paging", "query", "results", "sort"})
	is.Equal(o["query"], "")
	is.Equal(o["display"], "complete")
	is.Equal(o["paging"], map[string]any{"total": float64(3), "offset": float64(0), "limit": float64(50)}) // the default limit is 50
	is.Equal(o["sort"], map[string]any{"id": "date_asc", "name": "Date ascending"})
	is.Equal(o["available_sorts"], []any{map[string]any{"id": "date_desc", "name": "Date descending"}})
	is.Equal(o["filters"], []any{})
	is.Equal(o["available_filters"], []any{map[string]any{"id": "order.status", "name": "Order Status", "type": "text", "values": []any{
		map[string]any{"id": "paid", "name": "Order Paid", "results": float64(1)},
		map[string]any{"id": "payment_required", "name": "Payment Required", "results": float64(1)},
		map[string]any{"id": "cancelled", "name": "Order Cancelled", "results": float64(1)},
	}}})
	is.Equal(ids(res), []any{first.body["id"], second.body["id"], third.body["id"]}) // oldest first

	res = ts.do("GET", fmt.Sprintf("/orders/search?seller=%d&sort=date_desc&limit=2&offset=1", w.seller.ID), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(ids(res), []any{second.body["id"], first.body["id"]})
	is.Equal(res.Obj()["paging"], map[string]any{"total": float64(3), "offset": float64(1), "limit": float64(2)})
	is.Equal(res.Obj()["sort"], map[string]any{"id": "date_desc", "name": "Date descending"})

	res = ts.do("GET", fmt.Sprintf("/orders/search?seller=%d&order.status=payment_required", w.seller.ID), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(ids(res), []any{second.body["id"]})
	is.Equal(res.Obj()["filters"], []any{map[string]any{"id": "order.status", "name": "Order Status", "type": "text",
		"values": []any{map[string]any{"id": "payment_required", "name": "Payment Required"}}}})
	is.Equal(res.Obj()["available_filters"], []any{})

	// The operator's search is the same envelope.
	op := ts.operator("GET", fmt.Sprintf("/operator/orders?seller=%d&order.status=payment_required", w.seller.ID), nil)
	is.Equal(op.Status, http.StatusOK)
	is.Equal(op.Body, res.Body)
}

func TestOrderSearch_EveryRefusalHasItsBody(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	s := fmt.Sprintf("/orders/search?seller=%d", w.seller.ID)
	for _, c := range []struct {
		name, path string
		msg        string
	}{
		{"ErrNoParty", "/orders/search", "Missing parameter: seller or buyer. Send the caller's user id as one of them"},
		{"ErrSellerNotAnID", "/orders/search?seller=me", "Invalid seller: me. It must be a user id"},
		{"ErrBuyerNotAnID", "/orders/search?buyer=-2", "Invalid buyer: -2. It must be a user id"},
		{"ErrSort", s + "&sort=price_asc", "Invalid sort: price_asc. Valid values are: [date_asc, date_desc]"},
		{"ErrStatus", s + "&order.status=shipped", "Invalid order.status: shipped. Valid values are: [paid, confirmed, payment_in_process, payment_required, cancelled, invalid]"},
		{"ErrDate", s + "&order.date_created.from=yesterday", "Invalid order.date_created.from: yesterday. Dates are written as 2015-07-01T00:00:00.000-00:00"},
		{"ErrLimitNotANumber", s + "&limit=ten", "Invalid limit: ten. It must be a non-negative integer"},
		{"ErrNegativeLimit", s + "&limit=-1", "Invalid limit: -1. It must be a non-negative integer"},
		{"ErrLimitOverTheMaximum", s + "&limit=5000", "Invalid limit: 5000. The maximum is 1000"},
		{"ErrNegativeOffset", s + "&offset=-1", "Invalid offset: -1. It must be a non-negative integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			badRequest(t, ts.do("GET", c.path, w.seller.Token, nil), c.msg)
			op := strings.Replace(c.path, "/orders/search", "/operator/orders", 1)
			badRequest(t, ts.operator("GET", op, nil), c.msg)
		})
	}
}

func TestPayOrder_APaymentRequiredOrderTakesItsUnitsWhenPaid(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	ts := w.ts
	before, stock := w.stock()
	o := w.buy(2, "status", "payment_required")
	is.Equal(o.body["status"], "payment_required")
	is.Equal(o.body["payments"], []any{})
	is.Equal(o.body["paid_amount"], float64(0))
	is.Equal(o.body["date_closed"], nil)
	is.Equal(o.body["order_items"].([]any)[0].(map[string]any)["stock"], []any{})
	v, q := w.stock()
	is.Equal(v, before) // nothing is taken before the payment
	is.Equal(q, stock)
	sh := ts.do("GET", "/shipments/"+o.shipment, w.buyer.Token, nil)
	is.Equal(sh.Obj()["status"], "pending")
	is.Equal(sh.Obj()["substatus"], "waiting_for_payment")
	is.Equal(sh.Obj()["destination"].(map[string]any)["shipping_address"], nil) // the buyer's address is hidden until paid

	// Its shipment waits for the payment.
	badRequest(t, ts.operator("PUT", "/operator/shipments/"+o.shipment+"/status", map[string]any{"status": "ready_to_ship"}),
		fmt.Sprintf("Shipment %s waits for the payment of order %s", o.shipment, o.id))
	pay := "/operator/orders/" + o.id + "/payments"
	badRequest(t, ts.operator("POST", pay, map[string]any{"status": "rejected"}), "Invalid status: rejected. Valid values are: [approved]")
	badRequest(t, ts.operator("POST", pay, map[string]any{"status": 1}), "Invalid JSON: the field [status] must be of type string")
	badRequest(t, ts.operator("POST", pay, ""), "The request body is empty; a JSON object is expected")
	badRequest(t, ts.operator("POST", pay, "[1]"), "Malformed JSON body: a JSON object is expected")
	v, _ = w.stock()
	is.Equal(v, before) // refused payments take nothing

	res := ts.operator("POST", pay, map[string]any{"status": "approved"})
	is.Equal(res.Status, http.StatusOK)
	paid := res.Obj()
	is.Equal(paid["status"], "paid")
	is.Equal(paid["paid_amount"], paid["total_amount"])
	is.True(paid["date_closed"] != nil)
	is.Equal(len(paid["payments"].([]any)), 1)
	is.Equal(paid["order_items"].([]any)[0].(map[string]any)["stock"],
		[]any{map[string]any{"store_id": w.stores[1], "network_node_id": w.stores[1] + "01"}})
	after, q := w.stock()
	is.True(after > before)
	is.Equal(q, map[string]float64{w.stores[0]: 3, w.stores[1]: 3})
	sh = ts.do("GET", "/shipments/"+o.shipment, w.seller.Token, nil)
	is.Equal(sh.Obj()["status"], "ready_to_ship")
	dest := sh.Obj()["destination"].(map[string]any)
	addr, sent := dest["shipping_address"]
	is.True(sent)       // the key is sent
	is.Equal(addr, nil) // null: the engine keeps no buyer's address
	got := ts.do("GET", "/orders/"+o.id, w.buyer.Token, nil)
	is.Equal(got.Body, any(paid)) // the payment is stored

	badRequest(t, ts.operator("POST", pay, map[string]any{"status": "approved"}),
		fmt.Sprintf("Order %s is paid: only a payment_required order takes a payment", o.id))
}

func TestCancelOrder_UnitsReturnPaymentIsRefundedShipmentAndPackAreCancelled(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	ts := w.ts
	o := w.buy(5)
	taken, q := w.stock()
	is.Equal(q, map[string]float64{w.stores[0]: 3, w.stores[1]: 0})
	// A body is not read: the cancellation takes no input.
	res := ts.operator("POST", "/operator/orders/"+o.id+"/cancel", "not json")
	is.Equal(res.Status, http.StatusOK)
	c := res.Obj()
	is.Equal(c["status"], "cancelled")
	detail, _ := c["cancel_detail"].(map[string]any)
	is.True(detail != nil) // a cancelled order says why
	is.Equal(detail["requested_by"], "operator")
	p := c["payments"].([]any)[0].(map[string]any)
	is.Equal(p["status"], "refunded")
	is.Equal(p["transaction_amount_refunded"], p["transaction_amount"])
	v, q := w.stock()
	is.True(v > taken) // giving the units back moves the version
	is.Equal(q, map[string]float64{w.stores[0]: 3, w.stores[1]: 5})
	it := ts.itemOf(w.item)
	is.Equal(it["sold_quantity"], float64(0))
	is.Equal(it["available_quantity"], float64(8))

	sh := ts.do("GET", "/shipments/"+o.shipment, w.seller.Token, nil)
	is.Equal(sh.Obj()["status"], "cancelled")
	is.Equal(sh.Obj()["substatus"], "cancelled_manually")
	pack := ts.do("GET", "/packs/"+o.pack, w.buyer.Token, nil)
	is.Equal(pack.Status, http.StatusOK)
	is.Equal(pack.Obj()["status"], "cancelled")
	is.Equal(pack.Obj()["orders"], []any{map[string]any{"id": o.body["id"]}})

	badRequest(t, ts.operator("POST", "/operator/orders/"+o.id+"/cancel", nil), fmt.Sprintf("Order %s is already cancelled", o.id))
	v2, _ := w.stock()
	is.Equal(v2, v) // a refused cancellation returns nothing
}

func TestMoveShipment_AlongTheFlowWithHistoryAndTheOrdersTag(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	ts := w.ts
	o := w.buy(1)
	move := "/operator/shipments/" + o.shipment + "/status"
	for _, c := range []struct {
		name  string
		body  any
		msg   string
		cause []any
	}{
		{"ErrUnknownStatus", map[string]any{"status": "lost"}, "Invalid status: lost. Valid values are: [pending, handling, ready_to_ship, shipped, delivered, not_delivered, cancelled]", nil},
		{"ErrSubstatusOfAnotherStatus", map[string]any{"status": "shipped", "substatus": "printed"},
			"Invalid substatus: printed. Valid values for status shipped are: [out_for_delivery, soon_deliver, receiver_absent, bad_address, delayed, waiting_for_withdrawal, at_customs]", nil},
		{"ErrSkipsAStatus", map[string]any{"status": "delivered"}, "Shipment " + o.shipment + " cannot move from ready_to_ship to delivered",
			[]any{map[string]any{"code": "allowed_next_status", "message": "shipped"}, map[string]any{"code": "allowed_next_status", "message": "cancelled"}}},
		{"ErrStatusAsNumber", map[string]any{"status": 3}, "Invalid JSON: the field [status] must be of type string", nil},
		{"ErrNotJSON", "status=shipped", "Malformed JSON body: invalid character 's' looking for beginning of value", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, ts.operator("PUT", move, c.body), http.StatusBadRequest, "bad_request", c.msg, c.cause)
		})
	}
	res := ts.operator("PUT", move, map[string]any{"status": "shipped", "substatus": "out_for_delivery"})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["status"], "shipped")
	is.Equal(res.Obj()["substatus"], "out_for_delivery")
	read := ts.do("GET", "/shipments/"+o.shipment, w.buyer.Token, nil)
	is.Equal(read.Body, res.Body) // the move is stored
	is.NoErr(ts.clock.Advance(time.Hour))
	res = ts.operator("PUT", move, map[string]any{"status": "delivered"})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["substatus"], nil)

	hist := ts.do("GET", "/shipments/"+o.shipment+"/history", w.seller.Token, nil)
	is.Equal(hist.Status, http.StatusOK)
	var moves []string
	for _, h := range hist.Arr() {
		h := h.(map[string]any)
		sub, _ := h["substatus"].(string)
		moves = append(moves, h["status"].(string)+"/"+sub)
	}
	is.Equal(moves, []string{"pending/waiting_for_payment", "ready_to_ship/ready_to_print", "shipped/out_for_delivery", "delivered/"})
	last := hist.Arr()[3].(map[string]any)
	is.Equal(last["date"], res.Obj()["last_updated"]) // the move is dated at the engine's time

	order := ts.do("GET", "/orders/"+o.id, w.seller.Token, nil)
	is.True(slices.Contains(order.Obj()["tags"].([]any), any("delivered")))

	// delivered is final: the cause lists no next status.
	wantBody(t, ts.operator("PUT", move, map[string]any{"status": "shipped"}), http.StatusBadRequest, "bad_request",
		"Shipment "+o.shipment+" cannot move from delivered to shipped", nil)
	// A delivered order is no longer cancelled: it ends through a claim and a return.
	wantBody(t, ts.operator("POST", "/operator/orders/"+o.id+"/cancel", nil), http.StatusBadRequest, "bad_request",
		"Order "+o.id+" cannot be cancelled: its shipment "+o.shipment+" is delivered; a delivered sale ends through a claim and a return", nil)
	is.Equal(ts.do("GET", "/orders/"+o.id, w.seller.Token, nil).Obj()["status"], "paid")
}

func TestGetShipment_TheNewShapeWhateverXFormatNewSays(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	o := w.buy(1)
	path := "/shipments/" + o.shipment
	plain := w.ts.do("GET", path, w.seller.Token, nil)
	is.Equal(plain.Status, http.StatusOK)
	for _, v := range []string{"true", "false", "whatever"} {
		res := w.ts.do("GET", path, w.seller.Token, nil, "x-format-new", v)
		is.Equal(res.Status, http.StatusOK)
		is.Equal(res.Body, plain.Body) // the header changes nothing
	}
	sh := plain.Obj()
	is.Equal(sh["order_id"], o.body["id"])
	is.Equal(sh["logistic"], map[string]any{"mode": "me2", "type": "drop_off", "direction": "forward"})
	is.Equal(sh["source"], map[string]any{"site_id": "MLA", "market_place": "MELI"})
}

func TestShipmentStatuses_APublicReadOfTheFlow(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	anon := ts.do("GET", "/shipment_statuses", "", nil)
	is.Equal(anon.Status, http.StatusOK)
	withToken := ts.do("GET", "/shipment_statuses", u.Token, nil)
	is.Equal(withToken.Body, anon.Body) // the same for everyone
	wantBody(t, ts.do("GET", "/shipment_statuses", "not-a-token", nil), http.StatusUnauthorized, "unauthorized", "Invalid access token", nil)
	next := map[string]any{}
	var order []string
	for _, s := range anon.Arr() {
		s := s.(map[string]any)
		order = append(order, s["id"].(string))
		next[s["id"].(string)] = s["next_statuses"]
		is.True(len(s["substatuses"].([]any)) > 0) // every status has substatuses
	}
	is.Equal(order, []string{"pending", "handling", "ready_to_ship", "shipped", "delivered", "not_delivered", "cancelled"})
	is.Equal(next["pending"], []any{"handling", "ready_to_ship", "cancelled"})
	is.Equal(next["shipped"], []any{"delivered", "not_delivered"})
	for _, final := range []string{"delivered", "not_delivered", "cancelled"} {
		is.Equal(next[final], []any{}) // a final status goes nowhere
	}
}

func TestItemLifecycle_AnItemThatRunsOutIsPausedAndFoundAsPausedUntilUnitsReturn(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	ts := w.ts
	a := w.buy(5)
	w.buy(3)
	it := ts.itemOf(w.item)
	is.Equal(it["status"], "paused")
	is.Equal(it["sub_status"], []any{"out_of_stock"})
	is.Equal(it["available_quantity"], float64(0))
	is.Equal(it["sold_quantity"], float64(8))
	search := func(status string) []any {
		res := ts.do("GET", fmt.Sprintf("/users/%d/items/search?status=%s", w.seller.ID, status), w.seller.Token, nil)
		is.Equal(res.Status, http.StatusOK)
		return res.Obj()["results"].([]any)
	}
	is.Equal(search("paused"), []any{w.item})
	is.Equal(search("active"), []any{})
	// An item out of stock is not sold.
	badRequest(t, ts.operator("POST", "/operator/orders", map[string]any{"buyer_id": w.buyer.ID, "item_id": w.item, "quantity": 1}),
		"Item "+w.item+" is not active: its status is paused")

	if res := ts.operator("POST", "/operator/orders/"+a.id+"/cancel", nil); res.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", res.Status, res.Raw)
	}
	it = ts.itemOf(w.item)
	is.Equal(it["status"], "active")
	is.Equal(it["sub_status"], []any{})
	is.Equal(search("active"), []any{w.item})
}

func TestUpdateItem_TheDomainsRefusalsComeThroughAsTheyAre(t *testing.T) {
	w := newSaleWorld(t)
	ts := w.ts
	w.buy(1)
	plainSeller := ts.mustUser("MLA", "normal")
	plain := ts.mustPlainItem(plainSeller.Token, "Taza roja", 100, 2)
	closed := ts.mustPlainItem(plainSeller.Token, "Taza verde", 100, 2)
	if res := ts.do("PUT", "/items/"+closed, plainSeller.Token, map[string]any{"status": "closed"}); res.Status != http.StatusOK {
		t.Fatalf("close: %d %s", res.Status, res.Raw)
	}
	itemPath := "/items/" + w.item
	for _, c := range []struct {
		name, path, token string
		body              any
		status            int
		code, msg         string
		cause             []any
	}{
		{"ErrTitleAfterASale", itemPath, w.seller.Token, map[string]any{"title": "Otro título"}, 400, "bad_request",
			"The title of item " + w.item + " cannot change: the item has sales",
			[]any{map[string]any{"code": "item.title.not_modifiable", "message": "The title cannot be modified once the item has sales (sold_quantity > 0)"}}},
		{"ErrClosedItemActivated", "/items/" + closed, plainSeller.Token, map[string]any{"status": "active"}, 400, "bad_request",
			"Item " + closed + " is closed and cannot change status", nil},
		{"ErrAvailableQuantityOfAMultiOriginItem", itemPath, w.seller.Token, map[string]any{"available_quantity": 4}, 400, "bad_request",
			"The fields [available_quantity] are invalid for requested call",
			[]any{map[string]any{"code": "item.multi_origin", "message": "Item " + w.item + " has stock per store: write it with PUT /user-products/" + w.up + "/stock/type/seller_warehouse"}}},
		{"ErrNegativeAvailableQuantity", "/items/" + plain, plainSeller.Token, map[string]any{"available_quantity": -1}, 400, "bad_request",
			"Invalid available_quantity: -1. It must be between 0 and 1000000000", nil},
		{"ErrHugeAvailableQuantity", "/items/" + plain, plainSeller.Token, `{"available_quantity":1e30}`, 400, "bad_request",
			"Invalid JSON: the field [available_quantity] must be of type integer", nil},
		{"ErrStatus", "/items/" + plain, plainSeller.Token, map[string]any{"status": "deleted"}, 400, "bad_request",
			"Invalid status: deleted. Valid values are: [active, paused, closed]", nil},
		{"ErrAnotherSeller", itemPath, w.stranger.Token, map[string]any{"status": "paused"}, 403, "forbidden",
			"The caller is not the seller of item " + w.item, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, ts.do("PUT", c.path, c.token, c.body), c.status, c.code, c.msg, c.cause)
		})
	}
	if it := ts.itemOf(w.item); it["title"] != "Zapatillas Running Niño" || it["status"] != "active" {
		t.Errorf("the item changed: %v", it)
	}
	if it := ts.itemOf(plain); it["available_quantity"] != float64(2) {
		t.Errorf("the single-origin item changed: %v", it)
	}
	// A price change after sales is allowed, a title that does not change too.
	res := ts.do("PUT", itemPath, w.seller.Token, map[string]any{"price": 2000, "title": "Zapatillas Running Niño"})
	if res.Status != http.StatusOK || res.Obj()["price"] != float64(2000) {
		t.Errorf("price: %d %s", res.Status, res.Raw)
	}
}

func TestRelistItem_AClosedItemIsPublishedAgainOnceAsANewItem(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA", "normal")
	other := ts.mustUser("MLA", "normal")
	id := ts.mustPlainItem(seller.Token, "Taza roja", 100, 2)
	relist := "/items/" + id + "/relist"
	badRequest(t, ts.do("POST", relist, seller.Token, map[string]any{"quantity": 1}), "Item "+id+" is not closed: only a closed item can be relisted")
	if res := ts.do("PUT", "/items/"+id, seller.Token, map[string]any{"status": "closed"}); res.Status != http.StatusOK {
		t.Fatalf("close: %d %s", res.Status, res.Raw)
	}
	for _, c := range []struct {
		name, token string
		body        any
		status      int
		code, msg   string
	}{
		{"ErrNoToken", "", map[string]any{"quantity": 1}, 401, "unauthorized", msgNoToken},
		{"ErrAnotherSeller", other.Token, map[string]any{"quantity": 1}, 403, "forbidden", "The caller is not the seller of item " + id},
		{"ErrNoQuantity", seller.Token, map[string]any{"price": 150}, 400, "bad_request", "The fields [quantity] are required for requested call"},
		{"ErrStockLocationsOfAPlainSeller", seller.Token, map[string]any{"quantity": 1, "stock_locations": []any{map[string]any{"store_id": "1", "quantity": 1}}},
			400, "bad_request", "The fields [stock_locations] are invalid for requested call"},
		{"ErrNegativeQuantity", seller.Token, map[string]any{"quantity": -1}, 400, "bad_request", "Invalid quantity: -1. It must be between 0 and 1000000000"},
		{"ErrHugeQuantity", seller.Token, `{"quantity":99999999999999999999}`, 400, "bad_request", "Invalid JSON: the field [quantity] must be of type integer"},
		{"ErrQuantityAsString", seller.Token, map[string]any{"quantity": "one"}, 400, "bad_request", "Invalid JSON: the field [quantity] must be of type integer"},
		{"ErrEmptyBody", seller.Token, "", 400, "bad_request", "The request body is empty; a JSON object is expected"},
		{"ErrNull", seller.Token, "null", 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, ts.do("POST", relist, c.token, c.body), c.status, c.code, c.msg, nil)
		})
	}
	wantBody(t, ts.do("POST", "/items/MLA999/relist", seller.Token, map[string]any{"quantity": 1}), 404, "not_found", "Item with id MLA999 not found", nil)

	res := ts.do("POST", relist, seller.Token, map[string]any{"price": 150, "quantity": 3, "listing_type_id": "gold_pro"})
	is.Equal(res.Status, http.StatusCreated)
	n := res.Obj()
	is.True(n["id"] != id) // a new item
	is.Equal(n["parent_item_id"], id)
	is.Equal(n["title"], "Taza roja")
	is.Equal(n["price"], float64(150))
	is.Equal(n["listing_type_id"], "gold_pro")
	is.Equal(n["available_quantity"], float64(3))
	is.Equal(n["status"], "active")
	is.Equal(n["sold_quantity"], float64(0))
	is.True(n["user_product_id"] != ts.itemOf(id)["user_product_id"]) // its own user product
	is.Equal(ts.itemOf(n["id"].(string)), n)                          // the new item is stored

	badRequest(t, ts.do("POST", relist, seller.Token, map[string]any{"quantity": 1}), fmt.Sprintf("Item %s was already relisted as %s", id, n["id"]))
}

func TestRelistItem_AWarehouseSellerSendsStockLocations(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	id, _ := ts.mustMultiItem(seller.Token, stores[0], 2)
	if res := ts.do("PUT", "/items/"+id, seller.Token, map[string]any{"status": "closed"}); res.Status != http.StatusOK {
		t.Fatalf("close: %d %s", res.Status, res.Raw)
	}
	relist := "/items/" + id + "/relist"
	badRequest(t, ts.do("POST", relist, seller.Token, map[string]any{"quantity": 1}), "The fields [quantity] are invalid for requested call")
	res := ts.do("POST", relist, seller.Token, map[string]any{"stock_locations": []any{map[string]any{"store_id": stores[0], "quantity": 4}}})
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["parent_item_id"], id)
	is.Equal(res.Obj()["available_quantity"], float64(4))
}

// POST /items/multiwarehouse is served at the position of POST
// /items/{item_id}/relist; no other name is.
func TestPostItemName_OnlyMultiwarehouseIsARoute(t *testing.T) {
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	if res := ts.do("POST", "/items/multiwarehouse", seller.Token, itemBody(stores[0], 1)); res.Status != http.StatusCreated {
		t.Fatalf("multiwarehouse: %d %s", res.Status, res.Raw)
	}
	wantBody(t, ts.do("POST", "/items/MLA1", seller.Token, itemBody(stores[0], 1)), 404, "not_found", "Resource POST /items/MLA1 not found", nil)
	wantBody(t, ts.do("POST", "/items/multiwarehouse", "", itemBody(stores[0], 1)), 401, "unauthorized", msgNoToken, nil)
}

// The document holds the sales answers to their shape: an answer that
// lacks a field is reported (the check of every test's answers is not
// vacuous for these routes).
func TestOpenAPI_ASalesAnswerThatBreaksTheDocumentIsReported(t *testing.T) {
	w := newSaleWorld(t)
	o := w.buy(1)
	good := w.ts.do("GET", "/orders/"+o.id, w.seller.Token, nil)
	sh := w.ts.do("GET", "/shipments/"+o.shipment, w.seller.Token, nil)
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	without := func(body map[string]any, key string) []byte {
		out := map[string]any{}
		for k, v := range body {
			if k != key {
				out[k] = v
			}
		}
		b, _ := json.Marshal(out)
		return b
	}
	for _, c := range []struct {
		name, path string
		body       []byte
		wantOK     bool
	}{
		{"OK order", "/orders/" + o.id, good.Raw, true},
		{"ErrOrderWithoutPack", "/orders/" + o.id, without(good.Obj(), "pack_id"), false},
		{"OK shipment", "/shipments/" + o.shipment, sh.Raw, true},
		{"ErrShipmentWithoutOrigin", "/shipments/" + o.shipment, without(sh.Obj(), "origin"), false},
		{"ErrSearchWithoutAvailableFilters", "/orders/search", []byte(`{"query":"","display":"complete","paging":{"total":0,"offset":0,"limit":50},"results":[],"sort":{"id":"date_asc","name":"Date ascending"},"available_sorts":[],"filters":[]}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", c.path, nil)
			res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
				Body: io.NopCloser(bytes.NewReader(c.body))}
			findings := v.Response(req, res)
			if c.wantOK != (len(findings) == 0) {
				t.Errorf("findings %v, want ok=%v", findings, c.wantOK)
			}
		})
	}
}
