package accounts_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/paging"
)

func TestUsers_ListsEveryUserInIdOrderWithTheTotal(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	var ids []int64
	for _, nick := range []string{"A", "B", "C"} {
		u := mustUser(t, svc, accounts.NewUser{Nickname: nick, SiteID: "MLA"})
		// A user's tokens and stores live beside the user records: they
		// must not count as users.
		_, err := svc.IssueToken(ctx, u.ID)
		is.NoErr(err)
		_, err = svc.CreateStore(ctx, u.ID, accounts.NewStore{Description: "shop"})
		is.NoErr(err)
		ids = append(ids, u.ID)
	}
	all, total, err := svc.Users(ctx, paging.Page{Limit: 50})
	is.NoErr(err)
	is.Equal(total, 3) // every user counted
	is.Equal(len(all), 3)
	for i, u := range all {
		is.Equal(u.ID, ids[i]) // id order
	}
	is.Equal(all[1].Nickname, "B") // whole records

	page, total, err := svc.Users(ctx, paging.Page{Offset: 1, Limit: 1})
	is.NoErr(err)
	is.Equal(total, 3)           // the total ignores the window
	is.Equal(len(page), 1)       // the window's size
	is.Equal(page[0].ID, ids[1]) // the window's place

	page, total, err = svc.Users(ctx, paging.Page{Offset: 5, Limit: 10})
	is.NoErr(err)
	is.Equal(total, 3)
	is.True(page != nil && len(page) == 0) // past the end: an empty page, not nil
}

func TestUsers_AWindowOutsideThePagingRuleIsInvalid(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	for _, p := range []paging.Page{{Limit: -1}, {Limit: paging.MaxLimit + 1}, {Offset: -1, Limit: 1}} {
		_, _, err := svc.Users(context.Background(), p)
		is.True(errs.Is(err, errs.Invalid)) // refused by the paging rule
		is.Equal(err.Error(), p.Check().Error())
	}
}

func TestUserStores_TheOperatorSeesAUsersStores(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "SHOP", SiteID: "MLA"})
	other := mustUser(t, svc, accounts.NewUser{Nickname: "OTHER", SiteID: "MLA"})
	a, err := svc.CreateStore(ctx, u.ID, accounts.NewStore{Description: "north", Tags: []string{"stock_location"}})
	is.NoErr(err)
	_, err = svc.CreateStore(ctx, other.ID, accounts.NewStore{Description: "elsewhere"})
	is.NoErr(err)
	stores, total, err := svc.UserStores(ctx, u.ID, accounts.StoreQuery{Limit: 50})
	is.NoErr(err)
	is.Equal(total, 1)           // only the user's own
	is.Equal(stores[0].ID, a.ID) // the store created
	_, _, err = svc.UserStores(ctx, 999999999, accounts.StoreQuery{Limit: 50})
	is.True(errs.Is(err, errs.NotFound)) // an unknown user
}
