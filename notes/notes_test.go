package notes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/saletest"
	"github.com/marketplace/marketplace/notes"
)

var ctx = context.Background()

func TestNotes_TheSellerWritesChangesListsAndDeletesANote(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	n, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, "Cliente pidió envolver para regalo")
	is.NoErr(err)
	is.Equal(len(n.ID), 24)
	is.Equal(n.DateCreated, "2026-03-04T15:00:00Z")
	is.Equal(n.SellerID, w.Seller)
	w.Clock.Advance(90_000_000_000)
	second, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, "second")
	is.NoErr(err)
	up, err := w.M.Notes.Update(ctx, w.Seller, notes.OnOrder, o.ID, n.ID, "changed")
	is.NoErr(err)
	is.Equal(up.Note, "changed")
	is.Equal(up.DateCreated, "2026-03-04T15:00:00Z")
	is.Equal(up.DateLastUpdated, "2026-03-04T15:01:30Z")
	list, err := w.M.Notes.List(ctx, w.Seller, notes.OnOrder, o.ID)
	is.NoErr(err)
	is.Equal(len(list), 2)
	is.Equal(list[0].ID, n.ID) // oldest first
	is.Equal(list[1].ID, second.ID)
	is.NoErr(w.M.Notes.Delete(ctx, w.Seller, notes.OnOrder, o.ID, n.ID))
	list, err = w.M.Notes.List(ctx, w.Seller, notes.OnOrder, o.ID)
	is.NoErr(err)
	is.Equal(len(list), 1)
	_, err = w.M.Notes.Get(ctx, w.Seller, notes.OnOrder, o.ID, n.ID)
	is.Equal(errs.KindOf(err), errs.NotFound)
}

func TestNotes_OnlyTheSellerOfTheSaleSeesOrWritesThem(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	n, err := w.M.Notes.Create(ctx, w.Seller, notes.OnPack, o.PackID, "from integration")
	is.NoErr(err)
	for _, who := range []int64{w.Buyer, w.Other} {
		_, err := w.M.Notes.List(ctx, who, notes.OnPack, o.PackID)
		is.Equal(errs.KindOf(err), errs.Forbidden)
		_, err = w.M.Notes.Create(ctx, who, notes.OnOrder, o.ID, "x")
		is.Equal(errs.KindOf(err), errs.Forbidden)
		_, err = w.M.Notes.Update(ctx, who, notes.OnPack, o.PackID, n.ID, "x")
		is.Equal(errs.KindOf(err), errs.Forbidden)
	}
	got, err := w.M.Notes.Get(ctx, w.Seller, notes.OnPack, o.PackID, n.ID)
	is.NoErr(err)
	is.Equal(got.Note, "from integration")
}

func TestNotes_AnEmptyOrLongerThan300CharactersNoteIsRefused(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	for _, text := range []string{"", strings.Repeat("é", 301)} {
		_, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, text)
		e := errs.As(err)
		is.True(e != nil)
		is.Equal(e.Kind, errs.Invalid)
		is.Equal(e.Message, "Note exceeds 300 characters")
	}
	_, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, strings.Repeat("é", 300))
	is.NoErr(err)
}

func TestNotes_AnUnknownOrderPackOrNoteIsNotFound(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	_, err := w.M.Notes.List(ctx, w.Seller, notes.OnOrder, o.ID+1000)
	is.Equal(errs.KindOf(err), errs.NotFound)
	_, err = w.M.Notes.List(ctx, w.Seller, notes.OnPack, o.PackID+1000)
	is.Equal(errs.KindOf(err), errs.NotFound)
	err = w.M.Notes.Delete(ctx, w.Seller, notes.OnOrder, o.ID, "ffffffffffffffffffffffff")
	is.Equal(errs.KindOf(err), errs.NotFound)
}

func TestNotes_ASaleHoldsAtMost100Notes(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	for range notes.MaxPerSale {
		_, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, "n")
		is.NoErr(err)
	}
	_, err := w.M.Notes.Create(ctx, w.Seller, notes.OnOrder, o.ID, "one more")
	is.Equal(errs.KindOf(err), errs.Invalid)
	list, err := w.M.Notes.List(ctx, w.Seller, notes.OnOrder, o.ID)
	is.NoErr(err)
	is.Equal(len(list), notes.MaxPerSale)
}
