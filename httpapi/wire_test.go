package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/memory"
)

// freshClient opens a connection per request: the transport would retry an
// idempotent request on a reused connection that fails before any answer,
// and the test would see the second attempt.
func freshClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
}

// getWithFault makes a rule that does fault on GET /users/me and sends that
// request with the seller's token.
func getWithFault(t *testing.T, fault faults.WireFault) (*liveServer, *http.Response, error) {
	t.Helper()
	srv := newLiveServer(t)
	srv.mustFault(map[string]any{"method": "GET", "route": "/users/me", "fault": string(fault)})
	req, err := http.NewRequest("GET", srv.URL+"/users/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Seller.Token)
	resp, err := freshClient().Do(req)
	return srv, resp, err
}

func TestWireFault_ConnectionResetByPeerIsAConnectionReset(t *testing.T) {
	_, resp, err := getWithFault(t, faults.ConnectionResetByPeer)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want a connection reset", resp.StatusCode)
	}
	if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want ECONNRESET", err)
	}
}

func TestWireFault_EmptyResponseIsEOF(t *testing.T) {
	_, resp, err := getWithFault(t, faults.EmptyResponse)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want EOF", resp.StatusCode)
	}
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
}

func TestWireFault_MalformedResponseChunkFailsReadingTheBody(t *testing.T) {
	is := is.New(t)
	_, resp, err := getWithFault(t, faults.MalformedResponseChunk)
	is.NoErr(err) // the status line and headers are sound
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("body %q read whole, want a chunked encoding error", b)
	}
	if !strings.Contains(err.Error(), "malformed chunked encoding") && !strings.Contains(err.Error(), "chunk length") &&
		!errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want a malformed chunk", err)
	}
	is.Equal(string(b), `{"id":"M`) // the good chunk before the broken one
}

func TestWireFault_RandomDataThenCloseIsAMalformedHTTPResponse(t *testing.T) {
	_, resp, err := getWithFault(t, faults.RandomDataThenClose)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want a malformed response", resp.StatusCode)
	}
	if !strings.Contains(err.Error(), "malformed HTTP response") {
		t.Fatalf("err = %v, want a malformed HTTP response", err)
	}
}

func TestWireFault_MalformedJSONIsA200ThatFailsToDecode(t *testing.T) {
	is := is.New(t)
	_, resp, err := getWithFault(t, faults.MalformedJSON)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)
	is.Equal(resp.Header.Get("Content-Type"), "application/json; charset=utf-8")
	var v map[string]any
	err = json.NewDecoder(resp.Body).Decode(&v)
	var se *json.SyntaxError
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &se) {
		t.Fatalf("decode err = %v, want io.ErrUnexpectedEOF or a *json.SyntaxError", err)
	}
}

func TestWireFault_FaultedRequestIsJournaledWithItsCaller(t *testing.T) {
	is := is.New(t)
	srv, resp, err := getWithFault(t, faults.EmptyResponse)
	if err == nil {
		resp.Body.Close()
	}
	list := srv.operator("GET", "/operator/requests?route=/users/me", nil)
	results := list.Obj()["results"].([]any)
	is.Equal(len(results), 1)
	e := results[0].(map[string]any)
	is.Equal(e["user_id"], float64(srv.Seller.ID)) // the token was valid: its user is named
	is.True(e["fault_id"] != nil)
	is.Equal(e["status"], float64(0)) // no status reached the client
}

func TestFaults_StatusRuleJournalsTheCallerOfAValidToken(t *testing.T) {
	is := is.New(t)
	srv := newLiveServer(t)
	srv.mustFault(map[string]any{"route": "/users/me", "status": 503})
	is.Equal(srv.do("GET", "/users/me", srv.Seller.Token, nil).Status, 503)
	is.Equal(srv.do("GET", "/users/me", "APP_USR-not-a-token", nil).Status, 503)
	results := srv.operator("GET", "/operator/requests?route=/users/me", nil).Obj()["results"].([]any)
	is.Equal(len(results), 2)
	is.Equal(results[1].(map[string]any)["user_id"], float64(srv.Seller.ID)) // the valid token's user
	is.Equal(results[0].(map[string]any)["user_id"], nil)                    // an invalid token names nobody
}

func TestFaults_RuleMatchesAQueryParameterOverHTTP(t *testing.T) {
	is := is.New(t)
	srv := newLiveServer(t)
	srv.mustFault(map[string]any{"route": "/questions/search", "query": map[string]any{"status": "UNANSWERED"}, "status": 500})
	path := fmt.Sprintf("/questions/search?seller_id=%d", srv.Seller.ID)
	is.Equal(srv.do("GET", path+"&status=UNANSWERED", srv.Seller.Token, nil).Status, 500)
	is.Equal(srv.do("GET", path+"&status=ANSWERED", srv.Seller.Token, nil).Status, http.StatusOK)
	is.Equal(srv.do("GET", path, srv.Seller.Token, nil).Status, http.StatusOK)
}

func TestFaults_RuleMatchesABodyFieldAndTheRouteStillReadsTheBody(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, buyer, other := ts.mustUser("MLA"), ts.mustUser("MLA"), ts.mustUser("MLA")
	bl := fmt.Sprintf("/users/%d/questions_blacklist", seller.ID)
	ts.mustFault(map[string]any{"method": "POST", "body_fields": map[string]any{"user_id": buyer.ID}, "status": 503})

	is.Equal(ts.do("POST", bl, seller.Token, map[string]any{"user_id": buyer.ID}).Status, 503)
	res := ts.do("POST", bl, seller.Token, map[string]any{"user_id": other.ID})
	is.Equal(res.Status, http.StatusCreated) // another value: served, the body read whole after the rule read it
	users := ts.do("GET", bl, seller.Token, nil).Obj()["users"].([]any)
	is.Equal(len(users), 1)
	is.Equal(users[0].(map[string]any)["user_id"], float64(other.ID))
}

func TestFaultsAPI_BadWireAndSelectorRulesAre400WithTheFieldNamed(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		name string
		body any
		msg  string
	}{
		{"UnknownField", map[string]any{"status": 500, "qeury": map[string]any{"a": "b"}}, "Invalid field: qeury. A fault rule has the fields method, route, user_id, application_id, query, body_fields, status, body, fault, latency_ms, bytes_per_second, probability, times, requests_per_minute, per"},
		{"UnknownFault", map[string]any{"fault": "SOCKET_TIMEOUT"}, "Invalid fault: SOCKET_TIMEOUT. It must be one of CONNECTION_RESET_BY_PEER, EMPTY_RESPONSE, MALFORMED_RESPONSE_CHUNK, RANDOM_DATA_THEN_CLOSE, MALFORMED_JSON"},
		{"FaultWithStatus", map[string]any{"fault": "EMPTY_RESPONSE", "status": 500}, "Invalid status: a rule with fault EMPTY_RESPONSE answers no status of its own"},
		{"QueryValueNotAString", map[string]any{"status": 500, "query": map[string]any{"status": 1}}, "Invalid JSON: the field [query] must be of type string"},
		{"QueryNotAnObject", map[string]any{"status": 500, "query": "status=UNANSWERED"}, "Invalid JSON: the field [query] must be of type object"},
		{"BodyFieldPath", map[string]any{"status": 500, "body_fields": map[string]any{"item.": "MLA1"}}, "Invalid body_fields: the path [item.] has an empty segment; write fields as item_id or shipping.mode"},
		{"BytesPerSecond", map[string]any{"bytes_per_second": -1}, "Invalid bytes_per_second: -1. It must be from 1 to 10485760"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, ts.do("POST", "/operator/faults", testOperatorToken, tc.body), 400, tc.msg)
		})
	}
	if got := ts.do("GET", "/operator/faults", testOperatorToken, nil).Obj()["results"].([]any); len(got) != 0 {
		t.Fatalf("refused rules were stored: %v", got)
	}
}

// pacedServer is a server whose trickle pauses are told to the test, each
// waiting until the test lets it go.
func pacedServer(t *testing.T) (url string, pauses chan time.Duration, resume chan struct{}) {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	h := httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk})
	pauses, resume = make(chan time.Duration), make(chan struct{})
	h.SetSleep(func(ctx context.Context, d time.Duration) error {
		select {
		case pauses <- d:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, pauses, resume
}

func TestFaults_TrickledAnswerArrivesPieceByPieceAtItsRate(t *testing.T) {
	is := is.New(t)
	base, pauses, resume := pacedServer(t)
	get := func() *http.Response {
		resp, err := freshClient().Get(base + "/health")
		is.NoErr(err)
		return resp
	}
	resp := get()
	whole, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	req, _ := http.NewRequest("POST", base+"/operator/faults", strings.NewReader(`{"route":"/health","bytes_per_second":100}`))
	req.Header.Set("Authorization", "Bearer "+testOperatorToken)
	res, err := freshClient().Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusCreated)

	resp = get()
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)
	// At 100 bytes a second a piece is one byte, then a pause of 10 ms:
	// while the server waits, the client has the first byte and no more.
	is.Equal(<-pauses, 10*time.Millisecond)
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(buf[0], whole[0])

	done, counted := make(chan struct{}), make(chan int)
	go func() {
		n := 1
		resume <- struct{}{}
		for {
			select {
			case d := <-pauses:
				if d != 10*time.Millisecond {
					t.Errorf("pause %v, want 10ms", d)
				}
				n++
				resume <- struct{}{}
			case <-done:
				// No pause follows the last piece: every one is counted.
				counted <- n
				return
			}
		}
	}()
	rest, err := io.ReadAll(resp.Body)
	close(done)
	is.NoErr(err)
	is.Equal(string(buf[:1])+string(rest), string(whole)) // the route's own answer, whole
	is.Equal(<-counted, len(whole)-1)                     // a pause before every byte but the first
}
