package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// newNotifyServer is the shared test server with loopback callbacks allowed,
// so that httptest receivers can be registered.
func newNotifyServer(t *testing.T) *testServer {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk,
		// A long timeout: a loaded machine must not turn a receiver's
		// answer into a timeout.
		Notifications: notify.Options{AllowPrivateCallbacks: true, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	h := httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk}))
	return &testServer{t: t, m: m, clock: clk, handler: h}
}

// countingReceiver answers every POST with status and counts them.
func countingReceiver(t *testing.T, status int) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
		_, _ = w.Write([]byte("nope"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func (ts *testServer) mustApplication(owner int64, url string) map[string]any {
	ts.t.Helper()
	res := ts.do("POST", "/operator/applications", testOperatorToken, map[string]any{
		"name": "My app", "owner_user_id": owner, "callback_url": url, "topics": []string{"questions"},
	})
	if res.Status != http.StatusCreated {
		ts.t.Fatalf("create application: %d %s", res.Status, res.Raw)
	}
	// The client secret is in the creation's answer only.
	app := res.Obj()
	delete(app, "client_secret")
	return app
}

// emitQuestion writes a question event of user into the outbox.
func (ts *testServer) emitQuestion(user int64, resource string) {
	ts.t.Helper()
	err := ts.m.Store().Update(context.Background(), func(tx storage.Tx) error {
		_, err := notify.Append(context.Background(), ts.m.Store(), tx, notify.Event{Topic: notify.TopicQuestions, UserID: user, Resource: resource,
			Action: "created", Received: ts.clock.Now()})
		return err
	})
	if err != nil {
		ts.t.Fatal(err)
	}
}

// missAll follows the retry schedule until every pending notification has
// been missed.
func (ts *testServer) missAll() {
	ts.t.Helper()
	for i := 0; i < 70; i++ {
		if _, err := ts.m.Notify.Process(context.Background()); err != nil {
			ts.t.Fatal(err)
		}
		if err := ts.clock.Advance(time.Minute); err != nil {
			ts.t.Fatal(err)
		}
	}
}

func TestApplicationsAPI_CreateReadUpdate(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	owner := ts.mustUser("MLA")
	app := ts.mustApplication(owner.ID, "http://127.0.0.1:9000/hook")
	id := int64(app["id"].(float64))
	is.Equal(app["name"], "My app")
	is.Equal(app["owner_user_id"], float64(owner.ID))
	is.Equal(app["callback_url"], "http://127.0.0.1:9000/hook")
	is.Equal(app["topics"], []any{"questions"})
	is.Equal(len(app["secret"].(string)), 64)
	is.Equal(app["client_id"], app["id"])
	is.Equal(app["redirect_uris"], []any{})
	is.Equal(len(app), 8) // id, name, owner_user_id, callback_url, topics, secret, client_id, redirect_uris

	res := ts.do("GET", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj(), app)

	res = ts.do("PUT", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, map[string]any{
		"callback_url": "http://127.0.0.1:9001/new", "topics": []string{},
	})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["callback_url"], "http://127.0.0.1:9001/new")
	is.Equal(res.Obj()["topics"], []any{})
	is.Equal(res.Obj()["secret"], app["secret"]) // the secret stays

	res = ts.do("PUT", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, map[string]any{"topics": []string{"questions"}})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["callback_url"], "http://127.0.0.1:9001/new") // absent field unchanged
	is.Equal(res.Obj()["topics"], []any{"questions"})
}

func TestApplicationsAPI_Errors(t *testing.T) {
	ts := newNotifyServer(t)
	strict := newTestServer(t) // the server's default: no private callbacks
	owner := ts.mustUser("MLA")
	strictOwner := strict.mustUser("MLA")
	app := ts.mustApplication(owner.ID, "http://127.0.0.1:9000/hook")
	id := int64(app["id"].(float64))
	cases := []struct {
		name    string
		ts      *testServer
		method  string
		path    string
		token   string
		body    any
		status  int
		message string
	}{
		{"NoToken", ts, "POST", "/operator/applications", "", map[string]any{}, 401, "Missing access token: send Authorization: Bearer <token>"},
		{"UserToken", ts, "POST", "/operator/applications", owner.Token, map[string]any{}, 403, "Operator routes need the operator token"},
		{"Malformed", ts, "POST", "/operator/applications", testOperatorToken, "{", 400, ""},
		{"OwnerNotInteger", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": "x"}, 400, "Invalid JSON: the field [owner_user_id] must be of type integer"},
		{"NoName", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"owner_user_id": owner.ID, "callback_url": "http://127.0.0.1/"}, 400, "The fields [name] are required for requested call"},
		{"UnknownOwner", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": 5, "callback_url": "http://127.0.0.1/"}, 400, "Invalid owner_user_id: user 5 does not exist"},
		{"BadTopic", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": owner.ID, "callback_url": "http://127.0.0.1/", "topics": []string{"claims"}}, 400, `Invalid topic: "claims". Valid topics are: questions, orders_v2, shipments, items, stock-location, messages, post_purchase, orders_feedback`},
		{"Scheme", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": owner.ID, "callback_url": "file:///etc/passwd"}, 400, "Invalid callback_url: file:///etc/passwd. It must be an absolute http or https URL"},
		{"Metadata", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": owner.ID, "callback_url": "http://169.254.169.254/latest"}, 400, "Callback URL not allowed: 169.254.169.254 is a link-local address"},
		{"LoopbackWithoutOption", strict, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": strictOwner.ID, "callback_url": "http://127.0.0.1:8080/"}, 400, "Callback URL not allowed: 127.0.0.1 is a loopback address (allowed only with -allow-private-callbacks)"},
		{"NegativeOwner", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": -1, "callback_url": "http://127.0.0.1/"}, 400, "Invalid owner_user_id: -1. It must be a positive integer"},
		{"BadPort", ts, "POST", "/operator/applications", testOperatorToken, map[string]any{"name": "a", "owner_user_id": owner.ID, "callback_url": "http://127.0.0.1:99999/h"}, 400, "Invalid callback_url: http://127.0.0.1:99999/h. The port must be between 1 and 65535"},
		{"PutBadPort", ts, "PUT", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, map[string]any{"callback_url": "http://127.0.0.1:70000/"}, 400, "Invalid callback_url: http://127.0.0.1:70000/. The port must be between 1 and 65535"},
		{"GetUnknown", ts, "GET", fmt.Sprintf("/operator/applications/%d", id+1), testOperatorToken, nil, 404, fmt.Sprintf("Application not found: %d", id+1)},
		{"GetBadID", ts, "GET", "/operator/applications/abc", testOperatorToken, nil, 400, "Invalid app_id: abc. It must be a positive integer"},
		{"PutUnknown", ts, "PUT", fmt.Sprintf("/operator/applications/%d", id+1), testOperatorToken, map[string]any{"topics": []string{}}, 404, fmt.Sprintf("Application not found: %d", id+1)},
		{"PutEmptyBody", ts, "PUT", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, "", 400, "The request body is empty; a JSON object is expected"},
		{"PutBadURL", ts, "PUT", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, map[string]any{"callback_url": "http://[fe80::1]/"}, 400, "Callback URL not allowed: fe80::1 is a link-local address"},
		{"DeliveriesUnknown", ts, "GET", fmt.Sprintf("/operator/applications/%d/deliveries", id+1), testOperatorToken, nil, 404, fmt.Sprintf("Application not found: %d", id+1)},
		{"DeliveriesBadLimit", ts, "GET", fmt.Sprintf("/operator/applications/%d/deliveries?limit=-1", id), testOperatorToken, nil, 400, "Invalid limit: -1. It must be a non-negative integer"},
		{"MissedNoToken", ts, "GET", fmt.Sprintf("/missed_feeds?app_id=%d", id), "", nil, 401, "Missing access token: send Authorization: Bearer <token>"},
		{"MissedNoApp", ts, "GET", "/missed_feeds", owner.Token, nil, 400, "The parameter [app_id] is required"},
		{"MissedBadApp", ts, "GET", "/missed_feeds?app_id=x1", owner.Token, nil, 400, "Invalid app_id: x1. It must be a positive integer"},
		{"MissedUnknownApp", ts, "GET", fmt.Sprintf("/missed_feeds?app_id=%d", id+1), owner.Token, nil, 404, fmt.Sprintf("Application not found: %d", id+1)},
		{"MissedBadTopic", ts, "GET", fmt.Sprintf("/missed_feeds?app_id=%d&topic=orders", id), owner.Token, nil, 400, `Invalid topic: "orders". Valid topics are: questions, orders_v2, shipments, items, stock-location, messages, post_purchase, orders_feedback`},
		{"MissedBadOffset", ts, "GET", fmt.Sprintf("/missed_feeds?app_id=%d&offset=z", id), owner.Token, nil, 400, "Invalid offset: z. It must be a non-negative integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := c.ts.do(c.method, c.path, c.token, c.body)
			wantError(t, res, c.status, c.message)
		})
	}
	is := is.New(t)
	res := ts.do("GET", fmt.Sprintf("/operator/applications/%d", id), testOperatorToken, nil)
	is.Equal(res.Obj(), app) // no failed call changed it
}

func TestMissedFeedsAPI_OwnerSeesMissedNotificationsWithRequestAndResponse(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	rcv, posts := countingReceiver(t, http.StatusInternalServerError)
	owner := ts.mustUser("MLA")
	app := ts.mustApplication(owner.ID, rcv.URL+"/cb")
	id := int64(app["id"].(float64))
	for i := 1; i <= 12; i++ {
		ts.emitQuestion(owner.ID, fmt.Sprintf("/questions/%d", i))
	}
	ts.missAll()
	is.Equal(posts.Load(), int64(12*notify.MaxAttempts))

	res := ts.do("GET", fmt.Sprintf("/missed_feeds?app_id=%d", id), owner.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	msgs := res.Obj()["messages"].([]any)
	is.Equal(len(msgs), 10) // default limit 10
	m := msgs[0].(map[string]any)
	is.Equal(m["topic"], "questions")
	is.Equal(m["user_id"], float64(owner.ID))
	is.Equal(m["application_id"], float64(id))
	is.Equal(m["attempts"], float64(8))
	is.True(m["_id"].(string) != "")
	is.True(m["sent"].(string) != "")
	is.Equal(m["received"], "2026-03-04T15:00:00.000Z")
	req := m["request"].(map[string]any)
	is.Equal(req["url"], rcv.URL+"/cb")
	is.Equal(req["headers"].(map[string]any)["User-Agent"], notify.UserAgent)
	is.Equal(req["data"].(map[string]any)["resource"], m["resource"])
	resp := m["response"].(map[string]any)
	is.Equal(resp["http_code"], float64(500))
	is.Equal(resp["body"], "nope")
	_, ok := resp["req_time"].(float64)
	is.True(ok) // req_time is a number of milliseconds
	_, ok = resp["headers"].(map[string]any)
	is.True(ok)

	res = ts.do("GET", fmt.Sprintf("/missed_feeds?app_id=%d&topic=questions&offset=10&limit=5", id), owner.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(len(res.Obj()["messages"].([]any)), 2) // 12 missed, from the 11th

	other := ts.mustUser("MLA")
	res = ts.do("GET", fmt.Sprintf("/missed_feeds?app_id=%d", id), other.Token, nil)
	wantError(t, res, http.StatusForbidden, fmt.Sprintf("The application %d does not belong to the caller", id))
}

func TestMissedFeedsAPI_EmptyFeedIsAnEmptyArray(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	owner := ts.mustUser("MLA")
	app := ts.mustApplication(owner.ID, "http://127.0.0.1:9/")
	res := ts.do("GET", fmt.Sprintf("/missed_feeds?app_id=%d&access_token=%s", int64(app["id"].(float64)), owner.Token), "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(string(res.Raw), "{\"messages\":[]}\n")
}

func TestDeliveriesAPI_ListsEveryAttemptNewestFirst(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	rcv, _ := countingReceiver(t, http.StatusServiceUnavailable)
	owner := ts.mustUser("MLA")
	app := ts.mustApplication(owner.ID, rcv.URL)
	id := int64(app["id"].(float64))
	ts.emitQuestion(owner.ID, "/questions/1")
	ts.missAll()
	res := ts.do("GET", fmt.Sprintf("/operator/applications/%d/deliveries?limit=3", id), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": float64(8), "offset": float64(0), "limit": float64(3)})
	results := res.Obj()["results"].([]any)
	is.Equal(len(results), 3)
	first := results[0].(map[string]any)
	is.Equal(first["attempt"], float64(8))
	is.Equal(first["outcome"], "missed")
	is.Equal(first["resource"], "/questions/1")
	is.Equal(first["response"].(map[string]any)["http_code"], float64(503))
	is.Equal(results[1].(map[string]any)["attempt"], float64(7))
	is.Equal(results[1].(map[string]any)["outcome"], "retry")
}
