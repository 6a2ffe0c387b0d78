package stock_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
)

func TestItems_AnswersEachIDInOrderWithNotFoundInPlace(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLA")
	a := e.mustPublish(seller, plainItem("Uno", "10", 1))
	b := e.mustPublish(seller, plainItem("Dos", "20", 2))
	res, err := e.svc.Items(ctx, []string{b.ID, "MLA1", a.ID, b.ID})
	is.NoErr(err)
	is.Equal(len(res), 4)
	is.Equal(res[0].Item.ID, b.ID)
	is.Equal(res[0].Item.AvailableQuantity, int64(2))
	is.True(errs.Is(res[1].Err, errs.NotFound))
	is.Equal(errs.As(res[1].Err).Message, "Item with id MLA1 not found")
	is.Equal(res[2].Item.ID, a.ID)
	is.Equal(res[3].Item.ID, b.ID) // a repeated id is answered again
}

func TestItems_NoIDOrMoreThanTwentyIsInvalid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, err := e.svc.Items(ctx, nil)
	is.True(errs.Is(err, errs.Invalid))
	is.Equal(errs.As(err).Message, "The fields [ids] are required for requested call")
	ids := make([]string, stock.MaxMultiget+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("MLA%d", i+1)
	}
	_, err = e.svc.Items(ctx, ids)
	is.True(errs.Is(err, errs.Invalid))
	is.Equal(errs.As(err).Message, "Too many ids: 21. At most 20 ids can be asked for at once")
	res, err := e.svc.Items(ctx, ids[:stock.MaxMultiget])
	is.NoErr(err)
	is.Equal(len(res), stock.MaxMultiget) // twenty is allowed
}

func testSellerItems(t *testing.T, e *env) {
	is := is.New(t)
	seller := e.mustUser("MLA")
	other := e.mustUser("MLA")
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, e.mustPublish(seller, plainItem(fmt.Sprintf("Item %d", i), "10", 1)).ID)
	}
	e.mustPublish(other, plainItem("Not mine", "10", 1))
	paused := stock.StatusPaused
	_, err := e.svc.UpdateItem(ctx, seller, ids[1], stock.ItemUpdate{Status: &paused})
	is.NoErr(err)

	all, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Limit: 50})
	is.NoErr(err)
	is.Equal(all.Total, 5)
	is.Equal(all.Results, ids) // the seller's items only, in publication order

	page, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Offset: 1, Limit: 2})
	is.NoErr(err)
	is.Equal(page.Total, 5)
	is.Equal(page.Results, ids[1:3])

	active, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: "active", Limit: 50})
	is.NoErr(err)
	is.Equal(active.Total, 4)
	is.Equal(active.Results, []string{ids[0], ids[2], ids[3], ids[4]})

	p, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: "paused", Limit: 50})
	is.NoErr(err)
	is.Equal(p.Results, []string{ids[1]})

	sku, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{SKU: "ABC", Limit: 50})
	is.NoErr(err)
	is.Equal(sku.Total, 0) // items carry no SKU
	is.Equal(sku.Results, []string{})

	_, err = e.svc.SellerItems(ctx, other, seller, stock.SellerItemsQuery{Limit: 50})
	is.True(errs.Is(err, errs.Forbidden)) // another user's items
	_, err = e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: "deleted", Limit: 50})
	is.True(errs.Is(err, errs.Invalid))
	is.Equal(errs.As(err).Message, "Invalid status: deleted. Valid values are: active, paused, closed")
}

func TestSellerItems_OwnerOnlyFilteredByStatusAndPaged_Memory(t *testing.T) {
	testSellerItems(t, newEnv(t))
}

func TestSellerItems_OwnerOnlyFilteredByStatusAndPaged_Badger(t *testing.T) {
	testSellerItems(t, newBadgerEnv(t))
}
