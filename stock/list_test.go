package stock_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/paging"
)

func TestSellerItemsOf_ListsTheSellersWholeItemsInPublicationOrder(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, stores := e.mustSeller(2)
	other, otherStores := e.mustSeller(1)
	a := e.mustPublishMulti(seller, multiItem("Red mug", "1500", loc(stores[0], 3), loc(stores[1], 4)))
	b := e.mustPublishMulti(seller, multiItem("Blue mug", "1200", loc(stores[0], 1)))
	e.mustPublishMulti(other, multiItem("Green mug", "900", loc(otherStores[0], 9)))

	list, err := e.svc.SellerItemsOf(ctx, seller, paging.Page{Limit: 50})
	is.NoErr(err)
	is.Equal(list.Total, 2) // only the seller's items
	is.Equal(list.Results[0].ID, a.Item.ID)
	is.Equal(list.Results[1].ID, b.Item.ID)               // publication order
	is.Equal(list.Results[0].AvailableQuantity, int64(7)) // the user product's total stock
	is.Equal(list.Results[0].Title, "Red mug")            // whole records
	is.Equal(list.Results[0].UserProductID, a.Item.UserProductID)

	page, err := e.svc.SellerItemsOf(ctx, seller, paging.Page{Offset: 1, Limit: 1})
	is.NoErr(err)
	is.Equal(page.Total, 2) // the total ignores the window
	is.Equal(len(page.Results), 1)
	is.Equal(page.Results[0].ID, b.Item.ID)
}

func TestSellerItemsOf_AUserWithoutItemsHasAnEmptyList(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	buyer := e.mustUser("MLA")
	list, err := e.svc.SellerItemsOf(ctx, buyer, paging.Page{Limit: 50})
	is.NoErr(err)
	is.Equal(list.Total, 0)
	is.True(list.Results != nil) // an empty list, not null
}

func TestSellerItemsOf_UnknownSellerIsNotFoundAndABadWindowInvalid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, err := e.svc.SellerItemsOf(ctx, 999999999, paging.Page{Limit: 50})
	is.True(errs.Is(err, errs.NotFound)) // no such user
	is.Equal(errs.As(err).Message, "User not found: 999999999")
	seller, _ := e.mustSeller(0)
	_, err = e.svc.SellerItemsOf(ctx, seller, paging.Page{Limit: -1})
	is.True(errs.Is(err, errs.Invalid)) // the paging rule
}
