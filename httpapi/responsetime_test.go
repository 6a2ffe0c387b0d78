package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
)

// samplesOf is a responsetime.SampleSource over a fixed list of questions.
type samplesOf []questions.Sample

func (s samplesOf) SellersWithQuestionsSince(_ context.Context, since time.Time) ([]int64, error) {
	var out []int64
	for _, q := range s {
		if !q.Asked.Before(since) && (len(out) == 0 || out[len(out)-1] != q.SellerID) {
			out = append(out, q.SellerID)
		}
	}
	return out, nil
}

func (s samplesOf) SellerSamplesSince(_ context.Context, seller int64, since time.Time) ([]questions.Sample, error) {
	var out []questions.Sample
	for _, q := range s {
		if q.SellerID == seller && !q.Asked.Before(since) {
			out = append(out, q)
		}
	}
	return out, nil
}

func TestGetResponseTime(t *testing.T) {
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	quiet := ts.mustUser("MLA")
	other := ts.mustUser("MLB")
	// testStart is Wednesday 4 March 2026, 12:00 in Buenos Aires.
	ts.m.ResponseTimes = responsetime.New(ts.m.Store(), ts.clock, ts.m.Geo, samplesOf{
		{QuestionID: 1, SellerID: seller.ID, BuyerID: other.ID, ItemID: "MLA1", Status: "ANSWERED",
			Asked: testStart.Add(-4 * 24 * time.Hour), Answered: testStart.Add(-4*24*time.Hour + 45*time.Minute)}, // Saturday
		{QuestionID: 2, SellerID: seller.ID, BuyerID: other.ID, ItemID: "MLA2", Status: "UNANSWERED",
			Asked: testStart.Add(-2 * time.Hour)}, // Wednesday 10:00, open two hours
	})
	if err := ts.m.ResponseTimes.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	notFound := func(id any) string { return fmt.Sprintf("Response time not found for user id: %v", id) }
	cases := []struct {
		name       string
		path       string
		token      string
		wantStatus int
		wantBody   string // exact body for 200 and for the spec's 404
		wantMsg    string
	}{
		{"SellerReadsOwnFigures", fmt.Sprintf("/users/%d/questions/response_time", seller.ID), seller.Token, 200,
			fmt.Sprintf(`{"user_id":%d,"total":{"response_time":83},`+
				`"weekend":{"response_time":45,"sales_percent_increase":null},`+
				`"weekdays_working_hours":{"response_time":120,"sales_percent_increase":5},`+
				`"weekdays_extra_hours":{"response_time":0,"sales_percent_increase":null}}`+"\n", seller.ID), ""},
		{"AnotherUserReadsTheSellersFigures", fmt.Sprintf("/users/%d/questions/response_time", seller.ID), other.Token, 200,
			fmt.Sprintf(`{"user_id":%d,"total":{"response_time":83},`+
				`"weekend":{"response_time":45,"sales_percent_increase":null},`+
				`"weekdays_working_hours":{"response_time":120,"sales_percent_increase":5},`+
				`"weekdays_extra_hours":{"response_time":0,"sales_percent_increase":null}}`+"\n", seller.ID), ""},
		{"SellerWithoutQuestionsIs404WithTheSpecBody", fmt.Sprintf("/users/%d/questions/response_time", quiet.ID), quiet.Token, 404,
			fmt.Sprintf(`{"message":%q,"error":"not_found","status":404,"cause":[]}`+"\n", notFound(quiet.ID)), ""},
		{"UnknownUserIs404WithTheSpecBody", "/users/999999999/questions/response_time", seller.Token, 404,
			fmt.Sprintf(`{"message":%q,"error":"not_found","status":404,"cause":[]}`+"\n", notFound(999999999)), ""},
		{"NoTokenIs401", fmt.Sprintf("/users/%d/questions/response_time", seller.ID), "", 401, "", ""},
		{"BadTokenIs401", fmt.Sprintf("/users/%d/questions/response_time", seller.ID), "APP_USR-nope", 401, "", ""},
		{"NonNumericUserIdIs400", "/users/abc/questions/response_time", seller.Token, 400, "", "Invalid user_id: abc. It must be a positive integer"},
		{"ZeroUserIdIs400", "/users/0/questions/response_time", seller.Token, 400, "", "Invalid user_id: 0. It must be a positive integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			res := ts.do("GET", c.path, c.token, nil)
			if c.wantStatus != 200 {
				wantError(t, res, c.wantStatus, c.wantMsg)
			}
			is.Equal(res.Status, c.wantStatus)
			is.Equal(res.Header.Get("Content-Type"), "application/json; charset=utf-8")
			if c.wantBody != "" {
				is.Equal(string(res.Raw), c.wantBody)
			}
		})
	}
}

func TestGetResponseTime_WrongMethodIs405(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	wantError(t, ts.do("POST", fmt.Sprintf("/users/%d/questions/response_time", u.ID), u.Token, map[string]any{}), http.StatusMethodNotAllowed, "")
}

// TestResponseTime_EndToEndFollowsQuestionsAnswersAndTheManualClock asks and
// answers through the API, moves the manual clock across the daily refresh
// hour and reads the figures the refresh stored.
func TestResponseTime_EndToEndFollowsQuestionsAnswersAndTheManualClock(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	path := fmt.Sprintf("/users/%d/questions/response_time", w.seller.ID)
	setClock := func(now string) {
		t.Helper()
		res := w.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": now})
		if res.Status != http.StatusOK {
			t.Fatalf("set clock: %d %s", res.Status, res.Raw)
		}
	}
	figures := func() map[string]any {
		t.Helper()
		res := w.do("GET", path, w.seller.Token, nil)
		if res.Status != http.StatusOK {
			t.Fatalf("response time: %d %s", res.Status, res.Raw)
		}
		return res.Obj()
	}
	period := func(minutes, sales any) map[string]any {
		return map[string]any{"response_time": minutes, "sales_percent_increase": sales}
	}

	// Wednesday 4 March, 12:00 in Buenos Aires: working hours.
	first := w.mustAsk(w.buyer, w.item, "Does it come with a case?")
	setClock("2026-03-04T12:45:00-03:00")
	w.mustAnswer(first, "Yes.")
	w.mustAsk(w.buyer, w.item, "And a strap?") // the buyer's second question on the item: ignored
	open := w.mustAsk(w.other, w.item, "Is it left-handed?")

	// No refresh has run yet.
	res := w.do("GET", path, w.seller.Token, nil)
	is.Equal(res.Status, http.StatusNotFound)
	is.Equal(string(res.Raw), fmt.Sprintf(`{"message":"Response time not found for user id: %d","error":"not_found","status":404,"cause":[]}`+"\n", w.seller.ID))

	// Crossing Thursday 03:00 runs the refresh at 03:00: 45 minutes, and
	// 14 h 15 min for the open question (Wednesday 12:45 to Thursday 03:00).
	setClock("2026-03-05T09:00:00-03:00")
	is.Equal(figures(), map[string]any{
		"user_id":                float64(w.seller.ID),
		"total":                  map[string]any{"response_time": float64(450)},
		"weekend":                period(float64(0), nil),
		"weekdays_working_hours": period(float64(450), float64(35)),
		"weekdays_extra_hours":   period(float64(0), nil),
	})

	// An answer changes nothing until the next refresh.
	w.mustAnswer(open, "No.")
	is.Equal(figures()["total"], map[string]any{"response_time": float64(450)})
	setClock("2026-03-06T03:00:00-03:00")
	is.Equal(figures()["weekdays_working_hours"], period(float64(630), float64(50))) // (45 + 1215) / 2

	// Sixteen days later every question has left the window.
	setClock("2026-03-22T03:00:00-03:00")
	wantError(t, w.do("GET", path, w.seller.Token, nil), http.StatusNotFound,
		fmt.Sprintf("Response time not found for user id: %d", w.seller.ID))
}

// BenchmarkGetResponseTime compares GET /users/:user_id/questions/response_time
// through the whole stack (routing, token lookup, one key read, JSON) with a
// bare httprouter handler answering the same bytes.
func BenchmarkGetResponseTime(b *testing.B) {
	w := newQWorld(b)
	w.mustAsk(w.buyer, w.item, "Does it come with a case?")
	if err := w.clock.Advance(24 * time.Hour); err != nil { // crosses the refresh hour
		b.Fatal(err)
	}
	path := fmt.Sprintf("/users/%d/questions/response_time", w.seller.ID)
	res := w.do("GET", path, w.seller.Token, nil)
	if res.Status != http.StatusOK {
		b.Fatalf("response time: %d %s", res.Status, res.Raw)
	}
	b.Run("stack", func(b *testing.B) { benchServe(b, w.handler, "GET", path, w.seller.Token) })
	b.Run("bare", func(b *testing.B) {
		benchServe(b, bareHandler("GET", "/users/:user_id/questions/response_time", res.Raw), "GET", path, w.seller.Token)
	})
}
