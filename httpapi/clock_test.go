package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/memory"
)

func TestClockRoutes(t *testing.T) {
	ts := newTestServer(t)
	buyer := ts.mustUser("MLA")
	cases := []struct {
		name       string
		method     string
		token      string
		body       any
		wantStatus int
		wantNow    string // the answer's now, or the error message
	}{
		{"GetAnswersTheManualTime", "GET", testOperatorToken, nil, 200, "2026-03-04T15:00:00Z"},
		{"GetWithoutTokenIs401", "GET", "", nil, 401, ""},
		{"GetWithUserTokenIs403", "GET", buyer.Token, nil, 403, "Operator routes need the operator token"},
		{"PutWithUserTokenIs403", "PUT", buyer.Token, map[string]any{"now": "2026-03-05T15:00:00Z"}, 403, "Operator routes need the operator token"},
		{"PutMissingNowIs400", "PUT", testOperatorToken, map[string]any{}, 400, "The fields [now] are required for requested call"},
		{"PutNowNotAStringIs400", "PUT", testOperatorToken, map[string]any{"now": 12}, 400, "Invalid JSON: the field [now] must be of type string"},
		{"PutNowNotRFC3339Is400", "PUT", testOperatorToken, map[string]any{"now": "tomorrow"}, 400, `Invalid now: "tomorrow". It must be an RFC 3339 time, such as 2026-03-04T12:00:00-03:00`},
		{"PutMalformedJSONIs400", "PUT", testOperatorToken, `{"now":`, 400, ""},
		{"PutStringBodyIs400", "PUT", testOperatorToken, `"2026-03-05T15:00:00Z"`, 400, "Malformed JSON body: a JSON object is expected"},
		{"PutEmptyBodyIs400", "PUT", testOperatorToken, "", 400, "The request body is empty; a JSON object is expected"},
		{"PutBackwardsIs400", "PUT", testOperatorToken, map[string]any{"now": "2026-03-04T14:59:59.999Z"}, 400, "The clock cannot move backwards: it is 2026-03-04T15:00:00Z"},
		{"PutTheSameTimeIsAllowed", "PUT", testOperatorToken, map[string]any{"now": "2026-03-04T12:00:00-03:00"}, 200, "2026-03-04T15:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			body := c.body
			if s, ok := body.(string); ok && s == "" {
				body = []byte{}
			}
			res := ts.do(c.method, "/operator/clock", c.token, body)
			if c.wantStatus != 200 {
				wantError(t, res, c.wantStatus, c.wantNow)
			} else {
				is.Equal(res.Status, 200)
				is.Equal(res.Header.Get("Content-Type"), "application/json; charset=utf-8")
				is.Equal(res.Obj(), map[string]any{"now": c.wantNow})
			}
			is.Equal(ts.clock.Now().UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), "2026-03-04T15:00:00Z") // nothing moved
		})
	}
}

func TestPutClock_MovesTheClockForwardAndGetReadsIt(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	res := ts.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2026-03-05T10:30:00.5-03:00"})
	is.Equal(res.Status, 200)
	is.Equal(res.Obj(), map[string]any{"now": "2026-03-05T13:30:00.5Z"})
	is.True(ts.clock.Now().Equal(testStart.Add(22*3600e9 + 30*60e9 + 5e8))) // the engine's clock moved
	res = ts.do("GET", "/operator/clock", testOperatorToken, nil)
	is.Equal(res.Obj(), map[string]any{"now": "2026-03-05T13:30:00.5Z"})
	// The time read can be written back unchanged.
	res = ts.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2026-03-05T13:30:00.5Z"})
	is.Equal(res.Status, 200)
}

func TestClockRoutes_OnTheWallClockAnswer409(t *testing.T) {
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ts := &testServer{t: t, m: m, handler: httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken}))}
	const msg = "The server runs on the wall clock; start it with -clock manual to read and move its clock"
	wantError(t, ts.do("GET", "/operator/clock", testOperatorToken, nil), http.StatusConflict, msg)
	wantError(t, ts.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2030-01-01T00:00:00Z"}), http.StatusConflict, msg)
	if res := ts.do("GET", "/operator/clock", testOperatorToken, nil); res.Obj()["error"] != "conflict" {
		t.Fatalf("error code = %v, want conflict", res.Obj()["error"])
	}
}

// TestClockRoutes_TheEnginesManualClockIsFoundWithoutBeingGivenTwice: an
// engine on a manual clock needs no ManualClock in the HTTP config.
func TestClockRoutes_TheEnginesManualClockIsFoundWithoutBeingGivenTwice(t *testing.T) {
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ts := &testServer{t: t, m: m, handler: httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken}))}
	res := ts.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2026-03-05T10:30:00Z"})
	if res.Status != http.StatusOK {
		t.Fatalf("PUT /operator/clock: %d %s", res.Status, res.Raw)
	}
	if !clk.Now().Equal(time.Date(2026, 3, 5, 10, 30, 0, 0, time.UTC)) {
		t.Fatalf("the engine's clock reads %s", clk.Now())
	}
}

func TestOperatorReset_ClockParameterSetsTheClockBackWithTheState(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	is.NoErr(ts.clock.Advance(72 * time.Hour))
	res := ts.do("POST", "/operator/reset?clock=2026-03-04T12:00:00-03:00", testOperatorToken, nil)
	is.Equal(res.Status, http.StatusNoContent)
	is.True(ts.clock.Now().Equal(testStart)) // the clock is back at the start
	is.Equal(ts.operator("GET", "/operator/clock", nil).Obj()["now"], "2026-03-04T15:00:00Z")
	is.Equal(ts.operator("GET", "/operator/users/"+strconv.FormatInt(u.ID, 10), nil).Status, http.StatusNotFound) // the state went with it
}

func TestOperatorRestore_ClockParameterSetsTheClockBackWithTheState(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	snap := ts.operator("POST", "/operator/snapshots", nil)
	is.Equal(snap.Status, http.StatusCreated)
	is.NoErr(ts.clock.Advance(time.Hour))
	res := ts.do("POST", "/operator/snapshots/"+strconv.FormatInt(int64(snap.Obj()["id"].(float64)), 10)+"/restore?clock=2026-03-04T15:00:00Z", testOperatorToken, nil)
	is.Equal(res.Status, http.StatusNoContent)
	is.True(ts.clock.Now().Equal(testStart))
}

func TestOperatorReset_MalformedClockIsRefusedAndChangesNothing(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("POST", "/operator/reset?clock=yesterday", testOperatorToken, nil)
	wantError(t, res, http.StatusBadRequest, `Invalid clock: "yesterday". It must be an RFC 3339 time, such as 2026-03-04T12:00:00-03:00`)
	is.Equal(ts.operator("GET", "/operator/users/"+strconv.FormatInt(u.ID, 10), nil).Status, http.StatusOK) // nothing was reset
}
