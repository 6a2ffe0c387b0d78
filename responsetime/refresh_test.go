package responsetime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
	"github.com/marketplace/marketplace/storage"
)

// fakeSource is an in-memory SampleSource.
type fakeSource struct {
	mu       sync.Mutex
	samples  []questions.Sample
	bySeller map[int64][]int // indexes into samples
}

func (f *fakeSource) add(s ...questions.Sample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bySeller == nil {
		f.bySeller = map[int64][]int{}
	}
	for _, q := range s {
		f.bySeller[q.SellerID] = append(f.bySeller[q.SellerID], len(f.samples))
		f.samples = append(f.samples, q)
	}
}

func (f *fakeSource) SellersWithQuestionsSince(_ context.Context, since time.Time) ([]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for seller, idx := range f.bySeller {
		for _, i := range idx {
			if !f.samples[i].Asked.Before(since) {
				out = append(out, seller)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeSource) SellerSamplesSince(_ context.Context, sellerID int64, since time.Time) ([]questions.Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []questions.Sample
	for _, i := range f.bySeller[sellerID] {
		if !f.samples[i].Asked.Before(since) {
			out = append(out, f.samples[i])
		}
	}
	slices.SortStableFunc(out, func(a, b questions.Sample) int { return a.Asked.Compare(b.Asked) })
	return out, nil
}

// rtEnv is a ResponseTimes over the memory store and a fake source, with a
// manual clock and sellers created in accounts.
type rtEnv struct {
	store storage.Store
	clock *clock.Manual
	acc   *accounts.Service
	src   *fakeSource
	rts   *responsetime.Service
}

// rtFataler is what the helpers need of a *testing.T or a *rapid.T.
type rtFataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newRTEnv(t testing.TB, start time.Time) *rtEnv {
	t.Helper()
	return newRTEnvOn(teststore.New(t), start)
}

// newPropertyRTEnv is newRTEnv for one iteration of a property test: the
// iteration closes it with the returned function before it ends.
func newPropertyRTEnv(t *rapid.T, owner testing.TB, start time.Time) (*rtEnv, func()) {
	st, done := teststore.Open(t, owner)
	return newRTEnvOn(st, start), done
}

func newRTEnvOn(st storage.Store, start time.Time) *rtEnv {
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	e := &rtEnv{store: st, clock: clk, acc: accounts.New(st, clk, g), src: &fakeSource{}}
	e.rts = responsetime.New(st, clk, g, e.src)
	return e
}

func (e *rtEnv) mustSeller(t rtFataler, site string) int64 {
	t.Helper()
	u, err := e.acc.CreateUser(context.Background(), accounts.NewUser{Nickname: "SELLER", SiteID: site})
	if err != nil {
		t.Fatalf("create seller: %v", err)
	}
	return u.ID
}

// ask is a question to seller, asked at asked and answered after wait (0:
// unanswered).
func ask(id, seller, buyer int64, item string, asked time.Time, wait time.Duration) questions.Sample {
	s := sample(id, buyer, item, asked, wait)
	s.SellerID = seller
	return s
}

func wantNotFound(t testing.TB, rts *responsetime.Service, seller int64) {
	t.Helper()
	_, err := rts.Get(context.Background(), seller, seller)
	e := errs.As(err)
	if e == nil || e.Kind != errs.NotFound || e.Code != "not_found" {
		t.Fatalf("Get(%d) error = %v, want not_found", seller, err)
	}
}

func TestGet_SellerWithoutFiguresIsNotFoundWithTheSpecMessage(t *testing.T) {
	is := is.New(t)
	e := newRTEnv(t, rtNow)
	_, err := e.rts.Get(context.Background(), 123, 123)
	de := errs.As(err)
	is.True(de != nil)
	is.Equal(de.Kind, errs.NotFound)
	is.Equal(de.Code, "not_found")
	is.Equal(de.Message, "Response time not found for user id: 123")
	is.Equal(len(de.Causes), 0)
}

func TestRefresh_StoresEachSellersFiguresAndGetServesThemUntilTheNextRefresh(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	a, b := e.mustSeller(t, "MLA"), e.mustSeller(t, "MLA")
	e.src.add(
		ask(1, a, 10, "MLA1", baTime(time.February, 28, 10, 0), 45*time.Minute),
		ask(2, b, 10, "MLA1", baTime(time.March, 2, 10, 0), 90*time.Minute),
	)
	is.NoErr(e.rts.Refresh(ctx))
	got, err := e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(got.UserID, a)
	is.Equal(figuresOf(got), figures{45, 45, 0, 0})
	got, err = e.rts.Get(ctx, b, b)
	is.NoErr(err)
	is.Equal(figuresOf(got), figures{90, 0, 90, 0})
	is.Equal(*got.WeekdaysWorkingHours.SalesPercentIncrease, int64(5))
	last, ok, err := e.rts.LastRefresh(ctx)
	is.NoErr(err)
	is.True(ok)
	is.True(last.Equal(rtNow))

	// A new question changes nothing until the next refresh: a read is a
	// lookup of the stored figures, not a computation.
	e.src.add(ask(3, a, 11, "MLA1", baTime(time.February, 28, 11, 0), 135*time.Minute))
	got, err = e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(figuresOf(got), figures{45, 45, 0, 0})
	is.NoErr(e.rts.Refresh(ctx))
	got, err = e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(figuresOf(got), figures{90, 90, 0, 0})
}

func TestRefresh_ClearsSellersWhoseQuestionsLeftTheWindow(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	a, b := e.mustSeller(t, "MLA"), e.mustSeller(t, "MLA")
	e.src.add(
		ask(1, a, 10, "MLA1", rtNow.Add(-13*24*time.Hour), time.Hour),
		ask(2, b, 10, "MLA1", rtNow.Add(-time.Hour), 30*time.Minute),
	)
	is.NoErr(e.rts.Refresh(ctx))
	_, err := e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.NoErr(e.clock.Advance(2 * 24 * time.Hour))
	is.NoErr(e.rts.Refresh(ctx))
	wantNotFound(t, e.rts, a)
	_, err = e.rts.Get(ctx, b, b)
	is.NoErr(err)
}

func TestRefresh_SellerWithOnlyExcludedQuestionsIsNotFound(t *testing.T) {
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	a := e.mustSeller(t, "MLA")
	deleted := ask(1, a, 10, "MLA1", rtNow.Add(-time.Hour), 0)
	deleted.Status = "DELETED"
	e.src.add(deleted)
	if err := e.rts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, e.rts, a)
}

func TestRefresh_PeriodsFollowEachSellersSiteTimeZone(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	mla, mlm := e.mustSeller(t, "MLA"), e.mustSeller(t, "MLM")
	unknown := int64(999999) // no user record: read in UTC
	// Wednesday 4 March 13:00 UTC: 10:00 in Buenos Aires (working hours),
	// 07:00 in Mexico City (no period), 13:00 UTC (working hours).
	asked := time.Date(2026, 3, 4, 13, 0, 0, 0, time.UTC)
	e.src.add(
		ask(1, mla, 10, "MLA1", asked, 20*time.Minute),
		ask(2, mlm, 10, "MLM1", asked, 20*time.Minute),
		ask(3, unknown, 10, "MLA2", asked, 20*time.Minute),
	)
	is.NoErr(e.rts.RefreshAt(ctx, asked.Add(time.Hour)))
	for _, c := range []struct {
		seller int64
		want   figures
	}{{mla, figures{20, 0, 20, 0}}, {mlm, figures{20, 0, 0, 0}}, {unknown, figures{20, 0, 20, 0}}} {
		got, err := e.rts.Get(ctx, c.seller, c.seller)
		is.NoErr(err)
		is.Equal(figuresOf(got), c.want)
	}
}

func TestRefreshAt_FiguresAreThoseOfTheCalculationTime(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	a := e.mustSeller(t, "MLA")
	e.src.add(
		ask(1, a, 10, "MLA1", rtNow.Add(-2*time.Hour), 3*time.Hour), // answered after the calculation time
		ask(2, a, 11, "MLA1", rtNow.Add(time.Hour), time.Minute),    // asked after it
	)
	is.NoErr(e.rts.RefreshAt(ctx, rtNow))
	got, err := e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(got.Total.ResponseTime, int64(120))
}

func TestLatestScheduledRefresh_IsThreeInTheMorningInBuenosAires(t *testing.T) {
	cases := []struct {
		name string
		t    time.Time
		want time.Time
	}{
		{"after the hour", baTime(time.March, 4, 12, 0), baTime(time.March, 4, 3, 0)},
		{"at the hour", baTime(time.March, 4, 3, 0), baTime(time.March, 4, 3, 0)},
		{"just before the hour", baTime(time.March, 4, 3, 0).Add(-time.Nanosecond), baTime(time.March, 3, 3, 0)},
		{"across a month", baTime(time.March, 1, 2, 0), baTime(time.February, 28, 3, 0)},
		{"given in another zone", time.Date(2026, 3, 4, 5, 59, 0, 0, time.UTC), baTime(time.March, 3, 3, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := responsetime.LatestScheduledRefresh(c.t); !got.Equal(c.want) {
				t.Fatalf("LatestScheduledRefresh(%v) = %v, want %v", c.t, got, c.want)
			}
			if got := responsetime.NextScheduledRefresh(c.t); !got.Equal(c.want.Add(24 * time.Hour)) {
				t.Fatalf("NextScheduledRefresh(%v) = %v, want %v", c.t, got, c.want.Add(24*time.Hour))
			}
		})
	}
}

func TestRefreshIfDue_RunsOnceForEachScheduledInstant(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	ran, err := e.rts.RefreshIfDue(ctx, rtNow)
	is.NoErr(err)
	is.True(ran) // no refresh stored yet
	last, _, _ := e.rts.LastRefresh(ctx)
	is.True(last.Equal(baTime(time.March, 4, 3, 0)))
	ran, err = e.rts.RefreshIfDue(ctx, rtNow.Add(time.Hour))
	is.NoErr(err)
	is.True(!ran) // today's is done
	ran, err = e.rts.RefreshIfDue(ctx, baTime(time.March, 5, 3, 0).Add(-time.Second))
	is.NoErr(err)
	is.True(!ran)
	ran, err = e.rts.RefreshIfDue(ctx, baTime(time.March, 5, 3, 0))
	is.NoErr(err)
	is.True(ran)
}

func TestFollowManual_CrossingTheRefreshHourRunsTheRefreshAtThatHour(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, baTime(time.March, 4, 3, 0)) // refreshed already at this instant
	is.NoErr(e.rts.RefreshAt(ctx, e.clock.Now()))
	var failures []error
	stop := e.rts.FollowManual(e.clock, func(err error) { failures = append(failures, err) })
	a := e.mustSeller(t, "MLA")
	e.src.add(ask(1, a, 10, "MLA1", baTime(time.March, 4, 10, 0), 0)) // Wednesday 10:00, unanswered

	is.NoErr(e.clock.Set(baTime(time.March, 5, 2, 59)))
	wantNotFound(t, e.rts, a) // the hour is not crossed yet

	is.NoErr(e.clock.Set(baTime(time.March, 5, 9, 0)))
	got, err := e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(figuresOf(got), figures{17 * 60, 0, 17 * 60, 0}) // Wednesday 10:00 to Thursday 03:00

	stop()
	is.NoErr(e.clock.Set(baTime(time.March, 7, 9, 0)))
	got, err = e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(got.Total.ResponseTime, int64(17*60)) // no longer followed
	is.Equal(len(failures), 0)
}

func TestFollowManual_AJumpOverSeveralDaysRunsOneRefreshAtTheLatestHour(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	e.rts.FollowManual(e.clock, nil)
	a := e.mustSeller(t, "MLA")
	e.src.add(ask(1, a, 10, "MLA1", rtNow, 0))
	is.NoErr(e.clock.Advance(3*24*time.Hour + 5*time.Hour))
	last, _, err := e.rts.LastRefresh(ctx)
	is.NoErr(err)
	is.True(last.Equal(baTime(time.March, 7, 3, 0)))
	got, err := e.rts.Get(ctx, a, a)
	is.NoErr(err)
	is.Equal(got.Total.ResponseTime, int64(2*1440+15*60)) // Wednesday 12:00 to Saturday 03:00
}

func TestRun_RefreshesAtStartWhenTheLatestRefreshIsMissing(t *testing.T) {
	is := is.New(t)
	e := newRTEnv(t, rtNow)
	a := e.mustSeller(t, "MLA")
	e.src.add(ask(1, a, 10, "MLA1", rtNow.Add(-24*time.Hour), time.Hour))
	// A clock that is not manual: Run also arms its timer for the next day.
	rts := responsetime.New(e.store, clock.Func(func() time.Time { return rtNow }), nil, e.src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- rts.Run(ctx, func(err error) {
			if err != nil {
				t.Errorf("refresh: %v", err)
			}
		})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok, _ := rts.LastRefresh(context.Background()); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no refresh at start")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	is.True(errors.Is(<-done, context.Canceled))
	got, err := rts.Get(context.Background(), a, a)
	is.NoErr(err)
	is.Equal(got.Total.ResponseTime, int64(60))
}

func TestGet_AnySignedInUserMayReadAnySellersResponseTime(t *testing.T) {
	ctx := context.Background()
	e := newRTEnv(t, rtNow)
	seller, other := e.mustSeller(t, "MLA"), e.mustSeller(t, "MLA")
	e.src.add(ask(1, seller, other, "MLA1", baTime(time.February, 28, 10, 0), 45*time.Minute))
	if err := e.rts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, reader := range []struct {
		name   string
		caller int64
	}{{"TheSeller", seller}, {"AnotherUser", other}} {
		t.Run(reader.name, func(t *testing.T) {
			got, err := e.rts.Get(ctx, reader.caller, seller)
			if err != nil || got.UserID != seller || got.Total.ResponseTime != 45 {
				t.Fatalf("Get by %d = %+v, %v; want the seller's figures", reader.caller, got, err)
			}
		})
	}
	for _, c := range []struct {
		name           string
		caller, seller int64
		kind           errs.Kind
		message        string
	}{
		{"ErrNotAUser", 0, seller, errs.Forbidden, "A response time is read with a user's access token"},
		{"ErrUnknownSeller", other, 999999999, errs.NotFound, "Response time not found for user id: 999999999"},
		{"ErrSellerIDNotPositiveBeforeTheCaller", other, 0, errs.Invalid, "Invalid user_id: 0. It must be a positive integer"},
		{"ErrNegativeSellerID", -seller, -seller, errs.Invalid, fmt.Sprintf("Invalid user_id: %d. It must be a positive integer", -seller)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.rts.Get(ctx, c.caller, c.seller)
			de := errs.As(err)
			if de == nil || de.Kind != c.kind || de.Message != c.message {
				t.Fatalf("Get(caller %d, seller %d) error = %v; want %v %q", c.caller, c.seller, err, c.kind, c.message)
			}
		})
	}
}
