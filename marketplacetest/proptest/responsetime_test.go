package proptest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
)

// buenosAires is the zone of MLA sellers; Argentina keeps -03:00 all year.
var buenosAires = time.FixedZone("ART", -3*3600)

// TestResponseTime_FiguresFollowTheSpecsRules drives the engine in Go: a
// generated shop, questions and answers at generated times on the manual
// clock, then a day later (one daily refresh crossed) the figures are
// those the model computes as of that refresh.
func TestResponseTime_FiguresFollowTheSpecsRules(t *testing.T) {
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(1, 2).Draw(t, "shop")
		res, err := srv.Marketplace.LoadFixtures(ctx, shop.Doc)
		if err != nil {
			t.Fatal(err)
		}
		seller := res.Users[shop.Seller]
		var asked []proptest.Question
		for i, st := range proptest.QASteps(shop, 12).Draw(t, "steps") {
			if err := srv.Clock.Advance(st.After); err != nil {
				t.Fatal(err)
			}
			now := srv.Clock.Now()
			if !st.Answer {
				buyer, item := res.Users[shop.Buyers[st.Buyer]], res.Items[shop.Items[st.Item].Name]
				q, err := srv.Marketplace.Questions.Ask(ctx, buyer, questions.AskInput{Text: fmt.Sprintf("Question %d?", i), ItemID: item})
				if err != nil {
					t.Fatalf("step %d: ask: %v", i, err)
				}
				asked = append(asked, proptest.Question{ID: q.ID, Buyer: buyer, Item: item, Asked: now})
				continue
			}
			if st.Question >= len(asked) || !asked[st.Question].Answered.IsZero() {
				continue
			}
			q := &asked[st.Question]
			if _, err := srv.Marketplace.Questions.Answer(ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: "Yes."}); err != nil {
				t.Fatalf("step %d: answer: %v", i, err)
			}
			q.Answered = now
		}
		if err := srv.Clock.Advance(24 * time.Hour); err != nil {
			t.Fatal(err)
		}
		want, ok := proptest.ResponseTimeAt(asked, proptest.RefreshAt(srv.Clock.Now()), buenosAires)
		got, err := srv.Marketplace.ResponseTimes.Get(ctx, seller, seller)
		if !ok {
			if !errs.Is(err, errs.NotFound) {
				t.Fatalf("no question counts: got %+v, %v; want NotFound", got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("response time: %v", err)
		}
		checkFigures(t, figuresOf(got), want)
	})
}

// TestResponseTimeHTTP_FiguresFollowTheSpecsRules is the same property
// over HTTP: the clock through PUT /operator/clock, the questions through
// POST /questions and POST /answers, the figures through GET
// /users/{id}/questions/response_time.
func TestResponseTimeHTTP_FiguresFollowTheSpecsRules(t *testing.T) {
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(1, 2).Draw(t, "shop")
		var res fixtures.Result
		mustDo(t, srv.Operator, ctx, "PUT", "/operator/fixtures", shop.Doc, nil, 200, &res)
		seller := srv.Client(shop.SellerToken)
		now := srv.StartTime()
		move := func(to time.Time) {
			mustDo(t, srv.Operator, ctx, "PUT", "/operator/clock", map[string]string{"now": to.Format(time.RFC3339Nano)}, nil, 200, nil)
		}
		var asked []proptest.Question
		for i, st := range proptest.QASteps(shop, 12).Draw(t, "steps") {
			now = now.Add(st.After)
			move(now)
			if !st.Answer {
				buyer := srv.Client(shop.BuyerTokens[st.Buyer])
				item := res.Items[shop.Items[st.Item].Name]
				var q struct {
					ID int64 `json:"id"`
				}
				mustDo(t, buyer, ctx, "POST", "/questions", map[string]string{"text": fmt.Sprintf("Question %d?", i), "item_id": item}, nil, 201, &q)
				asked = append(asked, proptest.Question{ID: q.ID, Buyer: res.Users[shop.Buyers[st.Buyer]], Item: item, Asked: now})
				continue
			}
			if st.Question >= len(asked) || !asked[st.Question].Answered.IsZero() {
				continue
			}
			q := &asked[st.Question]
			mustDo(t, seller, ctx, "POST", "/answers", map[string]any{"question_id": q.ID, "text": "Yes."}, nil, 200, nil)
			q.Answered = now
		}
		now = now.Add(24 * time.Hour)
		move(now)
		want, ok := proptest.ResponseTimeAt(asked, proptest.RefreshAt(now), buenosAires)
		path := fmt.Sprintf("/users/%d/questions/response_time", res.Users[shop.Seller])
		if !ok {
			mustDo(t, seller, ctx, "GET", path, nil, nil, http.StatusNotFound, nil)
			return
		}
		var got responsetime.ResponseTime
		mustDo(t, seller, ctx, "GET", path, nil, nil, 200, &got)
		checkFigures(t, figuresOf(got), want)
	})
}

func figuresOf(rt responsetime.ResponseTime) proptest.Figures {
	return proptest.Figures{
		Total: rt.Total.ResponseTime, Weekend: rt.Weekend.ResponseTime,
		WorkingHours: rt.WeekdaysWorkingHours.ResponseTime, ExtraHours: rt.WeekdaysExtraHours.ResponseTime,
		WeekendIncrease:      rt.Weekend.SalesPercentIncrease,
		WorkingHoursIncrease: rt.WeekdaysWorkingHours.SalesPercentIncrease,
		ExtraHoursIncrease:   rt.WeekdaysExtraHours.SalesPercentIncrease,
	}
}

func checkFigures(t *rapid.T, got, want proptest.Figures) {
	t.Helper()
	show := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	line := func(f proptest.Figures) string {
		return fmt.Sprintf("total %d, weekend %d (%s), working hours %d (%s), extra hours %d (%s)",
			f.Total, f.Weekend, show(f.WeekendIncrease), f.WorkingHours, show(f.WorkingHoursIncrease),
			f.ExtraHours, show(f.ExtraHoursIncrease))
	}
	if line(got) != line(want) {
		t.Fatalf("figures:\n got  %s\n want %s", line(got), line(want))
	}
}
