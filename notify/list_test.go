package notify_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
)

func TestApplications_ListsEveryApplicationInIdOrderOrAnOwnersOnly(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	ann, bob := e.mustUser(), e.mustUser()
	a1 := e.mustApp(ann, "https://example.com/a1")
	b1 := e.mustApp(bob, "https://example.com/b1")
	a2 := e.mustApp(ann, "https://example.com/a2")

	all, total, err := e.m.Notify.Applications(e.ctx, notify.AppQuery{Limit: 50})
	is.NoErr(err)
	is.Equal(total, 3)                                                               // every application
	is.Equal([]int64{all[0].ID, all[1].ID, all[2].ID}, []int64{a1.ID, b1.ID, a2.ID}) // id order
	is.Equal(all[0].CallbackURL, "https://example.com/a1")                           // whole records
	is.Equal(all[0].ClientSecret, "")                                                // the client secret is shown only once, at creation

	mine, total, err := e.m.Notify.Applications(e.ctx, notify.AppQuery{OwnerUserID: ann, Limit: 50})
	is.NoErr(err)
	is.Equal(total, 2) // only ann's
	is.Equal([]int64{mine[0].ID, mine[1].ID}, []int64{a1.ID, a2.ID})

	page, total, err := e.m.Notify.Applications(e.ctx, notify.AppQuery{Offset: 2, Limit: 5})
	is.NoErr(err)
	is.Equal(total, 3) // the total ignores the window
	is.Equal(len(page), 1)
	is.Equal(page[0].ID, a2.ID)

	none, total, err := e.m.Notify.Applications(e.ctx, notify.AppQuery{OwnerUserID: 999999999, Limit: 5})
	is.NoErr(err)
	is.Equal(total, 0)
	is.True(none != nil) // an empty list, not null
}

func TestApplications_AWindowOutsideThePagingRuleIsInvalid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	_, _, err := e.m.Notify.Applications(e.ctx, notify.AppQuery{Offset: -1, Limit: 5})
	is.True(errs.Is(err, errs.Invalid))
	is.Equal(errs.As(err).Message, "Invalid offset: -1. It must be a non-negative integer")
}
