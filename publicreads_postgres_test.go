package marketplace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
)

// TestOpenOnPostgres_CategoriesMultigetsAndSellerItemsWorkOnPostgres runs the
// public reads' domain calls on the PostgreSQL backend: shipped and imported
// categories, a site, both multigets and a seller's item ids.
func TestOpenOnPostgres_CategoriesMultigetsAndSellerItemsWorkOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	m := mustOpenPostgres(t, url)

	c, err := m.Catalog.Category(ctx, "MLA1055")
	if err != nil || len(c.PathFromRoot) != 2 {
		t.Fatalf("shipped category: %+v %v", c, err)
	}
	_, err = m.ImportReference(ctx, marketplace.ReferenceDocument{Records: []marketplace.ReferenceRecord{
		{Kind: "category", Data: json.RawMessage(`{"id":"MLA999001","name":"Fundas","parent_id":"MLA1055"}`)},
	}})
	if err != nil {
		t.Fatalf("import category: %v", err)
	}
	if c, err = m.Catalog.Category(ctx, "MLA1055"); err != nil || len(c.ChildrenCategories) != 1 {
		t.Fatalf("imported child: %+v %v", c, err)
	}
	if site, err := m.Catalog.Site(ctx, "MLA"); err != nil || len(site.Categories) == 0 || site.Currencies[0].ID != "ARS" {
		t.Fatalf("site: %+v %v", site, err)
	}

	seller, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 3; i++ {
		qty := int64(1)
		p, err := m.Stock.Publish(ctx, seller.ID, stock.NewItem{Title: fmt.Sprintf("Funda %d", i), CategoryID: "MLA999001",
			Price: money.FromInt(100), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	res, err := m.Stock.Items(ctx, []string{ids[2], "MLA1"})
	if err != nil || res[0].Item.ID != ids[2] || res[1].Err == nil {
		t.Fatalf("items multiget: %+v %v", res, err)
	}
	page, err := m.Stock.SellerItems(ctx, seller.ID, seller.ID, stock.SellerItemsQuery{Offset: 1, Limit: 5})
	if err != nil || page.Total != 3 || !slices.Equal(page.Results, ids[1:]) {
		t.Fatalf("seller items: %+v %v", page, err)
	}
	users, err := m.Accounts.UsersFor(ctx, 0, []string{fmt.Sprint(seller.ID)})
	if err != nil || users[0].Err != nil {
		t.Fatalf("users multiget: %+v %v", users, err)
	}
}
