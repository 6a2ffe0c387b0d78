package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/matryer/is"
)

func TestOperatorListUsers_PagesEveryUserWithThePagingObject(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	a := ts.mustUser("MLA")
	b := ts.mustUser("MLB")
	res := ts.operator("GET", "/operator/users", nil)
	is.Equal(res.Status, http.StatusOK)
	body := res.Obj()
	is.Equal(body["paging"], map[string]any{"total": 2.0, "offset": 0.0, "limit": 50.0}) // the default window
	results := body["results"].([]any)
	is.Equal(len(results), 2)
	first := results[0].(map[string]any)
	is.Equal(first["id"], float64(a.ID))      // id order
	is.Equal(first["first_name"], "Test")     // the whole record, as GET /operator/users/{id}
	is.True(first["registration_date"] != "") // the whole record

	res = ts.operator("GET", "/operator/users?offset=1&limit=1", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": 2.0, "offset": 1.0, "limit": 1.0})
	is.Equal(res.Obj()["results"].([]any)[0].(map[string]any)["id"], float64(b.ID))
}

func TestOperatorListStores_TheOperatorSeesAUsersStores(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	ts.mustStore(seller.ID, "other")
	res := ts.operator("GET", fmt.Sprintf("/operator/users/%d/stores?tags=stock_location", seller.ID), nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": 2.0, "offset": 0.0, "limit": 50.0}) // the tag filter applies
	results := res.Obj()["results"].([]any)
	is.Equal(results[0].(map[string]any)["id"], stores[0])
	is.Equal(results[1].(map[string]any)["id"], stores[1])
	wantError(t, ts.operator("GET", "/operator/users/999999999/stores", nil), http.StatusNotFound, "User not found: 999999999")
}

func TestOperatorListItems_ASellersWholeItems(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	res := ts.do("POST", "/items/multiwarehouse", seller.Token, map[string]any{
		"title": "Red mug", "category_id": "MLA1055", "price": 1500, "currency_id": "ARS", "listing_type_id": "gold_special",
		"stock_locations": []any{map[string]any{"store_id": stores[0], "quantity": 4}},
	})
	is.Equal(res.Status, http.StatusCreated)
	id := res.Obj()["id"]
	res = ts.operator("GET", fmt.Sprintf("/operator/items?seller_id=%d", seller.ID), nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": 1.0, "offset": 0.0, "limit": 50.0})
	item := res.Obj()["results"].([]any)[0].(map[string]any)
	is.Equal(item["id"], id)
	is.Equal(item["available_quantity"], 4.0)      // the stock of its user product
	is.Equal(item["title"], "Red mug")             // the whole item, as GET /items/{id}
	is.Equal(item["user_product_id"] != nil, true) // for the stock routes

	res = ts.operator("GET", fmt.Sprintf("/operator/items?seller_id=%d&offset=1", seller.ID), nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(len(res.Obj()["results"].([]any)), 0) // past the end: an empty list
}

func TestOperatorLists_ErrorsAndAuth(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, c := range []struct {
		name, path, token string
		status            int
		message           string
	}{
		{"ItemsWithoutSeller", "/operator/items", testOperatorToken, 400, "The parameter [seller_id] is required"},
		{"ItemsBadSeller", "/operator/items?seller_id=abc", testOperatorToken, 400, "Invalid seller_id: abc. It must be a positive integer"},
		{"ItemsZeroSeller", "/operator/items?seller_id=0", testOperatorToken, 400, "Invalid seller_id: 0. It must be a positive integer"},
		{"ItemsUnknownSeller", "/operator/items?seller_id=999999999", testOperatorToken, 404, "User not found: 999999999"},
		{"UsersBadLimit", "/operator/users?limit=x", testOperatorToken, 400, "Invalid limit: x. It must be a non-negative integer"},
		{"UsersLimitOverMax", "/operator/users?limit=1001", testOperatorToken, 400, "Invalid limit: 1001. The maximum is 1000"},
		{"UsersNegativeOffset", "/operator/users?offset=-1", testOperatorToken, 400, "Invalid offset: -1. It must be a non-negative integer"},
		{"AppsBadOwner", "/operator/applications?owner_user_id=-3", testOperatorToken, 400, "Invalid owner_user_id: -3. It must be a positive integer"},
		{"StoresBadUser", "/operator/users/x/stores", testOperatorToken, 400, "Invalid user_id: x. It must be a positive integer"},
		{"UsersNoToken", "/operator/users", "", 401, ""},
		{"UsersUserToken", "/operator/users", u.Token, 403, "Operator routes need the operator token"},
		{"AppsUserToken", "/operator/applications", u.Token, 403, "Operator routes need the operator token"},
		{"ItemsUserToken", "/operator/items?seller_id=1", u.Token, 403, "Operator routes need the operator token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, ts.do("GET", c.path, c.token, nil), c.status, c.message)
		})
	}
}

func TestOperatorListApplications_AllOrOneOwners(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	ann, bob := ts.mustUser("MLA"), ts.mustUser("MLA")
	var ids []any
	for _, owner := range []int64{ann.ID, bob.ID, ann.ID} {
		res := ts.operator("POST", "/operator/applications", map[string]any{
			"name": "App", "owner_user_id": owner, "callback_url": "https://example.com/cb", "topics": []any{"questions"}})
		is.Equal(res.Status, http.StatusCreated)
		ids = append(ids, res.Obj()["id"])
	}
	res := ts.operator("GET", "/operator/applications", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": 3.0, "offset": 0.0, "limit": 50.0})
	results := res.Obj()["results"].([]any)
	for i, r := range results {
		is.Equal(r.(map[string]any)["id"], ids[i]) // id order
	}
	_, shown := results[0].(map[string]any)["client_secret"]
	is.True(!shown) // the client secret is shown once, at registration

	res = ts.operator("GET", fmt.Sprintf("/operator/applications?owner_user_id=%d", ann.ID), nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"].(map[string]any)["total"], 2.0) // only ann's
	is.Equal(res.Obj()["results"].([]any)[1].(map[string]any)["id"], ids[2])
}
