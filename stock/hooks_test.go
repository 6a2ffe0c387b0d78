package stock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

func TestOnItemChange_HooksRunOnPublicationAndEveryUpdateInTheSameTransaction(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	type change struct{ before, after string }
	var seen []change
	marker := keycodec.New("test/hook")
	e.svc.OnItemChange(func(_ context.Context, tx storage.Tx, before, after stock.Item) error {
		seen = append(seen, change{before.Status, after.Status})
		// A write of the hook commits or fails with the change itself.
		return tx.Set(keycodec.Key(marker).Str(after.ID).Str(after.Status), nil)
	})
	seller := e.mustUser("MLA")
	p := e.mustPublish(seller, plainItem("Mesa", "10", 1))
	paused := stock.StatusPaused
	_, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &paused})
	is.NoErr(err)
	price := money.FromInt(12)
	_, err = e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Price: &price})
	is.NoErr(err)
	is.Equal(seen, []change{{"", "active"}, {"active", "paused"}, {"paused", "paused"}})
	err = e.store.View(ctx, func(tx storage.Tx) error {
		_, err := tx.Get(keycodec.Key(marker).Str(p.ID).Str("paused"))
		return err
	})
	is.NoErr(err) // the hook's write was committed with the change
}

func TestOnItemChange_AHookErrorAbortsTheChange(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	veto := errs.Invalidf("vetoed")
	e.svc.OnItemChange(func(_ context.Context, _ storage.Tx, before, after stock.Item) error {
		if after.Status == stock.StatusClosed || after.Title == "Prohibido" {
			return veto
		}
		return nil
	})
	seller := e.mustUser("MLA")
	_, err := e.svc.Publish(ctx, seller, plainItem("Prohibido", "10", 1))
	is.True(errors.Is(err, veto))
	p := e.mustPublish(seller, plainItem("Mesa", "10", 1))
	closed := stock.StatusClosed
	_, err = e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &closed})
	is.True(errors.Is(err, veto))
	it, err := e.svc.Item(ctx, p.ID)
	is.NoErr(err)
	is.Equal(it.Status, stock.StatusActive) // the refused close changed nothing
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "prohibido"}), []string{})
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "mesa"}), []string{p.ID})
}

func TestSearch_WorksOnBadger(t *testing.T) {
	is := is.New(t)
	e := newBadgerEnv(t)
	seller := e.mustUser("MLA")
	var rojo []string
	for i := 0; i < 30; i++ {
		title := "Remera azul"
		if i%3 == 0 {
			title = "Remera roja"
		}
		id := e.mustPublish(seller, plainItem(title, "10", 1)).ID
		if i%3 == 0 {
			rojo = append(rojo, id)
		}
	}
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "remera roja"}), rojo)
	res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: "remera", Offset: 28, Limit: 5})
	is.NoErr(err)
	is.Equal(res.Total, 30)
	is.Equal(len(res.Results), 2)
}
