package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestAuth_MissingTokenIs401(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("GET", fmt.Sprintf("/users/%d/stores/search", u.ID), "", nil)
	wantError(t, res, http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
	is.New(t).Equal(res.Obj()["error"], "unauthorized")
}

func TestAuth_UnknownTokenIs401(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("GET", fmt.Sprintf("/users/%d", u.ID), "APP_USR-not-a-token", nil)
	wantError(t, res, http.StatusUnauthorized, "Invalid access token")
	res = ts.do("GET", fmt.Sprintf("/users/%d", u.ID), "", nil, "Authorization", "Basic abc")
	wantError(t, res, http.StatusUnauthorized, "Invalid access token")
}

func TestAuth_AccessTokenQueryParameterIsAccepted(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("GET", fmt.Sprintf("/users/%d?access_token=%s", u.ID, u.Token), "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["id"], float64(u.ID))
	res = ts.do("GET", fmt.Sprintf("/users/%d?access_token=bad", u.ID), "", nil)
	wantError(t, res, http.StatusUnauthorized, "Invalid access token")
}

func TestAuth_RevokedTokenIs401(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	if err := ts.m.Accounts.RevokeToken(t.Context(), u.Token); err != nil {
		t.Fatal(err)
	}
	wantError(t, ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil), http.StatusUnauthorized, "Invalid access token")
}

func TestUnknownRouteIs404InErrorShape(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("GET", "/no/such/route", "", nil)
	wantError(t, res, http.StatusNotFound, "Resource GET /no/such/route not found")
	is.New(t).Equal(res.Obj()["error"], "not_found")
}

func TestWrongMethodIs405InErrorShape(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("DELETE", "/users/1", "", nil)
	wantError(t, res, http.StatusMethodNotAllowed, "Method DELETE not allowed on /users/1")
	is := is.New(t)
	is.Equal(res.Obj()["error"], "method_not_allowed")
	is.True(res.Header.Get("Allow") != "") // httprouter lists the allowed methods
}

func TestMalformedJSONIs400(t *testing.T) {
	ts := newTestServer(t)
	for _, body := range []string{`{`, `not json`, `{"nickname": 5, "site_id": "MLA"}`, `[1,2]`, `{"nickname":"a","site_id":"MLA"} trailing`, ``} {
		res := ts.do("POST", "/operator/users", testOperatorToken, body)
		wantError(t, res, http.StatusBadRequest, "")
		if res.Obj()["error"] != "bad_request" {
			t.Fatalf("%q: error = %v", body, res.Obj()["error"])
		}
	}
	res := ts.do("POST", "/operator/users", testOperatorToken, `{"nickname": 5, "site_id": "MLA"}`)
	wantError(t, res, http.StatusBadRequest, "Invalid JSON: the field [nickname] must be of type string")
}

func TestBodyOver1MiBIs413(t *testing.T) {
	ts := newTestServer(t)
	big := `{"nickname":"` + strings.Repeat("a", 1<<20) + `","site_id":"MLA"}`
	res := ts.do("POST", "/operator/users", testOperatorToken, big)
	wantError(t, res, http.StatusRequestEntityTooLarge, "Request body too large: the limit is 1048576 bytes")
}

func TestGetUser_OwnRecordIsComplete(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA", "normal", "warehouse_management")
	res := ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	for _, f := range []string{"id", "nickname", "registration_date", "first_name", "last_name", "gender", "country_id", "tags"} {
		_, ok := o[f]
		is.True(ok) // every field of the User table
	}
	is.Equal(o["id"], float64(u.ID))
	is.Equal(o["first_name"], "Test")
	is.Equal(o["country_id"], "AR")
	is.Equal(o["registration_date"], "2026-03-04T12:00:00.000-03:00")
	is.Equal(o["tags"], []any{"normal", "warehouse_management"})
}

func TestGetUser_OtherUsersSeeThePublicSubset(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA", "warehouse_management")
	buyer := ts.mustUser("MLA")
	res := ts.do("GET", fmt.Sprintf("/users/%d", seller.ID), buyer.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["id"], float64(seller.ID))
	is.Equal(o["tags"], []any{"warehouse_management"}) // tags tell buyers' apps about multi-origin
	for _, personal := range []string{"first_name", "last_name", "gender"} {
		_, ok := o[personal]
		is.True(!ok) // no personal data
	}
}

func TestGetUser_UnknownOrBadID(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	wantError(t, ts.do("GET", "/users/999999", u.Token, nil), http.StatusNotFound, "User not found: 999999")
	wantError(t, ts.do("GET", "/users/abc", u.Token, nil), http.StatusBadRequest, "Invalid user_id: abc. It must be a positive integer")
}

func TestSearchStores_StockLocationsOfTheOwner(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(2)
	plain := ts.mustStore(seller.ID) // not a stock location
	res := ts.do("GET", fmt.Sprintf("/users/%d/stores/search?tags=stock_location", seller.ID), seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["paging"], map[string]any{"total": float64(2), "offset": float64(0), "limit": float64(50)})
	results := o["results"].([]any)
	is.Equal(len(results), 2)
	first := results[0].(map[string]any)
	is.Equal(first["id"], stores[0])
	is.Equal(first["user_id"], fmt.Sprint(seller.ID))
	for _, f := range []string{"id", "user_id", "description", "status", "location", "tags", "network_node_id"} {
		_, ok := first[f]
		is.True(ok) // every field of the Store table
	}
	loc := first["location"].(map[string]any)
	for _, f := range []string{"address_id", "address_line", "street_name", "street_number", "latitude", "longitude", "city", "state", "country", "zip_code"} {
		_, ok := loc[f]
		is.True(ok) // every field of the location
	}
	all := ts.do("GET", fmt.Sprintf("/users/%d/stores/search", seller.ID), seller.Token, nil)
	is.Equal(all.Obj()["paging"].(map[string]any)["total"], float64(3)) // without tags: every store
	last := all.Obj()["results"].([]any)[2].(map[string]any)
	is.Equal(last["id"], plain)
}

func TestSearchStores_Paging(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(3)
	res := ts.do("GET", fmt.Sprintf("/users/%d/stores/search?tags=stock_location&limit=1&offset=2", seller.ID), seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": float64(3), "offset": float64(2), "limit": float64(1)})
	is.Equal(res.Obj()["results"].([]any)[0].(map[string]any)["id"], stores[2])
	for _, q := range []string{"limit=-1", "offset=-3", "limit=abc", "offset=1.5", "limit=1001"} {
		res := ts.do("GET", fmt.Sprintf("/users/%d/stores/search?%s", seller.ID, q), seller.Token, nil)
		wantError(t, res, http.StatusBadRequest, "")
	}
	wantError(t, ts.do("GET", fmt.Sprintf("/users/%d/stores/search?limit=1001", seller.ID), seller.Token, nil),
		http.StatusBadRequest, "Invalid limit: 1001. The maximum is 1000")
}

func TestSearchStores_AnotherCallerIs403(t *testing.T) {
	ts := newTestServer(t)
	seller, _ := ts.mustSeller(1)
	other := ts.mustUser("MLA")
	res := ts.do("GET", fmt.Sprintf("/users/%d/stores/search?tags=stock_location", seller.ID), other.Token, nil)
	wantError(t, res, http.StatusForbidden, fmt.Sprintf("The caller is not allowed to list the stores of user %d", seller.ID))
}

func TestGetUser_MeIsTheCallersOwnFullRecord(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA", "normal")
	ts.mustUser("MLA")
	me := ts.do("GET", "/users/me", u.Token, nil)
	is.Equal(me.Status, http.StatusOK)
	is.Equal(me.Body, ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil).Body)
	wantError(t, ts.do("GET", "/users/me", "", nil), http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
	stores := ts.do("GET", "/users/me/stores/search", u.Token, nil)
	is.Equal(stores.Status, http.StatusOK)
	is.Equal(stores.Obj()["paging"], map[string]any{"total": float64(0), "offset": float64(0), "limit": float64(50)})
}
