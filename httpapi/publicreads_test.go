package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
)

// publicPaths are the reads the public API serves without a token, one per
// route, over a world with an item and a question.
func publicPaths(w *qWorld, question int64) []string {
	return []string{
		"/sites/MLA/search?q=guitar",
		"/items/" + w.item,
		"/items?ids=" + w.item,
		fmt.Sprintf("/questions/%d?api_version=4", question),
		"/questions/search?item=" + w.item + "&api_version=4",
		"/sites/MLA/listing_prices?price=1000",
		"/sites/MLA/listing_prices/gold_special?price=1000",
		"/sites",
		"/sites/MLA",
		"/sites/MLA/categories",
		"/categories/MLA1055",
		"/sites/MLA/domains",
		"/catalog_domains/MLA-CELLPHONES/products",
		"/products/MLA27172677",
		"/classified_locations/countries",
		"/classified_locations/countries/AR",
		"/classified_locations/states/AR-C",
		"/classified_locations/cities/TUxBQ0lUQ1BhbGVybW8",
		"/currencies",
		"/currencies/ARS",
		"/currency_conversions/search?from=USD&to=ARS",
		"/countries/AR/zip_codes/1425",
		"/country/AR/zip_codes/search_between?zip_code_from=1000&zip_code_to=2000",
		fmt.Sprintf("/users/%d", w.seller.ID),
		fmt.Sprintf("/users?ids=%d", w.seller.ID),
	}
}

func TestPublicReads_AnswerWithoutATokenAsToAnotherUserAndABadTokenIs401(t *testing.T) {
	w := newQWorld(t)
	q := w.mustAsk(w.buyer, w.item, "¿Tiene garantía?")
	for _, path := range publicPaths(w, q) {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			anon := w.do("GET", path, "", nil)
			is.Equal(anon.Status, http.StatusOK) // no token needed
			// A caller who is not the owner sees the same answer.
			other := w.do("GET", path, w.other.Token, nil)
			is.Equal(other.Status, http.StatusOK)
			is.Equal(withoutCaller(anon), withoutCaller(other))
			// A token that is sent must be valid, in the header or the query.
			wantError(t, w.do("GET", path, "APP_USR-not-a-token", nil), http.StatusUnauthorized, "Invalid access token")
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			wantError(t, w.do("GET", path+sep+"access_token=bad", "", nil), http.StatusUnauthorized, "Invalid access token")
			wantError(t, w.do("GET", path, "", nil, "Authorization", "Basic abc"), http.StatusUnauthorized, "Invalid access token")
		})
	}
}

// withoutCaller is the answer without the caller echoed in the filters of
// a question search, which is all that tells two readers' answers apart.
func withoutCaller(res response) string {
	if f, ok := res.Obj()["filters"].(map[string]any); ok {
		delete(f, "caller")
	}
	b, _ := json.Marshal(res.Body)
	return string(b)
}

func TestPublicReads_RevokedTokenIs401EvenOnAPublicRead(t *testing.T) {
	w := newQWorld(t)
	res := w.do("POST", "/operator/tokens/revoke", testOperatorToken, map[string]any{"access_token": w.other.Token})
	is.New(t).Equal(res.Status, http.StatusOK)
	wantError(t, w.do("GET", "/currencies", w.other.Token, nil), http.StatusUnauthorized, "Invalid access token")
}

func TestPublicReads_AnonymousCallerSeesTheUsersPublicSubsetAndTheOwnerTheWholeRecord(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	path := fmt.Sprintf("/users/%d", w.seller.ID)
	anon := w.do("GET", path, "", nil).Obj()
	_, has := anon["first_name"]
	is.True(!has) // personal data is the owner's
	own := w.do("GET", path, w.seller.Token, nil).Obj()
	is.Equal(own["first_name"], "Test")
	many := w.do("GET", fmt.Sprintf("/users?ids=%d", w.seller.ID), w.seller.Token, nil).Arr()
	is.Equal(many[0].(map[string]any)["body"].(map[string]any)["first_name"], "Test") // the owner in a multiget too
	wantError(t, w.do("GET", "/users/me", "", nil), http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
}

func TestPublicReads_WritesAndPrivateReadsStillNeedAToken(t *testing.T) {
	w := newQWorld(t)
	for _, c := range []struct{ method, path string }{
		{"POST", "/questions"},
		{"GET", fmt.Sprintf("/questions/search?seller_id=%d", w.seller.ID)},
		{"GET", fmt.Sprintf("/users/%d/items/search", w.seller.ID)},
		{"GET", fmt.Sprintf("/users/%d/stores/search", w.seller.ID)},
		{"PUT", "/items/" + w.item},
	} {
		wantError(t, w.do(c.method, c.path, "", nil), http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
	}
}

func TestGetSites_ListsEverySiteByIDWithItsCurrency(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("GET", "/sites", "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(len(res.Arr()), 9)
	is.True(strings.Contains(string(res.Raw), `{"default_currency_id":"ARS","id":"MLA","name":"Argentina"}`))
	first := res.Arr()[0].(map[string]any)
	is.Equal(first["id"], "MCO") // by id
}

func TestGetSite_ShowsCurrenciesAndRootCategories(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("GET", "/sites/MLU", "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), `{"id":"MLU","name":"Uruguay","country_id":"UY","default_currency_id":"UYU",`+
		`"currencies":[{"id":"UYU","symbol":"$"},{"id":"USD","symbol":"U$S"}],`+
		`"categories":[{"id":"MLU1051","name":"Celulares y Teléfonos"},{"id":"MLU1648","name":"Informática"}]}`)
	wantError(t, ts.do("GET", "/sites/XXX", "", nil), http.StatusNotFound, "Site not found: XXX")
	is.Equal(ts.do("GET", "/sites/XXX", "", nil).Obj()["error"], "not_found")
}

func TestGetSiteCategories_RootsByNameAndUnknownSiteIs404(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("GET", "/sites/MLB/categories", "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), `[{"id":"MLB1403","name":"Alimentos e Bebidas"},{"id":"MLB1051","name":"Celulares e Telefones"},`+
		`{"id":"MLB1000","name":"Eletrônicos, Áudio e Vídeo"},{"id":"MLB1144","name":"Games"},{"id":"MLB1648","name":"Informática"}]`)
	wantError(t, ts.do("GET", "/sites/XXX/categories", "", nil), http.StatusNotFound, "Site not found: XXX")
}

func TestGetCategory_PathFromRootAndChildrenAndUnknownIs404(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("GET", "/categories/MLA1051", "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), `{"id":"MLA1051","name":"Celulares y Teléfonos","picture":null,"permalink":null,`+
		`"path_from_root":[{"id":"MLA1051","name":"Celulares y Teléfonos"}],`+
		`"children_categories":[{"id":"MLA3813","name":"Accesorios para Celulares"},{"id":"MLA1055","name":"Celulares y Smartphones"}],`+
		`"attribute_types":"attributes"}`)
	leaf := ts.do("GET", "/categories/MLA1055", "", nil).Obj()
	is.Equal(len(leaf["path_from_root"].([]any)), 2)
	is.Equal(leaf["children_categories"], []any{})
	for _, id := range []string{"MLA0", "nope"} {
		res := ts.do("GET", "/categories/"+id, "", nil)
		wantError(t, res, http.StatusNotFound, "Category not found: "+id)
		is.Equal(res.Obj()["error"], "not_found")
	}
}

func TestImportedCategory_IsServedWithItsParent(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("PUT", "/operator/reference", testOperatorToken, map[string]any{"records": []any{
		map[string]any{"kind": "category", "data": map[string]any{"id": "MLA999001", "name": "Fundas", "parent_id": "MLA3813"}},
	}})
	is.Equal(res.Status, http.StatusOK)
	c := ts.do("GET", "/categories/MLA999001", "", nil).Obj()
	is.Equal(len(c["path_from_root"].([]any)), 3) // Celulares y Teléfonos > Accesorios > Fundas
	bad := ts.do("PUT", "/operator/reference", testOperatorToken, map[string]any{"records": []any{
		map[string]any{"kind": "category", "data": map[string]any{"id": "MLA999002", "name": "x", "parent_id": "MLA42"}},
	}})
	wantError(t, bad, http.StatusBadRequest, "Record 0 (category): The fields [parent_id] are invalid for requested call: category MLA42 is not known (list a parent before its children)")
}

func TestItemsMultiget_CodeAndBodyPerIDInOrder(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	item := w.do("GET", "/items/"+w.item, "", nil)
	res := w.do("GET", "/items?ids="+w.item+",MLA1", "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), `[{"code":200,"body":`+strings.TrimSpace(string(item.Raw))+`},`+
		`{"code":404,"body":{"message":"Item with id MLA1 not found","error":"not_found","status":404,"cause":[]}}]`)
	spaced := w.do("GET", "/items?ids=,"+w.item+",%20", "", nil)
	is.Equal(len(spaced.Arr()), 1) // blanks between commas are no ids
}

func TestItemsMultiget_Errors(t *testing.T) {
	w := newQWorld(t)
	ids := make([]string, 21)
	for i := range ids {
		ids[i] = w.item
	}
	for _, c := range []struct {
		name, path string
		status     int
		message    string
	}{
		{"NoIDs", "/items", 400, "The fields [ids] are required for requested call"},
		{"EmptyIDs", "/items?ids=,,", 400, "The fields [ids] are required for requested call"},
		{"MoreThanTwenty", "/items?ids=" + strings.Join(ids, ","), 400, "Too many ids: 21. At most 20 ids can be asked for at once"},
		{"UsersMoreThanTwenty", "/users?ids=" + strings.Repeat("1,", 20) + "1", 400, "Too many ids: 21. At most 20 ids can be asked for at once"},
		{"UsersNoIDs", "/users", 400, "The fields [ids] are required for requested call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := w.do("GET", c.path, "", nil)
			wantError(t, res, c.status, c.message)
			is.New(t).Equal(res.Obj()["error"], "bad_request")
		})
	}
	is.New(t).Equal(len(w.do("GET", "/items?ids="+strings.Join(ids[:20], ","), "", nil).Arr()), 20) // twenty is allowed
}

func TestUsersMultiget_CodeAndBodyPerIDInOrder(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	one := w.do("GET", fmt.Sprintf("/users/%d", w.buyer.ID), "", nil)
	res := w.do("GET", fmt.Sprintf("/users?ids=999,%d,abc", w.buyer.ID), "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), `[{"code":404,"body":{"message":"User not found: 999","error":"not_found","status":404,"cause":[]}},`+
		`{"code":200,"body":`+strings.TrimSpace(string(one.Raw))+`},`+
		`{"code":404,"body":{"message":"User not found: abc","error":"not_found","status":404,"cause":[]}}]`)
}

func TestSellerItemsSearch_TheSellersItemIDsPagedAndFiltered(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	second := w.mustItem(w.seller.ID)
	third := w.mustItem(w.seller.ID)
	w.mustItem(w.other.ID)
	res := w.do("PUT", "/items/"+second, w.seller.Token, map[string]any{"status": "paused"})
	is.Equal(res.Status, http.StatusOK)

	path := fmt.Sprintf("/users/%d/items/search", w.seller.ID)
	res = w.do("GET", path, w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), fmt.Sprintf(`{"seller_id":"%d","query":null,"paging":{"total":3,"offset":0,"limit":50},`+
		`"results":["%s","%s","%s"],"orders":[{"id":"start_time_asc","name":"Order by start time ascending"}],"available_orders":%s}`,
		w.seller.ID, w.item, second, third, sellerAvailableOrders))

	page := w.do("GET", path+"?limit=1&offset=1", w.seller.Token, nil).Obj()
	is.Equal(page["results"], []any{second})
	is.Equal(page["paging"], map[string]any{"total": float64(3), "offset": float64(1), "limit": float64(1)})

	active := w.do("GET", path+"?status=active", w.seller.Token, nil).Obj()
	is.Equal(active["results"], []any{w.item, third})
	paused := w.do("GET", "/users/me/items/search?status=paused", w.seller.Token, nil).Obj()
	is.Equal(paused["results"], []any{second}) // "me" is the token's user
	sku := w.do("GET", path+"?sku=ABC-1", w.seller.Token, nil).Obj()
	is.Equal(sku["results"], []any{}) // items carry no SKU
}

// sellerAvailableOrders is the available_orders of every seller item
// search: the public API's list, in its order and words, without the
// orders items here have no data for (stop time, total sold quantity,
// inventory id).
const sellerAvailableOrders = `[{"id":"start_time_asc","name":"Order by start time ascending"},` +
	`{"id":"start_time_desc","name":"Order by start time descending"},` +
	`{"id":"available_quantity_asc","name":"Order by available quantity ascending"},` +
	`{"id":"available_quantity_desc","name":"Order by available quantity descending"},` +
	`{"id":"sold_quantity_asc","name":"Order by sold quantity ascending"},` +
	`{"id":"sold_quantity_desc","name":"Order by sold quantity descending"},` +
	`{"id":"price_asc","name":"Order by price ascending"},` +
	`{"id":"price_desc","name":"Order by price descending"},` +
	`{"id":"last_updated_desc","name":"Order by lastUpdated descending"},` +
	`{"id":"last_updated_asc","name":"Order by last updated ascending"}]`

func TestSellerItemsSearch_OrdersSortTheIDsAndTheAnswerNamesTheOrderApplied(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t) // w.item: 1500, published first
	is.NoErr(w.clock.Advance(time.Minute))
	second := w.mustItem(w.seller.ID)
	is.NoErr(w.clock.Advance(time.Minute))
	third := w.mustItem(w.seller.ID)
	is.NoErr(w.clock.Advance(time.Minute))
	is.Equal(w.do("PUT", "/items/"+third, w.seller.Token, map[string]any{"price": 900}).Status, http.StatusOK)
	is.NoErr(w.clock.Advance(time.Minute))
	is.Equal(w.do("PUT", "/items/"+w.item, w.seller.Token, map[string]any{"price": 2000.5}).Status, http.StatusOK)
	is.Equal(w.do("PUT", "/items/"+second, w.seller.Token, map[string]any{"available_quantity": 1}).Status, http.StatusOK)

	path := fmt.Sprintf("/users/%d/items/search", w.seller.ID)
	for _, c := range []struct {
		orders, name string
		want         []string
	}{
		{"start_time_asc", "Order by start time ascending", []string{w.item, second, third}},
		{"start_time_desc", "Order by start time descending", []string{third, second, w.item}},
		{"price_asc", "Order by price ascending", []string{third, second, w.item}},
		{"price_desc", "Order by price descending", []string{w.item, second, third}},
		{"last_updated_asc", "Order by last updated ascending", []string{third, w.item, second}},
		{"last_updated_desc", "Order by lastUpdated descending", []string{second, w.item, third}},
		{"available_quantity_asc", "Order by available quantity ascending", []string{second, w.item, third}},
		{"available_quantity_desc", "Order by available quantity descending", []string{third, w.item, second}},
		{"sold_quantity_asc", "Order by sold quantity ascending", []string{w.item, second, third}},
		{"sold_quantity_desc", "Order by sold quantity descending", []string{third, second, w.item}},
	} {
		t.Run(c.orders, func(t *testing.T) {
			is := is.New(t)
			res := w.do("GET", path+"?orders="+c.orders, w.seller.Token, nil)
			is.Equal(res.Status, http.StatusOK)
			is.Equal(strings.TrimSpace(string(res.Raw)), fmt.Sprintf(`{"seller_id":"%d","query":null,"paging":{"total":3,"offset":0,"limit":50},`+
				`"results":["%s","%s","%s"],"orders":[{"id":"%s","name":"%s"}],"available_orders":%s}`,
				w.seller.ID, c.want[0], c.want[1], c.want[2], c.orders, c.name, sellerAvailableOrders))
		})
	}
	page := w.do("GET", path+"?orders=price_desc&limit=1&offset=1", w.seller.Token, nil).Obj()
	is.Equal(page["results"], []any{second}) // the window is taken in the order asked
}

func TestSellerItemsSearch_ListingTypeStatusAndTagsFilterTogetherInAnyOrder(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t) // w.item: gold_special, active, 1500
	qty := int64(5)
	publish := func(listingType string, price int64) string {
		p, err := w.m.Stock.Publish(context.Background(), w.seller.ID, stock.NewItem{
			Title: "Guitar", CategoryID: "MLA1055", Price: money.FromInt(price), ListingTypeID: listingType,
			CurrencyID: "ARS", Condition: "new", AvailableQuantity: &qty,
		})
		is.NoErr(err)
		return p.ID
	}
	proCheap := publish("gold_pro", 100)
	proDear := publish("gold_pro", 5000)
	pausedPro := publish("gold_pro", 50)
	is.Equal(w.do("PUT", "/items/"+pausedPro, w.seller.Token, map[string]any{"status": "paused"}).Status, http.StatusOK)

	path := fmt.Sprintf("/users/%d/items/search", w.seller.ID)
	res := w.do("GET", path+"?listing_type_id=gold_pro&status=active&orders=price_desc", w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(res.Raw)), fmt.Sprintf(`{"seller_id":"%d","query":null,"paging":{"total":2,"offset":0,"limit":50},`+
		`"results":["%s","%s"],"orders":[{"id":"price_desc","name":"Order by price descending"}],"available_orders":%s}`,
		w.seller.ID, proDear, proCheap, sellerAvailableOrders))

	pro := w.do("GET", path+"?listing_type_id=gold_pro", w.seller.Token, nil).Obj()
	is.Equal(pro["results"], []any{proCheap, proDear, pausedPro})
	is.Equal(pro["paging"], map[string]any{"total": float64(3), "offset": float64(0), "limit": float64(50)})
	special := w.do("GET", path+"?listing_type_id=gold_special&orders=price_asc", w.seller.Token, nil).Obj()
	is.Equal(special["results"], []any{w.item})
	free := w.do("GET", path+"?listing_type_id=free", w.seller.Token, nil).Obj()
	is.Equal(free["results"], []any{}) // a listing type the seller has no item of
	is.Equal(free["paging"], map[string]any{"total": float64(0), "offset": float64(0), "limit": float64(50)})
	tagged := w.do("GET", path+"?tags=good_quality_thumbnail&listing_type_id=gold_pro", w.seller.Token, nil).Obj()
	is.Equal(tagged["results"], []any{}) // items carry no tags
	is.Equal(tagged["paging"], map[string]any{"total": float64(0), "offset": float64(0), "limit": float64(50)})
	noTag := w.do("GET", path+"?tags=,&listing_type_id=gold_pro", w.seller.Token, nil).Obj()
	is.Equal(noTag["results"], []any{proCheap, proDear, pausedPro}) // blanks between commas are no tags
	query := w.do("GET", path+"?q=guitar", w.seller.Token, nil).Obj()
	is.Equal(query["query"], nil) // no text query on this route
	is.Equal(len(query["results"].([]any)), 4)
}

func TestSellerItemsSearch_AHundredIsTheLargestPage(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	path := fmt.Sprintf("/users/%d/items/search", w.seller.ID)
	res := w.do("GET", path+"?limit=100", w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": float64(1), "offset": float64(0), "limit": float64(100)})
	res = w.do("GET", path+"?limit=101", w.seller.Token, nil)
	is.Equal(res.Status, http.StatusBadRequest)
	is.Equal(strings.TrimSpace(string(res.Raw)), `{"message":"Invalid limit: 101. The maximum is 100","error":"bad_request","status":400,"cause":[]}`)
	list := w.do("GET", fmt.Sprintf("/operator/items?seller_id=%d&limit=1000", w.seller.ID), testOperatorToken, nil)
	is.Equal(list.Status, http.StatusOK) // the operator's list of a seller's items keeps the house's maximum
}

func TestSellerItemsSearch_Errors(t *testing.T) {
	w := newQWorld(t)
	path := fmt.Sprintf("/users/%d/items/search", w.seller.ID)
	for _, c := range []struct {
		name, path, token string
		status            int
		message           string
	}{
		{"NoToken", path, "", 401, "Missing access token: send Authorization: Bearer <token>"},
		{"BadToken", path, "APP_USR-nope", 401, "Invalid access token"},
		{"AnotherUser", path, w.other.Token, 403, fmt.Sprintf("The items of user %d can only be searched with that user's token", w.seller.ID)},
		{"UnknownStatus", path + "?status=deleted", w.seller.Token, 400, "Invalid status: deleted. Valid values are: active, paused, closed"},
		{"UnknownOrder", path + "?orders=stop_time_asc", w.seller.Token, 400, "Invalid orders: stop_time_asc. Valid values are: " +
			"start_time_asc, start_time_desc, available_quantity_asc, available_quantity_desc, sold_quantity_asc, sold_quantity_desc, " +
			"price_asc, price_desc, last_updated_desc, last_updated_asc"},
		{"UnknownListingType", path + "?listing_type_id=platinum", w.seller.Token, 400, "Invalid listing_type_id: platinum. Valid values are: " +
			"gold_pro, gold_premium, gold_special, gold, silver, bronze, free"},
		{"LimitAboveAHundred", path + "?limit=101", w.seller.Token, 400, "Invalid limit: 101. The maximum is 100"},
		{"NegativeOffset", path + "?offset=-1", w.seller.Token, 400, "Invalid offset: -1. It must be a non-negative integer"},
		{"BadLimit", path + "?limit=x", w.seller.Token, 400, "Invalid limit: x. It must be a non-negative integer"},
		{"BadUserID", "/users/abc/items/search", w.seller.Token, 400, "Invalid user_id: abc. It must be a positive integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, w.do("GET", c.path, c.token, nil), c.status, c.message)
		})
	}
}
