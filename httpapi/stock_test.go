package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/badger"
)

// itemBody is a valid multi-origin publication body over the given stock
// locations ({store_id, quantity} pairs).
func itemBody(locs ...any) map[string]any {
	b := map[string]any{
		"title": "Zapatillas Running Niño", "category_id": "MLA1055", "price": 1500.5,
		"listing_type_id": "gold_special", "currency_id": "ARS", "channels": []string{"marketplace"},
	}
	if locs != nil {
		var sl []map[string]any
		for i := 0; i+1 < len(locs); i += 2 {
			sl = append(sl, map[string]any{"store_id": locs[i], "quantity": locs[i+1]})
		}
		b["stock_locations"] = sl
	}
	return b
}

func with(b map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// mustMultiItem publishes a multi-origin item and returns its id and user
// product id.
func (ts *testServer) mustMultiItem(token string, locs ...any) (string, string) {
	ts.t.Helper()
	res := ts.do("POST", "/items/multiwarehouse", token, itemBody(locs...))
	if res.Status != http.StatusCreated {
		ts.t.Fatalf("publish: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["id"].(string), res.Obj()["user_product_id"].(string)
}

func TestPostItemsMultiwarehouse_CreatedWithIDUserProductAndStockLocations(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	res := ts.do("POST", "/items/multiwarehouse", seller.Token, itemBody(stores[0], 3, stores[1], 0))
	is.Equal(res.Status, http.StatusCreated) // Item created
	o := res.Obj()
	id := o["id"].(string)
	is.True(strings.HasPrefix(id, "MLA"))
	_, err := strconv.ParseUint(id[3:], 10, 64)
	is.NoErr(err) // the site id followed by digits
	is.Equal(o["site_id"], "MLA")
	is.Equal(o["seller_id"], float64(seller.ID))
	is.True(strings.HasPrefix(o["user_product_id"].(string), "MLAU"))
	is.Equal(o["base_price"], 1500.5)
	is.Equal(o["price"], 1500.5)
	is.Equal(o["title"], "Zapatillas Running Niño")
	is.Equal(o["category_id"], "MLA1055")
	is.Equal(o["listing_type_id"], "gold_special")
	is.Equal(o["currency_id"], "ARS")
	is.Equal(o["status"], "active")
	is.Equal(o["available_quantity"], float64(3))
	is.Equal(o["permalink"], "https://articulo.mercadolibre.com.ar/MLA-"+id[3:]+"-zapatillas-running-nino-_JM")
	is.Equal(o["stock_locations"], []any{
		map[string]any{"store_id": stores[0], "network_node_id": stores[0] + "01", "quantity": float64(3)},
		map[string]any{"store_id": stores[1], "network_node_id": stores[1] + "01", "quantity": float64(0)},
	})
	is.True(strings.Contains(string(res.Raw), `"price":1500.5`)) // the price is written as the exact number sent
}

func TestPostItemsMultiwarehouse_ErrorTable(t *testing.T) {
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	other, otherStores := ts.mustSeller(1)
	_ = other
	untagged := ts.mustStore(seller.ID)
	plain := ts.mustUser("MLA", "normal")
	cases := []struct {
		name   string
		token  string
		body   any
		status int
		msg    string
	}{
		{"StockLocationsAbsent", seller.Token, itemBody(), 400, "The fields [stock_locations] are required for requested call"},
		{"StockLocationsEmpty", seller.Token, with(itemBody(), "stock_locations", []any{}), 400, "The fields [stock_locations] are required for requested call"},
		{"StoreOfAnotherSeller", seller.Token, itemBody(otherStores[0], 1), 400, "Store does not belong to seller: " + otherStores[0]},
		{"UnknownStore", seller.Token, itemBody("31337", 1), 400, "Store not found: 31337"},
		{"AvailableQuantityFromTaggedSeller", seller.Token, with(itemBody(stores[0], 1), "available_quantity", 5), 400, "The fields [available_quantity] are invalid for requested call"},
		{"StoreNotAStockLocation", seller.Token, itemBody(untagged, 1), 400, "Store is not configured to be a stock location"},
		{"StoreListedTwice", seller.Token, itemBody(stores[0], 1, stores[0], 2), 400, "Store listed more than once: " + stores[0]},
		{"NegativeQuantity", seller.Token, itemBody(stores[0], -1), 400, "Invalid quantity for store " + stores[0] + ": -1. It must be between 0 and 1000000000"},
		{"FractionalQuantity", seller.Token, itemBody(stores[0], 1.5), 400, "Invalid JSON: the field [stock_locations.quantity] must be of type integer"},
		{"StoreIDNotAStringIsNamedAsSent", seller.Token, itemBody(1000001, 1), 400, "Invalid JSON: the field [stock_locations.store_id] must be of type string"},
		{"StockLocationWithoutQuantityIsRejected", seller.Token, with(itemBody(), "stock_locations", []any{map[string]any{"store_id": stores[0]}}), 400, "Quantity is required for store " + stores[0]},
		{"UntaggedSeller", plain.Token, itemBody(stores[0], 1), 400, "The fields [stock_locations] are invalid for requested call"},
		{"MissingTitle", seller.Token, with(itemBody(stores[0], 1), "title", nil), 400, "The fields [title] are required for requested call"},
		{"TitleTooLong", seller.Token, with(itemBody(stores[0], 1), "title", strings.Repeat("a", 61)), 400, "The field [title] must be at most 60 characters; it has 61"},
		{"MissingCategory", seller.Token, with(itemBody(stores[0], 1), "category_id", nil), 400, "The fields [category_id] are required for requested call"},
		{"MalformedCategory", seller.Token, with(itemBody(stores[0], 1), "category_id", "MLA-shoes"), 400, "Invalid category_id: MLA-shoes. A category id of site MLA is MLA followed by digits, such as MLA1055"},
		{"MissingPrice", seller.Token, with(itemBody(stores[0], 1), "price", nil), 400, "The fields [price] are required for requested call"},
		{"ZeroPrice", seller.Token, with(itemBody(stores[0], 1), "price", 0), 400, "Invalid price: 0. It must be greater than 0"},
		{"PriceNotANumber", seller.Token, with(itemBody(stores[0], 1), "price", "cheap"), 400, ""},
		{"UnknownListingType", seller.Token, with(itemBody(stores[0], 1), "listing_type_id", "diamond"), 400, "Invalid listing_type_id: diamond. Valid values are: [gold_pro, gold_premium, gold_special, gold, silver, bronze, free]"},
		{"ForeignCurrency", seller.Token, with(itemBody(stores[0], 1), "currency_id", "MXN"), 400, "Invalid currency_id: MXN. Valid values for site MLA are: [ARS, USD]"},
		{"UnknownCondition", seller.Token, with(itemBody(stores[0], 1), "condition", "broken"), 400, "Invalid condition: broken. Valid values are: [new, used, not_specified]"},
		{"MalformedJSON", seller.Token, `{"title": `, 400, ""},
		{"NoToken", "", itemBody(stores[0], 1), 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, ts.do("POST", "/items/multiwarehouse", c.token, c.body), c.status, c.msg)
		})
	}
	res := ts.do("GET", "/sites/MLA/search", seller.Token, nil)
	if res.Status != 200 || res.Obj()["paging"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("refused publications left items: %s", res.Raw)
	}
}

func TestPostItems_PlainPublicationForUntaggedSellersOnly(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	plain := ts.mustUser("MLA", "normal")
	res := ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 7, "currency_id", "USD"))
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["available_quantity"], float64(7))
	is.Equal(res.Obj()["currency_id"], "USD") // dollars are accepted on MLA
	_, has := res.Obj()["stock_locations"]
	is.True(!has)

	seller, stores := ts.mustSeller(1)
	wantError(t, ts.do("POST", "/items", seller.Token, with(itemBody(), "available_quantity", 7)), 400,
		"The fields [available_quantity] are invalid for requested call") // rule 2
	wantError(t, ts.do("POST", "/items", plain.Token, itemBody(stores[0], 1)), 400,
		"The fields [stock_locations] are invalid for requested call")
	wantError(t, ts.do("POST", "/items", plain.Token, itemBody()), 400,
		"The fields [available_quantity] are required for requested call")
}

func TestPostItems_TaggedSellerWithoutAvailableQuantityIsSentToMultiwarehouse(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		{itemBody(), "The fields [stock_locations] are required for requested call"}, // rule 2
		{itemBody(stores[0], 1), "The fields [stock_locations] are invalid for requested call"},
	} {
		res := ts.do("POST", "/items", seller.Token, c.body)
		wantError(t, res, 400, c.msg)
		causes := res.Obj()["cause"].([]any)
		is.Equal(len(causes), 1)
		is.True(strings.Contains(causes[0].(map[string]any)["message"].(string), "POST /items/multiwarehouse"))
	}
	is.Equal(ts.do("GET", "/sites/MLA/search", seller.Token, nil).Obj()["paging"].(map[string]any)["total"], float64(0))
}

func TestPublishAndPutItem_PriceOfTheWrongTypeGetsThePriceRuleMessage(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	plain := ts.mustUser("MLA")
	cases := []struct {
		price any
		msg   string
	}{
		{"abc", "Invalid price: abc. It must be a decimal number such as 1500 or 1500.50"},
		{true, "Invalid price: true. It must be a decimal number such as 1500 or 1500.50"},
		{map[string]any{"amount": 1}, "Invalid price: an object. It must be a decimal number such as 1500 or 1500.50"},
		{[]any{1}, "Invalid price: an array. It must be a decimal number such as 1500 or 1500.50"},
		{"-5", "Invalid price: -5. It must be greater than 0"},
	}
	res := ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 1))
	is.Equal(res.Status, http.StatusCreated)
	id := res.Obj()["id"].(string)
	for _, c := range cases {
		wantError(t, ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 1, "price", c.price)), 400, c.msg)
		wantError(t, ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"price": c.price}), 400, c.msg)
	}
	is.Equal(ts.do("GET", "/items/"+id, plain.Token, nil).Obj()["price"], 1500.5) // nothing changed
	wantError(t, ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"title": 5}), 400,
		"Invalid JSON: the field [title] must be of type string")
	wantError(t, ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 1, "price", nil)), 400,
		"The fields [price] are required for requested call")
	// A numeric string is the number it spells.
	res = ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 1, "price", "12.50"))
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["price"], 12.5)
}

func TestPutItem_PriceChangeMovesBasePrice(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	plain := ts.mustUser("MLA")
	id := ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 1)).Obj()["id"].(string)
	res := ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"price": 2000})
	is.Equal(res.Status, 200)
	is.Equal(res.Obj()["base_price"], float64(2000))
	is.Equal(ts.do("GET", "/items/"+id, plain.Token, nil).Obj()["base_price"], float64(2000))
	res = ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"status": "paused"})
	is.Equal(res.Obj()["base_price"], float64(2000)) // only a price change moves it
}

func TestGetItem_HasNoStockLocationsAndSumsTheUserProductStock(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	id, up := ts.mustMultiItem(seller.Token, stores[0], 2, stores[1], 5)
	buyer := ts.mustUser("MLA")
	res := ts.do("GET", "/items/"+id, buyer.Token, nil)
	is.Equal(res.Status, 200)
	_, has := res.Obj()["stock_locations"]
	is.True(!has) // rule 3
	is.Equal(res.Obj()["available_quantity"], float64(7))
	is.Equal(res.Obj()["user_product_id"], up)
	wantError(t, ts.do("GET", "/items/MLA1", buyer.Token, nil), 404, "Item with id MLA1 not found")
	anon := ts.do("GET", "/items/"+id, "", nil)
	is.Equal(anon.Status, 200)                  // a public read
	is.Equal(string(anon.Raw), string(res.Raw)) // the same item for anyone
	wantError(t, ts.do("GET", "/items/"+id, "APP_USR-nope", nil), 401, "Invalid access token")
}

func TestPutItem_OwnerChangesStatusAndPrice(t *testing.T) {
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	id, _ := ts.mustMultiItem(seller.Token, stores[0], 1)
	other := ts.mustUser("MLA")
	cases := []struct {
		name   string
		token  string
		body   any
		status int
		msg    string
		field  string
		want   any
	}{
		{"Pause", seller.Token, map[string]any{"status": "paused"}, 200, "", "status", "paused"},
		{"Price", seller.Token, map[string]any{"price": 99.9}, 200, "", "price", 99.9},
		{"Title", seller.Token, map[string]any{"title": "Zapatillas nuevas"}, 200, "", "title", "Zapatillas nuevas"},
		{"UnknownStatus", seller.Token, map[string]any{"status": "sold"}, 400, "Invalid status: sold. Valid values are: [active, paused, closed]", "", nil},
		{"NegativePrice", seller.Token, map[string]any{"price": -1}, 400, "Invalid price: -1. It must be greater than 0", "", nil},
		{"NothingToChange", seller.Token, map[string]any{}, 400, "Nothing to update: send at least one of the fields [status, price, title, available_quantity]", "", nil},
		{"NotTheSeller", other.Token, map[string]any{"status": "closed"}, 403, "The caller is not the seller of item " + id, "", nil},
		{"Close", seller.Token, map[string]any{"status": "closed"}, 200, "", "status", "closed"},
		{"ClosedStaysClosed", seller.Token, map[string]any{"status": "active"}, 400, "Item " + id + " is closed and cannot change status", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do("PUT", "/items/"+id, c.token, c.body)
			if c.status != 200 {
				wantError(t, res, c.status, c.msg)
				return
			}
			if res.Status != 200 || res.Obj()[c.field] != c.want {
				t.Fatalf("PUT = %d %s, want %s = %v", res.Status, res.Raw, c.field, c.want)
			}
			if got := ts.do("GET", "/items/"+id, c.token, nil).Obj()[c.field]; got != c.want {
				t.Fatalf("GET after PUT: %s = %v, want %v", c.field, got, c.want)
			}
		})
	}
}

func TestGetStock_ReturnsLocationsAndXVersion(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 2, stores[1], 5)
	res := ts.do("GET", "/user-products/"+up+"/stock", seller.Token, nil)
	is.Equal(res.Status, 200)
	is.Equal(res.Header.Get("x-version"), "1")
	is.Equal(res.Body, map[string]any{
		"id": up, "user_id": float64(seller.ID),
		"locations": []any{
			map[string]any{"type": "seller_warehouse", "store_id": stores[0], "network_node_id": stores[0] + "01", "quantity": float64(2)},
			map[string]any{"type": "seller_warehouse", "store_id": stores[1], "network_node_id": stores[1] + "01", "quantity": float64(5)},
		},
	})
	other := ts.mustUser("MLA")
	wantError(t, ts.do("GET", "/user-products/"+up+"/stock", other.Token, nil), 403, "The caller is not the owner of user product "+up)
	wantError(t, ts.do("GET", "/user-products/MLAU1/stock", seller.Token, nil), 404, "User product not found: MLAU1")
	wantError(t, ts.do("GET", "/user-products/"+up+"/stock", "", nil), 401, "")
}

func TestPutStock_ErrorTable(t *testing.T) {
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	_, otherStores := ts.mustSeller(1)
	untagged := ts.mustStore(seller.ID)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 2)
	body := func(locs ...any) map[string]any {
		var l []map[string]any
		for i := 0; i+1 < len(locs); i += 2 {
			l = append(l, map[string]any{"store_id": locs[i], "quantity": locs[i+1]})
		}
		return map[string]any{"locations": l}
	}
	path := "/user-products/" + up + "/stock/type/seller_warehouse"
	other := ts.mustUser("MLA")
	cases := []struct {
		name    string
		token   string
		path    string
		version string
		body    any
		status  int
		msg     string
	}{
		{"MissingVersionIsRejectedWith400", seller.Token, path, "", body(stores[0], 1), 400, "Missing X-Version header"},
		{"NonIntegerVersionIsRejectedWith400", seller.Token, path, "one", body(stores[0], 1), 400, "Invalid X-Version header: one. It must be an integer"},
		{"StaleVersionIsRejectedWith409", seller.Token, path, "0", body(stores[0], 1), 409, "Version mismatch"},
		{"FutureVersionIsRejectedWith409", seller.Token, path, "2", body(stores[0], 1), 409, "Version mismatch"},
		{"StoreOfAnotherSellerIsRejected", seller.Token, path, "1", body(otherStores[0], 1), 400, "Store does not belong to seller: " + otherStores[0]},
		{"UnknownStoreIsRejected", seller.Token, path, "1", body("777", 1), 400, "Store not found: 777"},
		{"StoreNotAStockLocationIsRejected", seller.Token, path, "1", body(untagged, 1), 400, "Store is not configured to be a stock location"},
		{"NoStoreIsRejected", seller.Token, path, "1", body(), 400, "Store cannot be null or empty"},
		{"EmptyStoreIsRejected", seller.Token, path, "1", body("", 1), 400, "Store cannot be null or empty"},
		{"EmptyBodySendsNoStore", seller.Token, path, "1", "", 400, "Store cannot be null or empty"},
		{"EmptyBodyWithoutVersionIsMissingVersion", seller.Token, path, "", "", 400, "Missing X-Version header"},
		{"NullLocationsSendNoStore", seller.Token, path, "1", map[string]any{"locations": nil}, 400, "Store cannot be null or empty"},
		{"NegativeQuantityIsRejected", seller.Token, path, "1", body(stores[0], -2), 400, "Invalid quantity for store " + stores[0] + ": -2. It must be between 0 and 1000000000"},
		{"MissingQuantityIsRejected", seller.Token, path, "1", map[string]any{"locations": []any{map[string]any{"store_id": stores[0]}}}, 400, "Quantity is required for store " + stores[0]},
		{"NullQuantityIsRejected", seller.Token, path, "1", map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": nil}}}, 400, "Quantity is required for store " + stores[0]},
		{"StringQuantityIsRejected", seller.Token, path, "1", map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": "3"}}}, 400, "Invalid JSON: the field [locations.quantity] must be of type integer"},
		{"MissingQuantityWithoutVersionIsMissingVersion", seller.Token, path, "", map[string]any{"locations": []any{map[string]any{"store_id": stores[0]}}}, 400, "Missing X-Version header"},
		{"NotTheOwnerIsForbidden", other.Token, path, "1", body(stores[0], 1), 403, "The caller is not the owner of user product " + up},
		{"UnknownUserProductIsNotFound", seller.Token, "/user-products/MLAU5/stock/type/seller_warehouse", "1", body(stores[0], 1), 404, "User product not found: MLAU5"},
		{"OtherStockTypeIsNotARoute", seller.Token, "/user-products/" + up + "/stock/type/selling_address", "1", body(stores[0], 1), 404, ""},
		{"MalformedBody", seller.Token, path, "1", "[1,2", 400, ""},
		{"NoToken", "", path, "1", body(stores[0], 1), 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h []string
			if c.version != "" {
				h = []string{"x-version", c.version}
			}
			wantError(t, ts.do("PUT", c.path, c.token, c.body, h...), c.status, c.msg)
		})
	}
	res := ts.do("GET", "/user-products/"+up+"/stock", seller.Token, nil)
	if res.Header.Get("x-version") != "1" || res.Obj()["locations"].([]any)[0].(map[string]any)["quantity"] != float64(2) {
		t.Fatalf("refused PUTs changed the stock: %v %s", res.Header, res.Raw)
	}
}

func TestPutStock_AnswersNewVersionAndAllLocations(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(3)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 0, stores[1], 4)
	res := ts.do("PUT", "/user-products/"+up+"/stock/type/seller_warehouse", seller.Token, map[string]any{
		"locations": []any{
			map[string]any{"store_id": stores[0], "network_node_id": "NODE-X", "quantity": 8},
			map[string]any{"store_id": stores[2], "quantity": 1},
		}}, "x-version", "1")
	is.Equal(res.Status, 200)
	is.Equal(res.Header.Get("x-version"), "2")
	is.Equal(res.Body, map[string]any{
		"id": up, "user_id": float64(seller.ID), "product_release_date": nil,
		"locations": []any{
			map[string]any{"type": "seller_warehouse", "store_id": stores[0], "network_node_id": "NODE-X", "quantity": float64(8)},
			map[string]any{"type": "seller_warehouse", "store_id": stores[1], "network_node_id": stores[1] + "01", "quantity": float64(4)},
			map[string]any{"type": "seller_warehouse", "store_id": stores[2], "network_node_id": stores[2] + "01", "quantity": float64(1)},
		},
	})
	read := ts.do("GET", "/user-products/"+up+"/stock", seller.Token, nil)
	is.Equal(read.Header.Get("x-version"), "2")
	wantError(t, ts.do("PUT", "/user-products/"+up+"/stock/type/seller_warehouse", seller.Token,
		map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": 1}}}, "x-version", "1"), 409, "Version mismatch")
}

// benchServer is the API over a chosen store, with a seller, a user product
// and its current stock.
type benchServer struct {
	h     http.Handler
	token string
	up    string
	store string
}

func newBenchServer(b *testing.B, onBadger bool) benchServer {
	b.Helper()
	var m *marketplace.Marketplace
	var err error
	clk := clock.NewManual(testStart)
	if onBadger {
		st, oerr := badger.Open(b.TempDir(), badger.Options{})
		if oerr != nil {
			b.Fatal(oerr)
		}
		b.Cleanup(func() { _ = st.Close() })
		m, err = marketplace.New(st, marketplace.Options{Clock: clk})
	} else {
		ts := newTestServer(b)
		m = ts.m
	}
	if err != nil {
		b.Fatal(err)
	}
	ts := &testServer{t: b, m: m, clock: clk, handler: httpapi.New(m, checked(b, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk}))}
	seller, stores := ts.mustSeller(1)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 5)
	return benchServer{h: ts.handler, token: seller.Token, up: up, store: stores[0]}
}

// bare is a bare httprouter handler answering body with the same headers
// (x-version only when given).
func bare(method, path string, body []byte, version string) http.Handler {
	r := httprouter.New()
	r.Handle(method, path, func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if version != "" {
			w.Header().Set("x-version", version)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	return r
}

// serveLoop serves newReq() b.N times and reports requests per second.
func serveLoop(b *testing.B, h http.Handler, newReq func(i int) *http.Request) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newReq(i))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchmarkGetStock(b *testing.B, onBadger bool) {
	bs := newBenchServer(b, onBadger)
	path := "/user-products/" + bs.up + "/stock"
	get := func(int) *http.Request {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+bs.token)
		return r
	}
	rec := httptest.NewRecorder()
	bs.h.ServeHTTP(rec, get(0))
	baseline := bare("GET", "/user-products/:user_product_id/stock", rec.Body.Bytes(), rec.Header().Get("x-version"))
	b.Run("bare", func(b *testing.B) { serveLoop(b, baseline, get) })
	b.Run("api", func(b *testing.B) { serveLoop(b, bs.h, get) })
}

func benchmarkPutStock(b *testing.B, onBadger bool) {
	bs := newBenchServer(b, onBadger)
	path := "/user-products/" + bs.up + "/stock/type/seller_warehouse"
	body := fmt.Sprintf(`{"locations":[{"store_id":%q,"quantity":7}]}`, bs.store)
	// The API's version moves with every accepted PUT; the bare handler's
	// requests carry the same header without moving it.
	version := 1
	put := func(bump bool) func(int) *http.Request {
		return func(int) *http.Request {
			r := httptest.NewRequest("PUT", path, strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+bs.token)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("x-version", strconv.Itoa(version))
			if bump {
				version++
			}
			return r
		}
	}
	rec := httptest.NewRecorder()
	bs.h.ServeHTTP(rec, put(true)(0))
	baseline := bare("PUT", "/user-products/:user_product_id/stock/type/seller_warehouse", rec.Body.Bytes(), rec.Header().Get("x-version"))
	b.Run("bare", func(b *testing.B) { serveLoop(b, baseline, put(false)) })
	b.Run("api", func(b *testing.B) { serveLoop(b, bs.h, put(true)) })
}

// The stock benchmarks run the whole HTTP stack (routing, token check,
// domain, storage, JSON) beside a bare httprouter handler writing the same
// bytes, in the same run; compare their req/s.
func BenchmarkGetStock_Memory(b *testing.B) { benchmarkGetStock(b, false) }
func BenchmarkGetStock_Badger(b *testing.B) { benchmarkGetStock(b, true) }
func BenchmarkPutStock_Memory(b *testing.B) { benchmarkPutStock(b, false) }
func BenchmarkPutStock_Badger(b *testing.B) { benchmarkPutStock(b, true) }

func TestGetStock_SingleOriginUserProductHasNoLocations(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	plain := ts.mustUser("MLA", "normal")
	res := ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 3))
	is.Equal(res.Status, http.StatusCreated)
	up := res.Obj()["user_product_id"].(string)
	read := ts.do("GET", "/user-products/"+up+"/stock", plain.Token, nil)
	is.Equal(read.Status, 200)
	is.Equal(read.Header.Get("x-version"), "1")
	is.Equal(read.Body, map[string]any{"id": up, "user_id": float64(plain.ID), "locations": []any{}})
	wantError(t, ts.do("PUT", "/user-products/"+up+"/stock/type/seller_warehouse", plain.Token,
		map[string]any{"locations": []any{map[string]any{"store_id": "1", "quantity": 1}}}, "x-version", "1"),
		400, "User product "+up+" has no seller_warehouse stock: it was published with available_quantity")
}

// TestStockRoutes_NoInputGivesA500 sends arbitrary bodies, headers and ids
// to the item and stock routes: every answer is a success or a 4xx in the
// error body shape, never a 500.
func TestStockRoutes_NoInputGivesA500(t *testing.T) {
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 1)
	anyValue := rapid.OneOf(
		rapid.Just[any](nil), rapid.Map(rapid.String(), func(s string) any { return s }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }), rapid.Map(rapid.Float64(), func(f float64) any { return f }),
		rapid.Map(rapid.SampledFrom([]string{stores[0], stores[1], "1", ""}), func(s string) any { return s }),
		rapid.Just[any]([]any{}), rapid.Just[any](map[string]any{}),
	)
	fields := []string{"title", "category_id", "price", "listing_type_id", "currency_id", "condition", "channels",
		"available_quantity", "user_product_id", "thumbnail", "status", "catalog_product_id", "catalog_listing"}
	rapid.Check(t, func(rt *rapid.T) {
		body := map[string]any{}
		for _, f := range rapid.SliceOfDistinct(rapid.SampledFrom(fields), rapid.ID[string]).Draw(rt, "fields") {
			body[f] = anyValue.Draw(rt, f)
		}
		var locs []any
		for i := rapid.IntRange(0, 3).Draw(rt, "locations"); i > 0; i-- {
			locs = append(locs, map[string]any{"store_id": anyValue.Draw(rt, "store"), "quantity": anyValue.Draw(rt, "quantity"),
				"network_node_id": anyValue.Draw(rt, "node")})
		}
		body["stock_locations"] = locs
		body["locations"] = locs
		version := rapid.SampledFrom([]string{"", "1", "2", "-1", "x", "99999999999999999999"}).Draw(rt, "version")
		upID := rapid.SampledFrom([]string{up, "MLAU1", "%00", "x"}).Draw(rt, "up")
		for _, req := range []struct{ method, path string }{
			{"POST", "/items"}, {"POST", "/items/multiwarehouse"}, {"PUT", "/items/MLA1400000001"},
			{"PUT", "/user-products/" + upID + "/stock/type/seller_warehouse"}, {"GET", "/user-products/" + upID + "/stock"},
		} {
			var h []string
			if version != "" {
				h = []string{"x-version", version}
			}
			res := ts.do(req.method, req.path, seller.Token, body, h...)
			if res.Status >= 500 {
				rt.Fatalf("%s %s with %v: %d %s", req.method, req.path, body, res.Status, res.Raw)
			}
			if o := res.Obj(); res.Status >= 400 && (o["status"] != float64(res.Status) || o["message"] == nil || o["cause"] == nil) {
				rt.Fatalf("%s %s: error body out of shape: %s", req.method, req.path, res.Raw)
			}
		}
	})
}

func TestPutItem_AvailableQuantityReplacesSingleOriginStockOnly(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	plain := ts.mustUser("MLA")
	res := ts.do("POST", "/items", plain.Token, with(itemBody(), "available_quantity", 4))
	id, up := res.Obj()["id"].(string), res.Obj()["user_product_id"].(string)
	res = ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"available_quantity": 9})
	is.Equal(res.Status, 200)
	is.Equal(res.Obj()["available_quantity"], float64(9))
	is.Equal(ts.do("GET", "/items/"+id, plain.Token, nil).Obj()["available_quantity"], float64(9))
	is.Equal(ts.do("GET", "/user-products/"+up+"/stock", plain.Token, nil).Header.Get("x-version"), "2") // a stock write
	found := ts.do("GET", "/sites/MLA/search?q=zapatillas", plain.Token, nil).Obj()["results"].([]any)
	is.Equal(found[0].(map[string]any)["available_quantity"], float64(9))
	wantError(t, ts.do("PUT", "/items/"+id, plain.Token, map[string]any{"available_quantity": -1}), 400,
		"Invalid available_quantity: -1. It must be between 0 and 1000000000")

	seller, stores := ts.mustSeller(1)
	multi, _ := ts.mustMultiItem(seller.Token, stores[0], 3)
	res = ts.do("PUT", "/items/"+multi, seller.Token, map[string]any{"available_quantity": 9, "price": 10})
	wantError(t, res, 400, "The fields [available_quantity] are invalid for requested call") // rule 2: stock per store
	is.Equal(len(res.Obj()["cause"].([]any)), 1)
	got := ts.do("GET", "/items/"+multi, seller.Token, nil).Obj()
	is.Equal(got["available_quantity"], float64(3))
	is.Equal(got["price"], 1500.5) // the refused PUT changed nothing
}

func TestPostItemsMultiwarehouse_CatalogItemsAreAcceptedAndEchoed(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	res := ts.do("POST", "/items/multiwarehouse", seller.Token,
		with(itemBody(stores[0], 2), "catalog_product_id", "MLA27172677", "catalog_listing", true)) // rule 1
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["catalog_product_id"], "MLA27172677")
	is.Equal(res.Obj()["catalog_listing"], true)
	got := ts.do("GET", "/items/"+res.Obj()["id"].(string), seller.Token, nil).Obj()
	is.Equal(got["catalog_product_id"], "MLA27172677")
	is.Equal(got["catalog_listing"], true)

	traditional := ts.do("POST", "/items/multiwarehouse", seller.Token, itemBody(stores[0], 2)).Obj()
	is.Equal(traditional["catalog_product_id"], nil) // null, as the public API writes it
	_, has := traditional["catalog_product_id"]
	is.True(has)
	is.Equal(traditional["catalog_listing"], false)

	cases := []struct {
		name string
		kv   []any
		msg  string
	}{
		{"CatalogListingWithoutProduct", []any{"catalog_listing", true}, "The fields [catalog_product_id] are required for requested call"},
		{"UnknownProduct", []any{"catalog_product_id", "MLA1"}, "Invalid catalog_product_id: MLA1. It must be a catalog product of site MLA"},
		{"ProductOfAnotherSite", []any{"catalog_product_id", "MLB19615317"}, "Invalid catalog_product_id: MLB19615317. It must be a catalog product of site MLA"},
		{"InactiveProduct", []any{"catalog_product_id", "MLA27172680"}, "Invalid catalog_product_id: MLA27172680. The catalog product is inactive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, ts.do("POST", "/items/multiwarehouse", seller.Token, with(itemBody(stores[0], 2), c.kv...)), 400, c.msg)
		})
	}
}
