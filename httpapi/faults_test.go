package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/storage/memory"
)

func (ts *testServer) mustFault(rule map[string]any) map[string]any {
	ts.t.Helper()
	return createFault(ts, rule)
}

func createFault(s operatorAPI, rule map[string]any) map[string]any {
	s.tb().Helper()
	res := s.operator("POST", "/operator/faults", rule)
	if res.Status != http.StatusCreated {
		s.tb().Fatalf("create fault %v: %d %s", rule, res.Status, res.Raw)
	}
	return res.Obj()
}

func TestFaultsAPI_CreateListGetDelete(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	r := ts.mustFault(map[string]any{"method": "get", "route": "/users/{seller_id}", "status": 503, "times": 2})
	is.Equal(r["method"], "GET")
	is.Equal(r["route"], "/users/{seller_id}") // the spec's parameter name is accepted
	is.Equal(r["status"], float64(503))
	is.Equal(r["times"], float64(2))
	is.Equal(r["probability"], float64(1))
	is.Equal(r["user_id"], nil)
	is.Equal(r["body"], map[string]any{"message": "Service not available", "error": "service_not_available", "status": float64(503), "cause": []any{}})
	id := int64(r["id"].(float64))

	list := ts.do("GET", "/operator/faults", testOperatorToken, nil)
	is.Equal(list.Status, http.StatusOK)
	is.Equal(len(list.Obj()["results"].([]any)), 1)
	one := ts.do("GET", fmt.Sprintf("/operator/faults/%d", id), testOperatorToken, nil)
	is.Equal(one.Status, http.StatusOK)
	is.Equal(one.Obj()["id"], r["id"])

	del := ts.do("DELETE", fmt.Sprintf("/operator/faults/%d", id), testOperatorToken, nil)
	is.Equal(del.Status, http.StatusOK)
	is.Equal(del.Obj(), map[string]any{"id": float64(id), "deleted": true})
	wantError(t, ts.do("DELETE", fmt.Sprintf("/operator/faults/%d", id), testOperatorToken, nil), 404, fmt.Sprintf("Fault rule %d not found", id))
	wantError(t, ts.do("GET", fmt.Sprintf("/operator/faults/%d", id), testOperatorToken, nil), 404, fmt.Sprintf("Fault rule %d not found", id))

	ts.mustFault(map[string]any{"status": 500})
	ts.mustFault(map[string]any{"latency_ms": 5})
	all := ts.do("DELETE", "/operator/faults", testOperatorToken, nil)
	is.Equal(all.Obj(), map[string]any{"deleted": float64(2)})
	list = ts.do("GET", "/operator/faults", testOperatorToken, nil)
	is.Equal(list.Obj()["results"], []any{})
}

func TestFaultsAPI_BadRulesAre400AndNeedTheOperator(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, tc := range []struct {
		name  string
		token string
		body  any
		code  int
		msg   string
	}{
		{"UnknownRoute", testOperatorToken, map[string]any{"route": "/questoins/{id}", "status": 500}, 400, "Invalid route: /questoins/{id}. No route of the API has that template"},
		{"OperatorRoute", testOperatorToken, map[string]any{"route": "/operator/faults", "status": 500}, 400, "Invalid route: /operator/faults. Operator routes are never faulted"},
		{"NothingToDo", testOperatorToken, map[string]any{"route": "/health"}, 400, "The fields [status, fault, latency_ms, bytes_per_second or requests_per_minute] are required for requested call: a rule must answer a status, fault the wire, add latency, trickle the answer or limit a rate"},
		{"StatusNotAnError", testOperatorToken, map[string]any{"status": 302}, 400, "Invalid status: 302. It must be an error status, from 400 to 599"},
		{"StatusNotANumber", testOperatorToken, map[string]any{"status": "500"}, 400, "Invalid JSON: the field [status] must be of type integer"},
		{"UserToken", u.Token, map[string]any{"status": 500}, 403, "Operator routes need the operator token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, ts.do("POST", "/operator/faults", tc.token, tc.body), tc.code, tc.msg)
		})
	}
	list := ts.do("GET", "/operator/faults", testOperatorToken, nil)
	if got := list.Obj()["results"].([]any); len(got) != 0 {
		t.Fatalf("refused rules were stored: %v", got)
	}
}

func TestFaults_FaultedWriteChangesNothingAndTimesCountDown(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, buyer := ts.mustUser("MLA"), ts.mustUser("MLA")
	bl := fmt.Sprintf("/users/%d/questions_blacklist", seller.ID)
	ts.mustFault(map[string]any{"method": "POST", "route": "/users/{user_id}/questions_blacklist", "status": 500, "times": 1})

	res := ts.do("POST", bl, seller.Token, map[string]any{"user_id": buyer.ID})
	is.Equal(res.Status, 500)
	is.Equal(string(res.Raw), `{"message":"Internal Server Error","error":"internal_server_error","status":500,"cause":[]}`+"\n")
	is.Equal(ts.do("GET", bl, seller.Token, nil).Obj()["users"], []any{}) // the faulted POST changed nothing

	res = ts.do("POST", bl, seller.Token, map[string]any{"user_id": buyer.ID})
	is.Equal(res.Status, http.StatusCreated) // the one time is used: served
	is.Equal(len(ts.do("GET", bl, seller.Token, nil).Obj()["users"].([]any)), 1)
	is.Equal(ts.do("GET", "/operator/faults", testOperatorToken, nil).Obj()["results"], []any{}) // used up and removed
}

func TestFaults_OperatorRoutesAreNeverFaulted(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	ts.mustFault(map[string]any{"status": 503})
	is.Equal(ts.do("GET", "/health", "", nil).Status, 503)
	is.Equal(ts.do("GET", "/operator/faults", testOperatorToken, nil).Status, http.StatusOK)
	is.Equal(ts.do("DELETE", "/operator/faults", testOperatorToken, nil).Status, http.StatusOK)
	is.Equal(ts.do("GET", "/health", "", nil).Status, http.StatusOK)
}

func TestFaults_RuleForOneUserFaultsOnlyThatUser(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	a, b := ts.mustUser("MLA"), ts.mustUser("MLA")
	ts.mustFault(map[string]any{"user_id": a.ID, "status": 429})
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", a.ID), a.Token, nil).Status, 429)
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", b.ID), b.Token, nil).Status, http.StatusOK)
	is.Equal(ts.do("GET", "/health", "", nil).Status, http.StatusOK) // anonymous: no user
}

func TestFaults_RateLimitAnswers429OnTheManualClock(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	path := fmt.Sprintf("/users/%d", u.ID)
	ts.mustFault(map[string]any{"route": "/users/{user_id}", "requests_per_minute": 2})
	is.Equal(ts.do("GET", path, u.Token, nil).Status, http.StatusOK)
	is.Equal(ts.do("GET", path, u.Token, nil).Status, http.StatusOK)
	res := ts.do("GET", path, u.Token, nil)
	is.Equal(res.Status, http.StatusTooManyRequests)
	is.Equal(string(res.Raw), `{"message":"local_rate_limited","error":"local_rate_limited","status":429,"cause":[]}`+"\n")
	is.NoErr(ts.clock.Advance(time.Minute))
	is.Equal(ts.do("GET", path, u.Token, nil).Status, http.StatusOK) // a new minute
}

func TestFaults_LatencyAloneServesTheRequest(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	r := ts.mustFault(map[string]any{"route": "/health", "latency_ms": 1})
	is.Equal(ts.do("GET", "/health", "", nil).Status, http.StatusOK)
	list := ts.do("GET", "/operator/requests?route=/health", testOperatorToken, nil)
	entry := list.Obj()["results"].([]any)[0].(map[string]any)
	is.Equal(entry["fault_id"], r["id"]) // the journal names the rule that acted
	is.Equal(entry["status"], float64(200))
}

func TestFaults_SearchRouteIsItsOwnTemplate(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	ts.mustFault(map[string]any{"route": "/questions/search", "status": 503})
	is.Equal(ts.do("GET", "/questions/search?item=MLA1", u.Token, nil).Status, 503)
	is.True(ts.do("GET", "/questions/1", u.Token, nil).Status != 503) // /questions/{question_id} is another route
}

// TestFaults_StaticNamesBesideAParameterAreTheirOwnRoutes: /users/me and
// POST /users/test_user are served through /users/{user_id}, yet a rule
// names each of them alone.
func TestFaults_StaticNamesBesideAParameterAreTheirOwnRoutes(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	ts.mustFault(map[string]any{"route": "/users/me", "status": 503})
	ts.mustFault(map[string]any{"method": "POST", "route": "/users/test_user", "status": 429})
	is.Equal(ts.do("GET", "/users/me", u.Token, nil).Status, 503)
	is.Equal(ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil).Status, 200) // /users/{user_id} is another route
	is.Equal(ts.do("POST", "/users/test_user", u.Token, map[string]any{"site_id": "MLA"}).Status, 429)
}

// TestFaults_ResetAndRestoreReplaceTheRules: a reset removes every rule at
// once, and restoring a snapshot brings back the rules it held.
func TestFaults_ResetAndRestoreReplaceTheRules(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	ts.mustFault(map[string]any{"route": "/health", "status": 503})
	is.Equal(ts.do("GET", "/health", "", nil).Status, 503)
	snap := ts.do("POST", "/operator/snapshots", testOperatorToken, map[string]any{"name": "with a rule"})
	is.Equal(snap.Status, 201)
	is.Equal(ts.do("POST", "/operator/reset", testOperatorToken, nil).Status, 204)
	is.Equal(ts.do("GET", "/health", "", nil).Status, 200) // the rule went with the reset
	id := int64(snap.Obj()["id"].(float64))
	is.Equal(ts.do("POST", fmt.Sprintf("/operator/snapshots/%d/restore", id), testOperatorToken, nil).Status, 204)
	is.Equal(ts.do("GET", "/health", "", nil).Status, 503) // and came back with the snapshot
}

// TestFaults_OverRealHTTP drives a rule through a real listener and client.
func TestFaults_OverRealHTTP(t *testing.T) {
	is := is.New(t)
	srv := newLiveServer(t)
	srv.mustFault(map[string]any{"method": "GET", "route": "/health", "status": 503, "body": map[string]any{"custom": true}})
	resp, err := http.Get(srv.URL + "/health")
	is.NoErr(err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	is.Equal(resp.StatusCode, 503)
	is.Equal(resp.Header.Get("Content-Type"), "application/json; charset=utf-8")
	is.Equal(strings.TrimSpace(string(b)), `{"custom":true}`) // a body given is answered as it is
}

func TestJournal_NeverHoldsATokenOrSecret(t *testing.T) {
	is := is.New(t)
	srv := newLiveServer(t)
	var tokens []string
	var users []user
	for range 3 {
		u := srv.mustUser("MLA")
		users = append(users, u)
		tokens = append(tokens, u.Token)
		res := srv.operator("POST", fmt.Sprintf("/operator/users/%d/tokens", u.ID), nil)
		tokens = append(tokens, res.Obj()["access_token"].(string))
	}
	tokens = append(tokens, srv.OperatorToken)
	get := func(path string, header string) int {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		is.NoErr(err)
		if header != "" {
			req.Header.Set("Authorization", "Bearer "+header)
		}
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, tok := range tokens[:len(tokens)-1] {
		u := users[i/2]
		is.Equal(get(fmt.Sprintf("/users/%d", u.ID), tok), http.StatusOK)
		is.Equal(get(fmt.Sprintf("/users/%d?access_token=%s", u.ID, tok), ""), http.StatusOK)
		get(fmt.Sprintf("/users/%d?limit=1&client_secret=%s&code=%s&refresh_token=%s&code_verifier=%s", u.ID, tok, tok, tok, tok), tok)
		get(fmt.Sprintf("/health?q=%s", tok), "")
	}
	get("/health?access_token="+srv.OperatorToken, "")

	res := srv.operator("GET", "/operator/requests?limit=1000", nil)
	is.Equal(res.Status, http.StatusOK)
	is.True(res.Obj()["paging"].(map[string]any)["total"].(float64) >= 24)
	for _, tok := range tokens {
		if strings.Contains(string(res.Raw), tok) {
			t.Fatalf("the journal holds token %s: %s", tok, res.Raw)
		}
	}
	var entries struct {
		Results []struct {
			Query  string `json:"query"`
			UserID *int64 `json:"user_id"`
		} `json:"results"`
	}
	is.NoErr(json.Unmarshal(res.Raw, &entries))
	is.True(strings.Contains(entries.Results[0].Query, "access_token=REDACTED")) // the newest: the operator token in the query
	byUser := srv.operator("GET", fmt.Sprintf("/operator/requests?user_id=%d", users[0].ID), nil)
	is.Equal(byUser.Obj()["paging"].(map[string]any)["total"], float64(6)) // two tokens, three authenticated requests each
}

func TestJournal_FiltersPagingAndClear(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for range 3 {
		ts.do("GET", "/health", "", nil)
	}
	ts.do("GET", fmt.Sprintf("/users/%d", u.ID), u.Token, nil)
	ts.do("GET", "/users/999999", u.Token, nil)
	ts.do("GET", "/no/such/route", "", nil)

	count := func(query string) float64 {
		t.Helper()
		res := ts.do("GET", "/operator/requests"+query, testOperatorToken, nil)
		is.Equal(res.Status, http.StatusOK)
		return res.Obj()["paging"].(map[string]any)["total"].(float64)
	}
	is.Equal(count(""), float64(6)) // the operator's own requests are not kept
	is.Equal(count("?method=get&route=/health"), float64(3))
	is.Equal(count("?route=/users/{seller_id}"), float64(2))
	is.Equal(count("?status=404"), float64(2))
	is.Equal(count(fmt.Sprintf("?user_id=%d", u.ID)), float64(2)) // a valid token names its caller, whatever the answer
	page := ts.do("GET", "/operator/requests?limit=2&offset=1", testOperatorToken, nil)
	is.Equal(page.Obj()["paging"], map[string]any{"total": float64(6), "offset": float64(1), "limit": float64(2)})
	results := page.Obj()["results"].([]any)
	is.Equal(len(results), 2)
	first := results[0].(map[string]any)
	is.Equal(first["path"], "/users/999999") // newest first, after the one skipped
	is.Equal(first["route"], "/users/{user_id}")
	is.Equal(first["method"], "GET")
	is.True(first["latency_ms"].(float64) >= 0)
	is.Equal(first["time"], testStart.Format(time.RFC3339)) // the server's clock

	wantError(t, ts.do("GET", "/operator/requests?status=abc", testOperatorToken, nil), 400, "Invalid status: abc. It must be an HTTP status, from 100 to 599")
	wantError(t, ts.do("GET", "/operator/requests?user_id=-1", testOperatorToken, nil), 400, "Invalid user_id: -1. It must be a positive integer")
	cleared := ts.do("DELETE", "/operator/requests", testOperatorToken, nil)
	is.Equal(cleared.Obj(), map[string]any{"deleted": float64(6)})
	is.Equal(count(""), float64(0))
}

func TestRedeliverAPI(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	recv, n := countingReceiver(t, http.StatusOK)
	owner := ts.mustUser("MLA")
	app := int64(ts.mustApplication(owner.ID, recv.URL)["id"].(float64))
	ts.emitQuestion(owner.ID, "/questions/1")
	_, err := ts.m.Notify.Process(context.Background())
	is.NoErr(err)
	list := ts.do("GET", fmt.Sprintf("/operator/applications/%d/deliveries", app), testOperatorToken, nil)
	first := list.Obj()["results"].([]any)[0].(map[string]any)
	delivery := int64(first["delivery_id"].(float64))

	res := ts.do("POST", fmt.Sprintf("/operator/applications/%d/deliveries/%d/redeliver", app, delivery), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj()["attempt"], float64(2))
	is.Equal(res.Obj()["outcome"], "acknowledged")
	is.Equal(res.Obj()["redelivery"], true)
	is.Equal(res.Obj()["_id"], first["_id"])
	is.Equal(n.Load(), int64(2)) // sent again
	list = ts.do("GET", fmt.Sprintf("/operator/applications/%d/deliveries", app), testOperatorToken, nil)
	is.Equal(list.Obj()["paging"].(map[string]any)["total"], float64(2)) // recorded like the others

	wantError(t, ts.do("POST", fmt.Sprintf("/operator/applications/%d/deliveries/%d/redeliver", app, delivery+50), testOperatorToken, nil),
		404, fmt.Sprintf("Delivery %d of application %d not found", delivery+50, app))
	wantError(t, ts.do("POST", fmt.Sprintf("/operator/applications/%d/deliveries/x/redeliver", app), testOperatorToken, nil),
		400, "Invalid delivery_id: x. It must be a positive integer")
	wantError(t, ts.do("POST", fmt.Sprintf("/operator/applications/%d/deliveries/%d/redeliver", app, delivery), owner.Token, nil),
		403, "Operator routes need the operator token")
}

func TestLogLines_CarryThePathWithoutTheQueryAndADurationWithItsUnit(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(testStart)})
	is.NoErr(err)
	t.Cleanup(func() { _ = m.Close() })
	h := httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, Logger: slog.New(slog.NewJSONHandler(&buf, nil))}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/health?access_token=APP_USR-secret-token", nil))
	var line struct {
		Path     string `json:"path"`
		Route    string `json:"route"`
		Duration string `json:"duration"`
	}
	is.NoErr(json.Unmarshal(buf.Bytes(), &line))
	is.Equal(line.Path, "/health")
	is.Equal(line.Route, "/health")
	d, err := time.ParseDuration(line.Duration)
	is.NoErr(err) // a duration with its unit, such as "152.3µs"
	is.True(d > 0)
	is.True(!strings.Contains(buf.String(), "APP_USR-secret-token")) // never the query's token
}

func TestJournal_OffKeepsNothing(t *testing.T) {
	is := is.New(t)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(testStart)})
	is.NoErr(err)
	t.Cleanup(func() { _ = m.Close() })
	srv := httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, Journal: journal.New(0)}))
	ts := &testServer{t: t, m: m, handler: srv}
	ts.do("GET", "/health", "", nil)
	res := ts.do("GET", "/operator/requests", testOperatorToken, nil)
	is.Equal(res.Obj()["results"], []any{})
	_, total, err := srv.Journal().List(journal.Query{})
	is.NoErr(err)
	is.Equal(total, 0)
}
