package stock_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
)

func wantInvalid(t *testing.T, err error, msg string) {
	t.Helper()
	if e := errs.As(err); e == nil || e.Kind != errs.Invalid || e.Code != "bad_request" || e.Message != msg {
		t.Fatalf("err = %v, want Invalid bad_request %q", err, msg)
	}
}

// clpItem is an item of site MLC, whose currency CLP has no decimals.
func clpItem(price string) stock.NewItem {
	in := plainItem("Bicicleta", price, 1)
	in.CategoryID, in.CurrencyID = "MLC1055", "CLP"
	return in
}

func TestPrice_MoreDecimalsThanTheCurrencyAllowsIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, site, price string
		msg               string
	}{
		{"CLP", "MLC", "1500.55", "Invalid price: 1500.55. A price in CLP may have at most 0 decimal places"},
		{"CLPOneDecimal", "MLC", "1500.5", "Invalid price: 1500.5. A price in CLP may have at most 0 decimal places"},
		{"COP", "MCO", "9900.1", "Invalid price: 9900.1. A price in COP may have at most 0 decimal places"},
		{"ARS", "MLA", "1500.555", "Invalid price: 1500.555. A price in ARS may have at most 2 decimal places"},
		{"BRL", "MLB", "10.001", "Invalid price: 10.001. A price in BRL may have at most 2 decimal places"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			seller := e.mustUser(c.site)
			in := plainItem("Bicicleta", c.price, 1)
			in.CategoryID, in.CurrencyID = c.site+"1055", "" // the site's currency
			_, err := e.svc.Publish(ctx, seller, in)
			wantInvalid(t, err, c.msg)
			res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: c.site, Limit: 50})
			if err != nil || res.Total != 0 {
				t.Fatalf("after a refused publication: %d items, %v", res.Total, err)
			}
		})
	}
}

func TestPrice_AsManyDecimalsAsTheCurrencyAllowsIsKept(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLC")
	p, err := e.svc.Publish(ctx, seller, clpItem("1500.00")) // trailing zeros are no decimals
	is.NoErr(err)
	is.Equal(p.Price, json.Number("1500"))
	ars := e.mustUser("MLA")
	p, err = e.svc.Publish(ctx, ars, plainItem("Mesa", "1500.55", 1))
	is.NoErr(err)
	is.Equal(p.Price, json.Number("1500.55"))
	usd := plainItem("Mesa", "10.5", 1)
	usd.CurrencyID = "USD" // an other currency of MLA, checked by its own places
	p, err = e.svc.Publish(ctx, ars, usd)
	is.NoErr(err)
	is.Equal(p.Price, json.Number("10.5"))
}

func TestPrice_UpdateIsCheckedAgainstTheItemsCurrency(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLC")
	p := e.mustPublish(seller, clpItem("1500"))
	bad := money.MustParse("1999.9")
	_, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Price: &bad})
	wantInvalid(t, err, "Invalid price: 1999.9. A price in CLP may have at most 0 decimal places")
	it, err := e.svc.Item(ctx, p.ID)
	is.NoErr(err)
	is.Equal(it.Price, json.Number("1500")) // nothing changed
	is.Equal(it.LastUpdated, p.LastUpdated)
	good := money.FromInt(2000)
	it, err = e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Price: &good})
	is.NoErr(err)
	is.Equal([2]json.Number{it.Price, it.BasePrice}, [2]json.Number{"2000", "2000"})
}

func TestPrice_MustBeGivenGreaterThanZeroAndBelowMaxPrice(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	for _, c := range []struct {
		price money.Dec
		msg   string
	}{
		{money.Dec{}, "The fields [price] are required for requested call"},
		{money.FromInt(0), "Invalid price: 0. It must be greater than 0"},
		{money.MustParse("-0.5"), "Invalid price: -0.5. It must be greater than 0"},
		{money.MustParse("1000000000000"), "Invalid price: 1000000000000. It must be less than 1000000000000"},
	} {
		in := plainItem("Mesa", "1", 1)
		in.Price = c.price
		_, err := e.svc.Publish(ctx, seller, in)
		wantInvalid(t, err, c.msg)
	}
	in := plainItem("Mesa", "1", 1)
	in.Price = money.MustParse("999999999999.99")
	if _, err := e.svc.Publish(ctx, seller, in); err != nil {
		t.Fatalf("the highest price with two decimals: %v", err)
	}
}

// TestPrice_JSONNumberAndStringDecodeToTheSamePrice: an embedder decoding a
// publication and the HTTP server read a price the same way.
func TestPrice_JSONNumberAndStringDecodeToTheSamePrice(t *testing.T) {
	is := is.New(t)
	var a, b stock.NewItem
	is.NoErr(json.Unmarshal([]byte(`{"price": 1500.50}`), &a))
	is.NoErr(json.Unmarshal([]byte(`{"price": "1500.5"}`), &b))
	is.Equal(a.Price.String(), "1500.5")
	is.Equal(a.Price.Cmp(b.Price), 0)
	var none stock.NewItem
	is.NoErr(json.Unmarshal([]byte(`{"price": null}`), &none))
	is.True(!none.Price.Given()) // null is no price
	var up stock.ItemUpdate
	is.NoErr(json.Unmarshal([]byte(`{"price": "12"}`), &up))
	is.Equal(up.Price.String(), "12")
	err := json.Unmarshal([]byte(`{"price": true}`), &a)
	e, ok := money.InvalidField(err)
	is.True(ok) // a price of another type is a refusal naming the field
	is.Equal(e.Message, "Invalid price: true. It must be a decimal number such as 1500 or 1500.50")
}
