package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/notify"
)

// post is one notification POST as a receiver saw it.
type post struct {
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// recorder is a real HTTP receiver that acknowledges every POST with 200 and
// keeps what it received.
type recorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	posts []post
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rc := &recorder{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		p := post{Header: r.Header.Clone(), Raw: raw}
		_ = json.Unmarshal(raw, &p.Body)
		rc.mu.Lock()
		rc.posts = append(rc.posts, p)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// take returns the POSTs received since the last call.
func (rc *recorder) take() []post {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.posts
	rc.posts = nil
	return out
}

// deliver runs the delivery loop once, until nothing is due.
func (ts *testServer) deliver() {
	ts.t.Helper()
	if _, err := ts.m.Notify.Process(context.Background()); err != nil {
		ts.t.Fatal(err)
	}
}

// notifyWorld is a question world whose seller, buyer and another seller each
// have an application subscribed to questions, plus an application of the
// seller subscribed to nothing.
type notifyWorld struct {
	*qWorld
	sellerApp, buyerApp, otherApp, mutedApp map[string]any
	sellerRcv, buyerRcv, otherRcv, mutedRcv *recorder
}

func newNotifyWorld(t *testing.T) *notifyWorld {
	t.Helper()
	ts := newNotifyServer(t)
	w := &notifyWorld{qWorld: &qWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA"), other: ts.mustUser("MLA")}}
	w.item = w.mustItem(w.seller.ID)
	w.mustItem(w.other.ID) // the other user is a seller too
	w.sellerRcv, w.buyerRcv, w.otherRcv, w.mutedRcv = newRecorder(t), newRecorder(t), newRecorder(t), newRecorder(t)
	w.sellerApp = ts.mustApplication(w.seller.ID, w.sellerRcv.srv.URL+"/notifications")
	w.buyerApp = ts.mustApplication(w.buyer.ID, w.buyerRcv.srv.URL+"/notifications")
	w.otherApp = ts.mustApplication(w.other.ID, w.otherRcv.srv.URL+"/notifications")
	res := ts.do("POST", "/operator/applications", testOperatorToken, map[string]any{
		"name": "Muted", "owner_user_id": w.seller.ID, "callback_url": w.mutedRcv.srv.URL, "topics": []string{},
	})
	if res.Status != http.StatusCreated {
		t.Fatalf("create muted application: %d %s", res.Status, res.Raw)
	}
	w.mutedApp = res.Obj()
	return w
}

// wantNobodyElse checks that no application but the seller's subscribed one
// received anything.
func (w *notifyWorld) wantNobodyElse(t *testing.T) {
	t.Helper()
	for name, rc := range map[string]*recorder{"buyer's": w.buyerRcv, "other seller's": w.otherRcv, "unsubscribed": w.mutedRcv} {
		if got := rc.take(); len(got) != 0 {
			t.Fatalf("the %s application was notified: %s", name, got[0].Raw)
		}
	}
}

func TestQuestionEvents_EachChangeNotifiesTheSellersSubscribedApplicationOnly(t *testing.T) {
	w := newNotifyWorld(t)
	var id int64 // the question every step acts on
	steps := []struct {
		name string
		act  func(t *testing.T)
	}{
		{"NewQuestion", func(t *testing.T) {
			id = w.mustAsk(w.buyer, w.item, "Does it come with a case?")
		}},
		{"Answer", func(t *testing.T) {
			w.mustAnswer(id, "Yes, a hard case.")
		}},
		{"Moderation", func(t *testing.T) {
			res := w.do("PUT", "/operator"+qpath(id), testOperatorToken, map[string]any{"status": "UNDER_REVIEW"})
			if res.Status != http.StatusOK {
				t.Fatalf("moderate: %d %s", res.Status, res.Raw)
			}
		}},
		{"Deletion", func(t *testing.T) {
			res := w.do("DELETE", qpath(id), w.seller.Token, nil)
			if res.Status != http.StatusOK {
				t.Fatalf("delete: %d %s", res.Status, res.Raw)
			}
		}},
	}
	seen := map[string]bool{}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			is := is.New(t)
			changed := w.clock.Now()
			step.act(t)
			if err := w.clock.Advance(time.Duration(i+1) * time.Second); err != nil {
				t.Fatal(err)
			}
			sentAt := w.clock.Now()
			w.deliver()

			got := w.sellerRcv.take()
			is.Equal(len(got), 1) // exactly one POST to the seller's application
			p := got[0]
			is.Equal(p.Body, map[string]any{
				"_id":            p.Body["_id"],
				"user_id":        float64(w.seller.ID),
				"resource":       fmt.Sprintf("/questions/%d", id),
				"topic":          "questions",
				"application_id": w.sellerApp["id"],
				"attempts":       float64(1),
				"received":       changed.UTC().Format("2006-01-02T15:04:05.000Z"),
				"sent":           sentAt.UTC().Format("2006-01-02T15:04:05.000Z"),
			})
			nid, _ := p.Body["_id"].(string)
			is.True(nid != "")  // every notification has an _id
			is.True(!seen[nid]) // and each change its own
			seen[nid] = true
			for _, f := range []string{"received", "sent"} {
				ts, err := time.Parse(time.RFC3339Nano, p.Body[f].(string))
				is.NoErr(err) // ISO 8601
				is.Equal(ts.Location(), time.UTC)
			}
			is.Equal(p.Header.Get("Content-Type"), "application/json")
			is.Equal(p.Header.Get("User-Agent"), notify.UserAgent)
			is.True(notify.Verify(w.sellerApp["secret"].(string), p.Raw, p.Header.Get(notify.SignatureHeader))) // signed with the seller app's secret
			w.wantNobodyElse(t)
		})
	}
}

func TestQuestionEvents_AQuestionOnAnotherSellersItemNotifiesThatSellerOnly(t *testing.T) {
	is := is.New(t)
	w := newNotifyWorld(t)
	otherItem := w.mustItem(w.other.ID)
	id := w.mustAsk(w.buyer, otherItem, "Is it new?")
	w.deliver()
	got := w.otherRcv.take()
	is.Equal(len(got), 1)
	is.Equal(got[0].Body["user_id"], float64(w.other.ID))
	is.Equal(got[0].Body["resource"], fmt.Sprintf("/questions/%d", id))
	is.Equal(got[0].Body["application_id"], w.otherApp["id"])
	is.Equal(len(w.sellerRcv.take()), 0)
	is.Equal(len(w.buyerRcv.take()), 0)
	is.Equal(len(w.mutedRcv.take()), 0)
}

func TestQuestionEvents_RefusedChangesNotifyNobody(t *testing.T) {
	is := is.New(t)
	w := newNotifyWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Does it come with a case?")
	w.deliver()
	is.Equal(len(w.sellerRcv.take()), 1)

	refused := []struct {
		method, path, token string
		body                any
		status              int
	}{
		{"POST", "/questions", w.seller.Token, map[string]any{"text": "Own item?", "item_id": w.item}, http.StatusForbidden},
		{"POST", "/questions", w.buyer.Token, map[string]any{"text": "", "item_id": w.item}, http.StatusBadRequest},
		{"POST", "/answers", w.buyer.Token, map[string]any{"question_id": id, "text": "Not mine to answer"}, http.StatusForbidden},
		{"POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": ""}, http.StatusBadRequest},
		{"DELETE", qpath(id), w.other.Token, nil, http.StatusForbidden},
		{"PUT", "/operator" + qpath(id), testOperatorToken, map[string]any{"status": "ANSWERED"}, http.StatusBadRequest},
	}
	for _, c := range refused {
		res := w.do(c.method, c.path, c.token, c.body)
		is.Equal(res.Status, c.status)
	}
	w.deliver()
	is.Equal(len(w.sellerRcv.take()), 0) // no change, no notification
	w.wantNobodyElse(t)
}

func TestQuestionEvents_TopicsChangedByPUTTakeEffectForTheNextEvent(t *testing.T) {
	is := is.New(t)
	w := newNotifyWorld(t)
	appPath := fmt.Sprintf("/operator/applications/%.0f", w.sellerApp["id"])
	res := w.do("PUT", appPath, testOperatorToken, map[string]any{"topics": []string{}})
	is.Equal(res.Status, http.StatusOK)
	w.mustAsk(w.buyer, w.item, "Unsubscribed?")
	w.deliver()
	is.Equal(len(w.sellerRcv.take()), 0) // unsubscribed: not notified

	moved := newRecorder(t)
	res = w.do("PUT", appPath, testOperatorToken, map[string]any{"topics": []string{"questions"}, "callback_url": moved.srv.URL + "/v2"})
	is.Equal(res.Status, http.StatusOK)
	id := w.mustAsk(w.buyer, w.item, "Subscribed again?")
	w.deliver()
	is.Equal(len(w.sellerRcv.take()), 0) // the old URL gets nothing
	got := moved.take()
	is.Equal(len(got), 1)
	is.Equal(got[0].Body["resource"], fmt.Sprintf("/questions/%d", id))
}
