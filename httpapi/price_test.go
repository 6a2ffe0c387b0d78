package httpapi_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/matryer/is"
)

// TestPrice_MoreDecimalsThanTheCurrencyAllowsIsRefusedOverHTTP: over a
// real server, a price with more decimals than the site's currency writes
// is a 400 bad_request naming the price, the currency and its places, on
// publication and on update, and nothing changes.
func TestPrice_MoreDecimalsThanTheCurrencyAllowsIsRefusedOverHTTP(t *testing.T) {
	is := is.New(t)
	ls := newLiveServer(t)
	chile := ls.mustUser("MLC")
	const clp = "Invalid price: 1500.55. A price in CLP may have at most 0 decimal places"
	for _, price := range []string{`1500.55`, `"1500.55"`} { // a number and a string alike
		res := ls.do("POST", "/items", chile.Token, `{"title": "Bicicleta", "category_id": "MLC1055", "price": `+price+`,
			"listing_type_id": "gold_special", "available_quantity": 1}`)
		wantError(t, res, http.StatusBadRequest, clp)
		is.Equal(res.Obj()["error"], "bad_request")
	}
	res := ls.do("POST", "/items", chile.Token, `{"title": "Bicicleta", "category_id": "MLC1055", "price": "1500",
		"listing_type_id": "gold_special", "available_quantity": 1}`)
	is.Equal(res.Status, http.StatusCreated)
	is.True(bytes.Contains(res.Raw, []byte(`"price":1500,`)))
	is.Equal(res.Obj()["currency_id"], "CLP")
	id := res.Obj()["id"].(string)

	res = ls.do("PUT", "/items/"+id, chile.Token, `{"price": 1999.9}`)
	wantError(t, res, http.StatusBadRequest, "Invalid price: 1999.9. A price in CLP may have at most 0 decimal places")
	is.True(bytes.Contains(ls.do("GET", "/items/"+id, "", nil).Raw, []byte(`"price":1500,`))) // unchanged

	argentina := ls.mustUser("MLA")
	res = ls.do("POST", "/items", argentina.Token, `{"title": "Mesa", "category_id": "MLA1055", "price": 1.005,
		"listing_type_id": "gold_special", "available_quantity": 1}`)
	wantError(t, res, http.StatusBadRequest, "Invalid price: 1.005. A price in ARS may have at most 2 decimal places")
	res = ls.do("POST", "/items", argentina.Token, `{"title": "Mesa", "category_id": "MLA1055", "price": "350000.50",
		"listing_type_id": "gold_special", "available_quantity": 1}`)
	is.Equal(res.Status, http.StatusCreated)
	is.True(bytes.Contains(res.Raw, []byte(`"price":350000.5,`))) // written as a number, as before
}
