package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestOperator_UserTokenIs403(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("POST", "/operator/users", u.Token, map[string]any{"nickname": "X", "site_id": "MLA"})
	wantError(t, res, http.StatusForbidden, "Operator routes need the operator token")
}

func TestOperator_MissingOrUnknownTokenIs401(t *testing.T) {
	ts := newTestServer(t)
	wantError(t, ts.do("POST", "/operator/users", "", map[string]any{"nickname": "X", "site_id": "MLA"}), http.StatusUnauthorized, "")
	wantError(t, ts.do("POST", "/operator/users", "wrong-operator-token", map[string]any{"nickname": "X", "site_id": "MLA"}), http.StatusUnauthorized, "")
}

func TestOperator_CreateUserAnswersTheFullRecordAndAToken(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("POST", "/operator/users", testOperatorToken, map[string]any{
		"nickname": "SELLER", "site_id": "MLB", "first_name": "João", "last_name": "Silva", "gender": "male",
		"tags": []string{"normal", "warehouse_management"},
	})
	is.Equal(res.Status, http.StatusCreated)
	o := res.Obj()
	is.Equal(o["nickname"], "SELLER")
	is.Equal(o["country_id"], "BR")
	is.Equal(o["first_name"], "João")
	is.Equal(o["tags"], []any{"normal", "warehouse_management"})
	tok := o["access_token"].(string)
	is.True(strings.HasPrefix(tok, "APP_USR-"))
	me := ts.do("GET", fmt.Sprintf("/users/%.0f", o["id"]), tok, nil)
	is.Equal(me.Status, http.StatusOK) // the token works
	is.Equal(me.Obj()["last_name"], "Silva")
}

func TestOperator_CreateUserRequiresNicknameAndSite(t *testing.T) {
	ts := newTestServer(t)
	wantError(t, ts.do("POST", "/operator/users", testOperatorToken, map[string]any{"site_id": "MLA"}),
		http.StatusBadRequest, "The fields [nickname] are required for requested call")
	wantError(t, ts.do("POST", "/operator/users", testOperatorToken, map[string]any{"nickname": "X"}),
		http.StatusBadRequest, "The fields [site_id] are required for requested call")
}

func TestOperator_IssueFurtherToken(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("POST", fmt.Sprintf("/operator/users/%d/tokens", u.ID), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["user_id"], float64(u.ID))
	tok := res.Obj()["access_token"].(string)
	is.True(tok != u.Token)
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", u.ID), tok, nil).Status, http.StatusOK)
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil).Status, http.StatusOK) // the first still works
	wantError(t, ts.do("POST", "/operator/users/999999/tokens", testOperatorToken, nil), http.StatusNotFound, "User not found: 999999")
}

func TestOperator_SetTags(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("PUT", fmt.Sprintf("/operator/users/%d/tags", u.ID), testOperatorToken, map[string]any{"tags": []string{"normal", "warehouse_management"}})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["tags"], []any{"normal", "warehouse_management"})
	wantError(t, ts.do("PUT", fmt.Sprintf("/operator/users/%d/tags", u.ID), testOperatorToken, map[string]any{}),
		http.StatusBadRequest, "The fields [tags] are required for requested call")
}

func TestOperator_CreateStore(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA", "warehouse_management")
	res := ts.do("POST", fmt.Sprintf("/operator/users/%d/stores", u.ID), testOperatorToken, map[string]any{
		"description": "Depósito", "tags": []string{"stock_location"}, "network_node_id": "ARBA01",
		"location": map[string]any{"address_id": 1, "street_name": "Corrientes", "street_number": 1234, "latitude": -34.6, "longitude": -58.38, "city": "CABA", "state": "Capital Federal", "country": "Argentina", "zip_code": "1043"},
	})
	is.Equal(res.Status, http.StatusCreated)
	o := res.Obj()
	is.Equal(o["status"], "active")          // default
	is.Equal(o["network_node_id"], "ARBA01") // kept
	is.Equal(o["user_id"], fmt.Sprint(u.ID))
	is.Equal(o["location"].(map[string]any)["street_number"], float64(1234))
	wantError(t, ts.do("POST", "/operator/users/999999/stores", testOperatorToken, map[string]any{}), http.StatusNotFound, "User not found: 999999")
	wantError(t, ts.do("POST", fmt.Sprintf("/operator/users/%d/stores", u.ID), testOperatorToken, map[string]any{"status": "weird"}),
		http.StatusBadRequest, "Invalid store status: weird. Valid values are: [active, inactive]")
}

func TestOperator_BodyOfTheWrongJSONTypeIs400WithoutGoTypeNames(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, path := range []string{"/operator/users", fmt.Sprintf("/operator/users/%d/stores", u.ID), fmt.Sprintf("/operator/users/%d/tags", u.ID)} {
		method := "POST"
		if strings.HasSuffix(path, "/tags") {
			method = "PUT"
		}
		wantError(t, ts.do(method, path, testOperatorToken, "[1]"), http.StatusBadRequest, "Malformed JSON body: a JSON object is expected")
	}
}

func TestOperator_RevokeOneToken(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	second := ts.do("POST", fmt.Sprintf("/operator/users/%d/tokens", u.ID), testOperatorToken, nil).Obj()["access_token"].(string)
	res := ts.do("POST", "/operator/tokens/revoke", testOperatorToken, map[string]any{"access_token": u.Token})
	is.Equal(res.Status, http.StatusOK)
	wantError(t, ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil), http.StatusUnauthorized, "")
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", u.ID), second, nil).Status, http.StatusOK) // the other token still works
	wantError(t, ts.do("POST", "/operator/tokens/revoke", testOperatorToken, map[string]any{}),
		http.StatusBadRequest, "The fields [access_token] are required for requested call")
	wantError(t, ts.do("POST", "/operator/tokens/revoke", second, map[string]any{"access_token": second}), http.StatusForbidden, "")
}

func TestOperator_RevokeEveryTokenOfAUser(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	other := ts.mustUser("MLA")
	second := ts.do("POST", fmt.Sprintf("/operator/users/%d/tokens", u.ID), testOperatorToken, nil).Obj()["access_token"].(string)
	res := ts.do("DELETE", fmt.Sprintf("/operator/users/%d/tokens", u.ID), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["revoked"], true)
	for _, tok := range []string{u.Token, second} {
		wantError(t, ts.do("GET", fmt.Sprintf("/users/%d", u.ID), tok, nil), http.StatusUnauthorized, "")
	}
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", other.ID), other.Token, nil).Status, http.StatusOK) // other users unaffected
	wantError(t, ts.do("DELETE", "/operator/users/999999/tokens", testOperatorToken, nil), http.StatusNotFound, "User not found: 999999")
}
