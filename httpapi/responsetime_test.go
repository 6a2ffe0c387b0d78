package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"marketplace/questions"
)

// samplesOf is a SampleSource over a fixed list of questions.
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
	ts.m.ResponseTimes = questions.NewResponseTimes(ts.m.Store(), ts.clock, ts.m.Geo, samplesOf{
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
		{"AnyUserMayReadASellersFigures", fmt.Sprintf("/users/%d/questions/response_time", seller.ID), other.Token, 200, "", ""},
		{"SellerWithoutQuestionsIs404WithTheSpecBody", fmt.Sprintf("/users/%d/questions/response_time", quiet.ID), quiet.Token, 404,
			fmt.Sprintf(`{"message":%q,"error":"not_found","status":404,"cause":[]}`+"\n", notFound(quiet.ID)), ""},
		{"UnknownUserIs404WithTheSameBody", "/users/999999999/questions/response_time", seller.Token, 404,
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
