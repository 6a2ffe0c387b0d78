package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/idempotency"
	"github.com/marketplace/marketplace/questions"
)

const keyHeader = "X-Idempotency-Key"

func (w *qWorld) questionsOn(item string) float64 {
	w.t.Helper()
	res := w.do("GET", "/questions/search?item="+item, "", nil)
	if res.Status != http.StatusOK {
		w.t.Fatalf("search: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["total"].(float64)
}

func TestIdempotencyKey_ARetryGetsTheFirstAnswerAndAsksOnce(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	body := fmt.Sprintf(`{"text":"Does it come with a case?","item_id":%q}`, w.item)
	first := w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1")
	is.Equal(first.Status, http.StatusCreated)
	is.NoErr(w.clock.Advance(time.Minute))
	again := w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1")
	is.Equal(again.Status, http.StatusCreated)                                    // the first status
	is.Equal(string(again.Raw), string(first.Raw))                                // byte for byte the first body
	is.Equal(again.Header.Get("Content-Type"), "application/json; charset=utf-8") // and its headers
	is.Equal(w.questionsOn(w.item), float64(1))                                   // one question
	// Without a key, the same body asks again, as before.
	res := w.do("POST", "/questions", w.buyer.Token, body)
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(w.questionsOn(w.item), float64(2))
}

func TestIdempotencyKey_TheSameKeyWithAnotherBodyIsRefusedWith409(t *testing.T) {
	w := newQWorld(t)
	res := w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "Is it new?", "item_id": w.item}, keyHeader, "ask-1")
	if res.Status != http.StatusCreated {
		t.Fatalf("ask: %d %s", res.Status, res.Raw)
	}
	id := res.Obj()["id"]
	res = w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "Is it used?", "item_id": w.item}, keyHeader, "ask-1")
	wantError(t, res, http.StatusConflict,
		`X-Idempotency-Key "ask-1" was already used for a POST /questions with another body: a key names one request; send a new key for a new request`)
	if res.Obj()["error"] != "idempotency_key_reused" {
		t.Errorf("error = %v, want idempotency_key_reused", res.Obj()["error"])
	}
	res = w.do("POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": "Yes"}, keyHeader, "ask-1")
	if res.Status != http.StatusOK {
		t.Errorf("another caller's key of the same name: %d %s, want 200", res.Status, res.Raw)
	}
	res = w.do("POST", "/items", w.buyer.Token, map[string]any{"title": "x"}, keyHeader, "ask-1")
	wantError(t, res, http.StatusConflict,
		`X-Idempotency-Key "ask-1" was already used for POST /questions: a key names one request; send a new key for a new request`)
	if got := w.questionsOn(w.item); got != 1 {
		t.Errorf("%v questions, want 1", got)
	}
}

func TestIdempotencyKey_ExpiresAfter24HoursOfTheEnginesClock(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	body := map[string]any{"text": "Is it new?", "item_id": w.item}
	is.Equal(w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1").Status, http.StatusCreated)
	res := w.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": testStart.Add(24*time.Hour - time.Second).Format(time.RFC3339)})
	is.Equal(res.Status, http.StatusOK)
	w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1")
	is.Equal(w.questionsOn(w.item), float64(1)) // a second before the day ends: a replay
	res = w.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": testStart.Add(24 * time.Hour).Format(time.RFC3339)})
	is.Equal(res.Status, http.StatusOK)
	res = w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1")
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(w.questionsOn(w.item), float64(2)) // a day later the key names nothing: a new question
	n, err := w.m.Idempotency.Sweep(context.Background())
	is.NoErr(err)
	is.Equal(n, 0) // the expired record was replaced by the new one, not left behind
}

func TestIdempotencyKey_ConcurrentRequestsWithOneKeyAskOnce(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	body := fmt.Sprintf(`{"text":"Is it new?","item_id":%q}`, w.item)
	const n = 8
	results := make([]response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-at-once")
		}()
	}
	close(start)
	wg.Wait()
	var created string
	for _, res := range results {
		switch res.Status {
		case http.StatusCreated:
			if created != "" {
				is.Equal(string(res.Raw), created) // every 201 is the one question
			}
			created = string(res.Raw)
		case http.StatusConflict:
			is.Equal(res.Obj()["error"], "idempotent_request_unanswered") // the first one was not answered yet
		default:
			t.Fatalf("status %d %s", res.Status, res.Raw)
		}
	}
	is.True(created != "")
	is.Equal(w.questionsOn(w.item), float64(1))
}

func TestIdempotencyKey_ARefusalBeforeAnyWriteIsNotRecorded(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	res := w.do("POST", "/questions", w.buyer.Token, map[string]any{"item_id": w.item}, keyHeader, "ask-1")
	is.Equal(res.Status, http.StatusBadRequest) // no text: refused, nothing written
	res = w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "Is it new?", "item_id": w.item}, keyHeader, "ask-1")
	is.Equal(res.Status, http.StatusCreated) // the corrected request runs under the same key
	is.Equal(w.questionsOn(w.item), float64(1))
}

func TestIdempotencyKey_AWriteWhoseAnswerWasLostIsNotCarriedOutAgain(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	body := fmt.Sprintf(`{"text":"Is it new?","item_id":%q}`, w.item)
	// The first attempt wrote its question and died before it answered: its
	// claim and its write, with no Finish.
	ctx := context.Background()
	_, claim, err := w.m.Idempotency.Begin(ctx, idempotency.Request{Caller: idempotency.Caller{User: w.buyer.ID},
		Key: "ask-1", Method: "POST", Path: "/questions", Body: []byte(body)})
	is.NoErr(err)
	_, err = w.m.Questions.Ask(idempotency.WithClaim(ctx, claim), w.buyer.ID, questions.AskInput{Text: "Is it new?", ItemID: w.item})
	is.NoErr(err)
	res := w.do("POST", "/questions", w.buyer.Token, body, keyHeader, "ask-1")
	wantError(t, res, http.StatusConflict,
		`The request with X-Idempotency-Key "ask-1" was already carried out, or is being carried out, and its answer is not available: it is not carried out again; read the resource to learn its outcome`)
	is.Equal(w.questionsOn(w.item), float64(1))
}

func TestIdempotencyKey_AMalformedKeyIsRefusedWith400(t *testing.T) {
	w := newQWorld(t)
	body := map[string]any{"text": "Is it new?", "item_id": w.item}
	msg := "Invalid X-Idempotency-Key: it must be 1 to 128 characters, ASCII letters, digits and punctuation, without spaces"
	for _, key := range []string{"", "with space", strings.Repeat("k", 129), "ñ"} {
		wantError(t, w.do("POST", "/questions", w.buyer.Token, body, keyHeader, key), http.StatusBadRequest, msg)
	}
	req := func() *http.Request {
		r, _ := http.NewRequest("POST", "/questions", strings.NewReader(`{"text":"Is it new?","item_id":"`+w.item+`"}`))
		r.Header.Set("Authorization", "Bearer "+w.buyer.Token)
		r.Header.Add(keyHeader, "a")
		r.Header.Add(keyHeader, "b")
		return r
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req())
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Send one X-Idempotency-Key header, not several") {
		t.Errorf("two keys: %d %s", rec.Code, rec.Body)
	}
	if got := w.questionsOn(w.item); got != 0 {
		t.Errorf("%v questions, want 0", got)
	}
}

func TestIdempotencyKey_AStockPutRetriedGetsItsVersionOnce(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	_, up := ts.mustMultiItem(seller.Token, stores[0], 1)
	path := "/user-products/" + up + "/stock/type/seller_warehouse"
	body := map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": 7}}}
	first := ts.do("PUT", path, seller.Token, body, "x-version", "1", keyHeader, "stock-1")
	is.Equal(first.Status, http.StatusOK)
	is.Equal(first.Header.Get("x-version"), "2")
	again := ts.do("PUT", path, seller.Token, body, "x-version", "1", keyHeader, "stock-1")
	is.Equal(again.Status, http.StatusOK)          // not the version mismatch a plain retry meets
	is.Equal(again.Header.Get("x-version"), "2")   // the first answer's version
	is.Equal(string(again.Raw), string(first.Raw)) // and body
	read := ts.do("GET", "/user-products/"+up+"/stock", seller.Token, nil)
	is.Equal(read.Header.Get("x-version"), "2") // written once
	res := ts.do("PUT", path, seller.Token, body, "x-version", "2", keyHeader, "stock-1")
	is.Equal(res.Status, http.StatusConflict) // another version is another request
}

func TestIdempotencyKey_OperatorCreatesAreCarriedOutOnce(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	body := map[string]any{"nickname": "ONCE", "site_id": "MLA", "first_name": "A", "last_name": "B", "tags": []string{}}
	first := ts.do("POST", "/operator/users", testOperatorToken, body, keyHeader, "user-1")
	is.Equal(first.Status, http.StatusCreated)
	again := ts.do("POST", "/operator/users", testOperatorToken, body, keyHeader, "user-1")
	is.Equal(string(again.Raw), string(first.Raw)) // the same user and token
	list := ts.do("GET", "/operator/users", testOperatorToken, nil)
	is.Equal(list.Obj()["paging"].(map[string]any)["total"], float64(1))
}

func TestIdempotencyKey_ResetClearsTheKeys(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	body := map[string]any{"nickname": "ONCE", "site_id": "MLA", "first_name": "A", "last_name": "B", "tags": []string{}}
	is.Equal(ts.do("POST", "/operator/users", testOperatorToken, body, keyHeader, "user-1").Status, http.StatusCreated)
	is.Equal(ts.do("POST", "/operator/reset", testOperatorToken, nil).Status, http.StatusNoContent)
	res := ts.do("POST", "/operator/users", testOperatorToken, body, keyHeader, "user-1")
	is.Equal(res.Status, http.StatusCreated) // created anew, not the answer of the state reset away
	list := ts.do("GET", "/operator/users", testOperatorToken, nil)
	is.Equal(list.Obj()["paging"].(map[string]any)["total"], float64(1))
}
