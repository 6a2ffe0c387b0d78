package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/notify"
)

// received is one notification POST as a receiver saw it.
type received struct {
	header http.Header
	raw    []byte
	body   map[string]any
}

// receiver is a real HTTP receiver; answer decides the status of the n-th
// POST and may block. Every POST is sent on entered as it arrives; every
// answered POST is sent on posts.
type receiver struct {
	srv     *httptest.Server
	entered chan received
	posts   chan received
}

func newReceiver(t *testing.T, answer func(n int64) int) *receiver {
	t.Helper()
	rc := &receiver{entered: make(chan received, 64), posts: make(chan received, 64)}
	var n atomic.Int64
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		p := received{header: r.Header.Clone(), raw: raw}
		_ = json.Unmarshal(raw, &p.body)
		select {
		case rc.entered <- p:
		default:
		}
		status := http.StatusOK
		if answer != nil {
			status = answer(n.Add(1))
		}
		select {
		case rc.posts <- p:
		default:
		}
		w.WriteHeader(status)
	}))
	rc.srv.Start()
	t.Cleanup(rc.srv.CloseClientConnections)
	t.Cleanup(rc.srv.Close)
	return rc
}

// next waits for the next POST.
func (rc *receiver) next(t *testing.T, what string) received {
	t.Helper()
	select {
	case p := <-rc.posts:
		return p
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no notification arrived", what)
		return received{}
	}
}

// none checks that no POST arrived.
func (rc *receiver) none(t *testing.T, who string) {
	t.Helper()
	select {
	case p := <-rc.posts:
		t.Fatalf("%s was notified: %s", who, p.raw)
	default:
	}
}

// e2eUser creates a user through the operator API.
func e2eUser(t *testing.T, s *server, op, nickname string) (int64, string) {
	t.Helper()
	status, u := call(t, "POST", s.base+"/operator/users", op, map[string]any{"nickname": nickname, "site_id": "MLA"})
	if status != http.StatusCreated {
		t.Fatalf("create user: %d %v", status, u)
	}
	return int64(u["id"].(float64)), u["access_token"].(string)
}

// e2eApp registers an application of owner subscribed to questions.
func e2eApp(t *testing.T, s *server, op string, owner int64, url string) map[string]any {
	t.Helper()
	status, app := call(t, "POST", s.base+"/operator/applications", op, map[string]any{
		"name": "Receiver", "owner_user_id": owner, "callback_url": url, "topics": []string{"questions"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create application: %d %v", status, app)
	}
	return app
}

// e2eItem publishes an active plain item of the user with token.
func e2eItem(t *testing.T, s *server, token string) string {
	t.Helper()
	status, item := call(t, "POST", s.base+"/items", token, map[string]any{
		"title": "Guitarra criolla", "category_id": "MLA1055", "price": 1500, "listing_type_id": "gold_special",
		"currency_id": "ARS", "condition": "new", "channels": []string{"marketplace"}, "available_quantity": 5,
	})
	if status != http.StatusCreated {
		t.Fatalf("publish item: %d %v", status, item)
	}
	return item["id"].(string)
}

// e2eAsk asks a question on item and returns its id.
func e2eAsk(t *testing.T, s *server, token, item string) int64 {
	t.Helper()
	status, q := call(t, "POST", s.base+"/questions", token, map[string]any{"text": "Does it come with a case?", "item_id": item})
	if status != http.StatusCreated {
		t.Fatalf("ask: %d %v", status, q)
	}
	return int64(q["id"].(float64))
}

// wantNotification checks a POST's body and headers against the question
// event of seller on question id for app.
func wantNotification(t *testing.T, p received, app map[string]any, seller, id int64) {
	t.Helper()
	b := p.body
	if b["user_id"] != float64(seller) || b["resource"] != fmt.Sprintf("/questions/%d", id) || b["topic"] != "questions" ||
		b["application_id"] != app["id"] || b["attempts"] != float64(1) || len(b) != 8 {
		t.Fatalf("notification body: %s", p.raw)
	}
	if id, _ := b["_id"].(string); id == "" {
		t.Fatalf("no _id: %s", p.raw)
	}
	for _, f := range []string{"received", "sent"} {
		s, _ := b[f].(string)
		if _, err := time.Parse(notify.TimeLayout, s); err != nil {
			t.Fatalf("%s is not ISO 8601 UTC: %q", f, s)
		}
	}
	if p.header.Get("User-Agent") != notify.UserAgent || p.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers: %v", p.header)
	}
	if !notify.Verify(app["secret"].(string), p.raw, p.header.Get(notify.SignatureHeader)) {
		t.Fatalf("signature %q does not verify", p.header.Get(notify.SignatureHeader))
	}
}

func TestEndToEnd_QuestionEventsNotifyTheSellersApplicationOverRealHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	const op = "e2e-operator-token-0123456789"
	s := startServer(t, bin, "-memory", "-allow-private-callbacks", "-operator-token", op)
	seller, sellerToken := e2eUser(t, s, op, "NOTIFY_SELLER")
	buyer, buyerToken := e2eUser(t, s, op, "NOTIFY_BUYER")
	other, otherToken := e2eUser(t, s, op, "NOTIFY_OTHER")
	sellerRcv, buyerRcv, otherRcv := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	sellerApp := e2eApp(t, s, op, seller, sellerRcv.srv.URL+"/notifications")
	e2eApp(t, s, op, buyer, buyerRcv.srv.URL+"/notifications")
	otherApp := e2eApp(t, s, op, other, otherRcv.srv.URL+"/notifications")
	item := e2eItem(t, s, sellerToken)
	otherItem := e2eItem(t, s, otherToken)

	id := e2eAsk(t, s, buyerToken, item)
	wantNotification(t, sellerRcv.next(t, "new question"), sellerApp, seller, id)

	if status, body := call(t, "POST", s.base+"/answers", sellerToken, map[string]any{"question_id": id, "text": "Yes."}); status != http.StatusOK {
		t.Fatalf("answer: %d %v", status, body)
	}
	wantNotification(t, sellerRcv.next(t, "answer"), sellerApp, seller, id)

	if status, body := call(t, "PUT", fmt.Sprintf("%s/operator/questions/%d", s.base, id), op, map[string]any{"answer_status": "BANNED"}); status != http.StatusOK {
		t.Fatalf("moderate: %d %v", status, body)
	}
	wantNotification(t, sellerRcv.next(t, "moderation"), sellerApp, seller, id)

	del, err := http.NewRequest("DELETE", fmt.Sprintf("%s/questions/%d", s.base, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	del.Header.Set("Authorization", "Bearer "+sellerToken)
	res, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	wantNotification(t, sellerRcv.next(t, "deletion"), sellerApp, seller, id)

	// Events are fanned out in order: once a later event of the other seller
	// has arrived, a stray notification of the earlier ones would have too.
	last := e2eAsk(t, s, buyerToken, otherItem)
	wantNotification(t, otherRcv.next(t, "question to the other seller"), otherApp, other, last)
	otherRcv.none(t, "the other seller's application")
	buyerRcv.none(t, "the buyer's application")
	sellerRcv.none(t, "the seller's application (twice)")

	// The receiver sees a POST before the server records its answer, so
	// the fourth attempt may take a moment to appear.
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, deliveries := call(t, "GET", fmt.Sprintf("%s/operator/applications/%.0f/deliveries", s.base, sellerApp["id"]), op, nil)
		if status == http.StatusOK && deliveries["paging"].(map[string]any)["total"] == float64(4) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %d %v", status, deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEndToEnd_NotificationInFlightAtACrashIsSentAgainAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	const op = "e2e-operator-token-0123456789"
	args := []string{"-data", dir, "-allow-private-callbacks", "-notification-timeout", "1m", "-operator-token", op}
	s := startServer(t, bin, args...)
	release := make(chan struct{})
	rcv := newReceiver(t, func(n int64) int {
		if n == 1 {
			<-release // the first POST is still unanswered when the server dies
		}
		return http.StatusOK
	})
	defer close(release)
	seller, sellerToken := e2eUser(t, s, op, "CRASH_SELLER")
	_, buyerToken := e2eUser(t, s, op, "CRASH_BUYER")
	app := e2eApp(t, s, op, seller, rcv.srv.URL)
	id := e2eAsk(t, s, buyerToken, e2eItem(t, s, sellerToken))

	// Once the POST is in flight, kill the server without a chance to
	// record anything.
	var first received
	select {
	case first = <-rcv.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the notification was never sent")
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()

	s = startServer(t, bin, args...)
	again := rcv.next(t, "after restart")
	wantNotification(t, again, app, seller, id)
	if again.body["_id"] != first.body["_id"] {
		t.Fatalf("the notification sent again has another _id: %v, first %v", again.body["_id"], first.body["_id"])
	}
	// The attempt is recorded once the 200 is read: wait for it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, d := call(t, "GET", fmt.Sprintf("%s/operator/applications/%.0f/deliveries", s.base, app["id"]), op, nil)
		results, _ := d["results"].([]any)
		if status == http.StatusOK && len(results) == 1 {
			if r := results[0].(map[string]any); r["outcome"] != "acknowledged" || r["_id"] != again.body["_id"] || r["attempt"] != float64(1) {
				t.Fatalf("after restart: the cut-short POST is not an attempt; the next one is acknowledged: %v", r)
			}
			break
		}
		if status != http.StatusOK || len(results) > 1 || time.Now().After(deadline) {
			t.Fatalf("after restart: one acknowledged attempt expected: %d %v", status, d)
		}
	}
}
