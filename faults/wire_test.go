package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

// reqWith is a request to route with a query and a body.
func reqWith(method, route string, query map[string][]string, body string) faults.Request {
	r := req(method, route, 0, 0)
	r.Query = func(name string) []string { return query[name] }
	r.Body = func() []byte { return []byte(body) }
	return r
}

func TestDecide_RuleMatchesQueryParameters(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		mustCreate(t, s, faults.NewRule{Route: ptr("/questions/search"), Query: map[string]string{"status": "UNANSWERED"}, Status: ptr(500)})

		_, ok := decide(t, s, reqWith("GET", "/questions/search", map[string][]string{"status": {"UNANSWERED"}, "seller_id": {"7"}}, ""))
		is.True(ok) // other parameters do not matter
		_, ok = decide(t, s, reqWith("GET", "/questions/search", map[string][]string{"status": {"ANSWERED", "UNANSWERED"}}, ""))
		is.True(ok) // one of a repeated parameter's values is enough
		_, ok = decide(t, s, reqWith("GET", "/questions/search", map[string][]string{"status": {"ANSWERED"}}, ""))
		is.True(!ok) // another value
		_, ok = decide(t, s, reqWith("GET", "/questions/search", nil, ""))
		is.True(!ok) // absent
		_, ok = decide(t, s, req("GET", "/questions/search", 0, 0))
		is.True(!ok) // a request that gives no query
	})
}

func TestDecide_RuleMatchesJSONBodyFieldsByDottedPath(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		mustCreate(t, s, faults.NewRule{Method: ptr("POST"), BodyFields: map[string]json.RawMessage{
			"item_id": json.RawMessage(`"MLA1"`), "shipping.mode": json.RawMessage(`"me2"`), "tags.1": json.RawMessage(`2`),
		}, Status: ptr(503)})

		_, ok := decide(t, s, reqWith("POST", "/questions", nil, `{"item_id":"MLA1","text":"x","shipping":{"mode":"me2"},"tags":[1,2.0]}`))
		is.True(ok) // every field equal; numbers compare as numbers
		for name, body := range map[string]string{
			"other value":   `{"item_id":"MLA2","shipping":{"mode":"me2"},"tags":[1,2]}`,
			"missing":       `{"item_id":"MLA1","tags":[1,2]}`,
			"index outside": `{"item_id":"MLA1","shipping":{"mode":"me2"},"tags":[1]}`,
			"other type":    `{"item_id":"MLA1","shipping":{"mode":"me2"},"tags":[1,"2"]}`,
			"not JSON":      `item_id=MLA1`,
			"empty":         ``,
		} {
			if _, ok := decide(t, s, reqWith("POST", "/questions", nil, body)); ok {
				t.Errorf("%s: faulted, want a body without every field spared", name)
			}
		}
	})
}

func TestDecide_BodyIsReadOnlyWhenARuleSelectsOnIt(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	mustCreate(t, s, faults.NewRule{Method: ptr("GET"), Status: ptr(500)})
	mustCreate(t, s, faults.NewRule{Method: ptr("POST"), BodyFields: map[string]json.RawMessage{"a": json.RawMessage(`1`)}, Status: ptr(500)})
	mustCreate(t, s, faults.NewRule{Method: ptr("POST"), BodyFields: map[string]json.RawMessage{"b": json.RawMessage(`1`)}, Status: ptr(502)})
	reads := 0
	r := req("POST", "/questions", 0, 0)
	r.Body = func() []byte { reads++; return []byte(`{"b":1}`) }
	act, ok := decide(t, s, r)
	is.True(ok)
	is.Equal(act.Status, 502)
	is.Equal(reads, 1) // read once for both rules that need it
	r.Method = "GET"
	reads = 0
	_, ok = decide(t, s, r)
	is.True(ok)
	is.Equal(reads, 0) // no rule asked
}

func TestDecide_WireFaultIsTheAction(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		r := mustCreate(t, s, faults.NewRule{Route: ptr("/items/{id}"), Fault: ptr(faults.WireFault("connection_reset_by_peer")), LatencyMS: ptr[int64](5)})
		is.Equal(*r.Fault, faults.ConnectionResetByPeer) // the name is normalized
		is.Equal(r.Status, nil)
		is.Equal(r.Body, nil) // a wire fault has no body of its own
		act, ok := decide(t, s, req("GET", "/items/{item_id}", 0, 0))
		is.True(ok)
		is.Equal(act.Fault, faults.ConnectionResetByPeer)
		is.Equal(act.Status, 0)
		is.Equal(act.Latency.Milliseconds(), int64(5))

		// Kept in the store: another service on it reads the same rule.
		other := faults.New(st, clock.NewManual(start), faults.Options{})
		act, ok = decide(t, other, req("GET", "/items/{item_id}", 0, 0))
		is.True(ok)
		is.Equal(act.Fault, faults.ConnectionResetByPeer)
	})
}

func TestDecide_TrickleRulePacesTheAnswer(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	mustCreate(t, s, faults.NewRule{BytesPerSecond: ptr[int64](100)})
	act, ok := decide(t, s, req("GET", "/health", 0, 0))
	is.True(ok)
	is.Equal(act.BytesPerSecond, int64(100))
	is.Equal(act.Status, 0) // alone, the route answers, slowly
}

func TestCreate_BadWireRulesAreRefusedWithTheFieldNamed(t *testing.T) {
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	reset := ptr(faults.ConnectionResetByPeer)
	for _, tc := range []struct {
		name string
		in   faults.NewRule
		want string
	}{
		{"unknown fault", faults.NewRule{Fault: ptr(faults.WireFault("TIMEOUT"))}, "Invalid fault: TIMEOUT. It must be one of CONNECTION_RESET_BY_PEER, EMPTY_RESPONSE, MALFORMED_RESPONSE_CHUNK, RANDOM_DATA_THEN_CLOSE, MALFORMED_JSON"},
		{"fault with status", faults.NewRule{Fault: reset, Status: ptr(500)}, "Invalid status: a rule with fault CONNECTION_RESET_BY_PEER answers no status of its own"},
		{"fault with body", faults.NewRule{Fault: ptr(faults.MalformedJSON), Body: json.RawMessage(`{}`)}, "Invalid body: a rule with fault MALFORMED_JSON writes no body of its own"},
		{"fault as rate limit", faults.NewRule{Fault: reset, RequestsPerMinute: ptr[int64](5)}, "Invalid fault: a rate limit answers a status"},
		{"trickle of a closed connection", faults.NewRule{Fault: ptr(faults.EmptyResponse), BytesPerSecond: ptr[int64](10)}, "Invalid bytes_per_second: fault EMPTY_RESPONSE closes the connection"},
		{"bytes_per_second zero", faults.NewRule{BytesPerSecond: ptr[int64](0)}, "Invalid bytes_per_second: 0. It must be from 1 to 10485760"},
		{"bytes_per_second too high", faults.NewRule{BytesPerSecond: ptr[int64](faults.MaxBytesPerSecond + 1)}, "Invalid bytes_per_second: 10485761"},
		{"query empty name", faults.NewRule{Query: map[string]string{" ": "x"}, Status: ptr(500)}, "Invalid query: a parameter name must not be empty"},
		{"body field empty segment", faults.NewRule{BodyFields: map[string]json.RawMessage{"shipping..mode": json.RawMessage(`"me2"`)}, Status: ptr(500)}, "Invalid body_fields: the path [shipping..mode] has an empty segment"},
		{"body field not JSON", faults.NewRule{BodyFields: map[string]json.RawMessage{"item_id": json.RawMessage(`MLA1`)}, Status: ptr(500)}, "Invalid body_fields: the value of [item_id] must be a JSON value"},
		{"body field too deep", faults.NewRule{BodyFields: map[string]json.RawMessage{strings.Repeat("a.", 16) + "a": json.RawMessage(`1`)}, Status: ptr(500)}, "has more than 16 segments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(context.Background(), tc.in)
			e := errs.As(err)
			if e == nil || e.Kind != errs.Invalid || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("err = %v, want Invalid with %q", err, tc.want)
			}
		})
	}
	rules, err := s.List(context.Background())
	if err != nil || len(rules) != 0 {
		t.Fatalf("a refused rule was stored: %v %v", rules, err)
	}
}

func TestMalformedJSONBody_FailsToDecode(t *testing.T) {
	var v any
	err := json.Unmarshal([]byte(faults.MalformedJSONBody), &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("Unmarshal err = %v, want a *json.SyntaxError", err)
	}
}
