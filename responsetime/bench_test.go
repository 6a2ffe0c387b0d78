package responsetime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/memory"
)

// benchSamples returns n questions of seller spread over the 14 days before
// now, by 1,000 buyers on 100 items, two thirds answered.
func benchSamples(seller int64, n int, now time.Time, firstID int64) []questions.Sample {
	out := make([]questions.Sample, n)
	step := responsetime.ResponseTimeWindow / time.Duration(n+1)
	for i := range out {
		asked := now.Add(-responsetime.ResponseTimeWindow).Add(time.Duration(i+1) * step)
		s := questions.Sample{QuestionID: firstID + int64(i), SellerID: seller, BuyerID: int64(i % 1000),
			ItemID: fmt.Sprintf("MLA%d", i%100), Status: "UNANSWERED", Asked: asked}
		if i%3 != 0 {
			s.Status = "ANSWERED"
			s.Answered = asked.Add(time.Duration(i%600) * time.Minute)
		}
		out[i] = s
	}
	return out
}

func BenchmarkComputeResponseTime_100000Questions(b *testing.B) {
	samples := benchSamples(1, 100_000, rtNow, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := responsetime.Compute(1, samples, rtNow, ba); !ok {
			b.Fatal("no figures")
		}
	}
}

// benchRefresh measures one whole refresh (read, compute, store, clear).
func benchRefresh(b *testing.B, rts *responsetime.Service, at time.Time) {
	b.ReportAllocs()
	for b.Loop() {
		if err := rts.RefreshAt(context.Background(), at); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRefresh_FakeSource_OneSeller100000Questions(b *testing.B) {
	e := newRTEnv(b, rtNow)
	seller := e.mustSeller(b, "MLA")
	e.src.add(benchSamples(seller, 100_000, rtNow, 1)...)
	benchRefresh(b, e.rts, rtNow)
}

func BenchmarkRefresh_FakeSource_10000Sellers20Questions(b *testing.B) {
	e := newRTEnv(b, rtNow)
	for i := range 10_000 {
		e.src.add(benchSamples(int64(i+1), 20, rtNow, int64(i*20+1))...)
	}
	benchRefresh(b, e.rts, rtNow)
}

// realWorld is the questions service on the memory store, with sellers,
// items and buyers created through their services.
type realWorld struct {
	rts *responsetime.Service
	now time.Time
}

// newRealWorld creates sellers sellers with one item each and asks perSeller
// questions on each, by buyers buyers, one question a minute of the clock.
func newRealWorld(b *testing.B, sellers, perSeller, buyers int) realWorld {
	ctx := context.Background()
	st := memory.New()
	b.Cleanup(func() { _ = st.Close() })
	start := rtNow.Add(-13 * 24 * time.Hour)
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	acc := accounts.New(st, clk, g)
	stk := stock.New(st, clk, g)
	qs := questions.New(st, clk, acc, stk)
	mkUser := func() int64 {
		u, err := acc.CreateUser(ctx, accounts.NewUser{Nickname: "USER", SiteID: "MLA"})
		if err != nil {
			b.Fatal(err)
		}
		return u.ID
	}
	var buyerIDs []int64
	for range buyers {
		buyerIDs = append(buyerIDs, mkUser())
	}
	items := make([]string, sellers)
	for i := range items {
		qty := int64(5)
		p, err := stk.Publish(ctx, mkUser(), stock.NewItem{
			Title: "Guitar", CategoryID: "MLA1055", Price: money.FromInt(1500), ListingTypeID: "gold_special",
			CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"}, AvailableQuantity: &qty,
		})
		if err != nil {
			b.Fatal(err)
		}
		items[i] = p.ID
	}
	step := 12 * 24 * time.Hour / time.Duration(sellers*perSeller)
	for q := range perSeller {
		for i, item := range items {
			if _, err := qs.Ask(ctx, buyerIDs[(q*sellers+i)%buyers], questions.AskInput{Text: "Is it new?", ItemID: item}); err != nil {
				b.Fatal(err)
			}
			_ = clk.Advance(step)
		}
	}
	return realWorld{rts: responsetime.New(st, clk, g, qs), now: clk.Now()}
}

func BenchmarkRefresh_QuestionsService_OneSeller100000Questions(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 100,000 questions")
	}
	w := newRealWorld(b, 1, 100_000, 1000)
	benchRefresh(b, w.rts, w.now)
}

func BenchmarkRefresh_QuestionsService_10000Sellers20Questions(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 200,000 questions")
	}
	w := newRealWorld(b, 10_000, 20, 1000)
	benchRefresh(b, w.rts, w.now)
}
