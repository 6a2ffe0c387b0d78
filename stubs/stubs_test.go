package stubs_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/stubs"
)

func TestMain(m *testing.M) {
	// The paths the HTTP server reserves from its route table, as the
	// tests of this package see them.
	stubs.Reserve("/operator/", "/console", "/console/", "/favicon.ico", "/health", "/ready", "/version", "/openapi.json", "/metrics")
	teststore.Main(m)
}

func mustCreate(t *testing.T, s *stubs.Service, mapping string) *stubs.Mapping {
	t.Helper()
	m, err := s.Create(context.Background(), []byte(mapping))
	if err != nil {
		t.Fatalf("create %s: %v", mapping, err)
	}
	return m
}

func answer(t *testing.T, s *stubs.Service, r *stubs.Request) (*stubs.Answer, bool) {
	t.Helper()
	a, ok, err := s.Answer(context.Background(), r, false, nil)
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	return a, ok
}

func get(path string) *stubs.Request {
	p, q, _ := strings.Cut(path, "?")
	return &stubs.Request{Method: "GET", Path: p, RawQuery: q}
}

func TestParse_UnknownOrMalformedFieldsAreRefusedNamingTheField(t *testing.T) {
	cases := []struct{ name, mapping, want string }{
		{"unknown top-level field", `{"request":{},"response":{},"scenarioName":"x"}`, "field mapping.scenarioName"},
		{"unknown request field", `{"request":{"cookies":{}},"response":{}}`, "field request.cookies"},
		{"unknown matcher", `{"request":{"headers":{"Accept":{"equalToXml":"<a/>"}}},"response":{}}`, "field request.headers.Accept.equalToXml"},
		{"no matcher", `{"request":{"queryParameters":{"q":{}}},"response":{}}`, "field request.queryParameters.q"},
		{"two matchers", `{"request":{"queryParameters":{"q":{"equalTo":"a","contains":"b"}}},"response":{}}`, "field request.queryParameters.q"},
		{"bad regex", `{"request":{"urlPathPattern":"/a/("},"response":{}}`, "field request.urlPathPattern"},
		{"two urls", `{"request":{"url":"/a","urlPath":"/a"},"response":{}}`, "request.urlPath"},
		{"bad JSONPath", `{"request":{"bodyPatterns":[{"matchesJsonPath":"$[?("}]},"response":{}}`, "field request.bodyPatterns[0].matchesJsonPath"},
		{"unknown body matcher", `{"request":{"bodyPatterns":[{"equalToXml":"<a/>"}]},"response":{}}`, "field request.bodyPatterns[0].equalToXml"},
		{"bad status", `{"request":{},"response":{"status":99}}`, "field response.status"},
		{"two bodies", `{"request":{},"response":{"body":"a","jsonBody":{}}}`, "field response.body"},
		{"unknown fault", `{"request":{},"response":{"fault":"BREAK_IT"}}`, "field response.fault"},
		{"unknown transformer", `{"request":{},"response":{"transformers":["x"]}}`, "field response.transformers"},
		{"unknown template", `{"request":{},"response":{"body":"{{now}}","transformers":["response-template"]}}`, "{{now}}"},
		{"bad id", `{"id":"7","request":{},"response":{}}`, "field id"},
		{"priority 0", `{"priority":0,"request":{},"response":{}}`, "field priority"},
		{"times 0", `{"marketplace":{"times":0},"request":{},"response":{}}`, "field marketplace.times"},
		{"unknown extension", `{"marketplace":{"forever":true},"request":{},"response":{}}`, "field marketplace.forever"},
		{"no request", `{"response":{}}`, "field request"},
		{"not an object", `[]`, "field mapping"},
		{"delay too long", `{"request":{},"response":{"fixedDelayMilliseconds":30001}}`, "field response.fixedDelayMilliseconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := stubs.Parse([]byte(c.mapping))
			if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want Invalid naming %q", err, c.want)
			}
		})
	}
}

func TestMatch_EachMatcherKind(t *testing.T) {
	cases := []struct {
		name, request string
		match, miss   *stubs.Request
	}{
		{"url is path and query", `{"url":"/a?x=1"}`, get("/a?x=1"), get("/a?x=2")},
		{"urlPath ignores the query", `{"urlPath":"/a"}`, get("/a?x=2"), get("/a/b")},
		{"urlPattern is a whole match", `{"urlPattern":"/a/[0-9]+\\?x=.*"}`, get("/a/12?x=1"), get("/a/12")},
		{"urlPathPattern", `{"urlPathPattern":"/a/[0-9]+"}`, get("/a/12?y"), get("/a/12b")},
		{"urlPathTemplate", `{"urlPathTemplate":"/payments/{id}"}`, get("/payments/7"), get("/payments/7/x")},
		{"method", `{"method":"POST"}`, &stubs.Request{Method: "POST", Path: "/"}, get("/")},
		{"equalTo", `{"queryParameters":{"q":{"equalTo":"Abc"}}}`, get("/?q=Abc"), get("/?q=abc")},
		{"equalTo caseInsensitive", `{"queryParameters":{"q":{"equalTo":"Abc","caseInsensitive":true}}}`, get("/?q=aBC"), get("/?q=ab")},
		{"contains", `{"queryParameters":{"q":{"contains":"b"}}}`, get("/?q=abc"), get("/?q=ac")},
		{"doesNotContain", `{"queryParameters":{"q":{"doesNotContain":"b"}}}`, get("/?q=ac"), get("/?q=abc")},
		{"matches", `{"queryParameters":{"q":{"matches":"[a-c]+"}}}`, get("/?q=abc"), get("/?q=abcd")},
		{"doesNotMatch", `{"queryParameters":{"q":{"doesNotMatch":"[0-9]+"}}}`, get("/?q=a1"), get("/?q=12")},
		{"absent", `{"queryParameters":{"q":{"absent":true}}}`, get("/?p=1"), get("/?q=")},
		{"present", `{"queryParameters":{"q":{"absent":false}}}`, get("/?q="), get("/")},
		{"one value of many", `{"queryParameters":{"q":{"equalTo":"b"}}}`, get("/?q=a&q=b"), get("/?q=a")},
		{"header names are case-insensitive", `{"headers":{"x-version":{"equalTo":"3"}}}`,
			&stubs.Request{Method: "GET", Path: "/", Header: map[string][]string{"X-Version": {"3"}}},
			&stubs.Request{Method: "GET", Path: "/", Header: map[string][]string{"X-Version": {"2"}}}},
		{"equalToJson is exact", `{"bodyPatterns":[{"equalToJson":{"a":1,"b":[1,2]}}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"b":[1,2],"a":1.0}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":1,"b":[1,2],"c":3}`)}},
		{"equalToJson as a string", `{"bodyPatterns":[{"equalToJson":"{\"a\":1}"}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":1}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":2}`)}},
		{"ignoreExtraElements", `{"bodyPatterns":[{"equalToJson":{"a":{"b":1}},"ignoreExtraElements":true}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":{"b":1,"c":2},"d":3}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":{"c":2}}`)}},
		{"ignoreArrayOrder", `{"bodyPatterns":[{"equalToJson":[1,2,3],"ignoreArrayOrder":true}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`[3,1,2]`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`[3,1,1]`)}},
		{"matchesJsonPath", `{"bodyPatterns":[{"matchesJsonPath":"$.things[?(@.name == 'RequiredThing')]"}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"things":[{"name":"RequiredThing"},{"name":"Wiremock"}]}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"price":15}`)}},
		{"matchesJsonPath with a nested matcher", `{"bodyPatterns":[{"matchesJsonPath":{"expression":"$.text","contains":"envío"}}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"text":"Hacemos envío gratis"}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"text":"Sí"}`)}},
		{"matchesJsonPath with a nested equalToJson", `{"bodyPatterns":[{"matchesJsonPath":{"expression":"$.a","equalToJson":{"b":1}}}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":{"b":1}}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{"a":{"b":2}}`)}},
		{"a body that is no JSON matches no JSON matcher", `{"bodyPatterns":[{"matchesJsonPath":"$"}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{}`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`{not json`)}},
		{"body contains", `{"bodyPatterns":[{"contains":"hola"}]}`,
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`dice hola`)},
			&stubs.Request{Method: "POST", Path: "/", Body: []byte(`chau`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := stubs.ParsePattern([]byte(c.request))
			if err != nil {
				t.Fatal(err)
			}
			if !p.Matches(c.match) {
				t.Errorf("%s does not match %+v", c.request, c.match)
			}
			if p.Matches(c.miss) {
				t.Errorf("%s matches %+v", c.request, c.miss)
			}
		})
	}
}

func TestAnswer_HighestPriorityFirstThenTheNewest(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"priority":10,"request":{"urlPathPattern":"/api/.*"},"response":{"status":401}}`)
	mustCreate(t, s, `{"priority":1,"request":{"urlPath":"/api/one"},"response":{"status":200}}`)
	if a, _ := answer(t, s, get("/api/one")); a.Status != 200 {
		t.Fatalf("priority 1 not first: %d", a.Status)
	}
	if a, _ := answer(t, s, get("/api/two")); a.Status != 401 {
		t.Fatalf("catch-all: %d", a.Status)
	}
	mustCreate(t, s, `{"priority":10,"request":{"urlPathPattern":"/api/.*"},"response":{"status":403}}`)
	if a, _ := answer(t, s, get("/api/two")); a.Status != 403 {
		t.Fatalf("the newest of equal priority is not first: %d", a.Status)
	}
	m := mustCreate(t, s, `{"request":{"urlPath":"/api/two"},"response":{"status":202}}`)
	if m.Priority != stubs.DefaultPriority {
		t.Fatalf("default priority = %d", m.Priority)
	}
	if a, _ := answer(t, s, get("/api/two")); a.Status != 202 {
		t.Fatalf("default priority 5 is not before 10: %d", a.Status)
	}
}

func TestAnswer_TimesAnswersThatManyEvenFromManyGoroutinesThenIsSpent(t *testing.T) {
	st := teststore.New(t)
	a, b := stubs.New(st), stubs.New(st) // two servers on one store
	mustCreate(t, a, `{"request":{"urlPath":"/x"},"response":{"status":200},"marketplace":{"times":5}}`)
	var answered atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			_, ok, err := s.Answer(context.Background(), get("/x"), false, nil)
			if err != nil {
				t.Error(err)
			}
			if ok {
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := answered.Load(); n != 5 {
		t.Fatalf("answered %d times, want 5", n)
	}
}

func TestAnswer_ARefusedRequestCostsAStubNothing(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"request":{"urlPath":"/x"},"response":{"status":200},"marketplace":{"times":1}}`)
	refuse := errs.Unauthorizedf("no token")
	if _, _, err := s.Answer(context.Background(), get("/x"), false, func(*stubs.Mapping) error { return refuse }); err != refuse {
		t.Fatalf("err = %v", err)
	}
	if _, ok := answer(t, s, get("/x")); !ok {
		t.Fatal("the refused request spent the stub")
	}
}

func TestAnswer_OnlyOverrideSkipsOrdinaryStubs(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"request":{"urlPath":"/x"},"response":{"status":200}}`)
	if s.HasOverride() {
		t.Fatal("override flag with no override stub")
	}
	if _, ok, _ := s.Answer(context.Background(), get("/x"), true, nil); ok {
		t.Fatal("an ordinary stub answered as an override")
	}
	mustCreate(t, s, `{"request":{"urlPath":"/x"},"response":{"status":503},"marketplace":{"override":true}}`)
	if !s.HasOverride() {
		t.Fatal("no override flag")
	}
	if a, ok, _ := s.Answer(context.Background(), get("/x"), true, nil); !ok || a.Status != 503 {
		t.Fatal("the override did not answer")
	}
}

func TestAnswer_AnotherServersNewStubAnswersAtOnce(t *testing.T) {
	st := teststore.New(t)
	a, b := stubs.New(st), stubs.New(st)
	if _, ok := answer(t, b, get("/x")); ok {
		t.Fatal("answer with no stub")
	}
	mustCreate(t, a, `{"request":{"urlPath":"/x"},"response":{"status":200}}`)
	if _, ok := answer(t, b, get("/x")); !ok {
		t.Fatal("the other server's stub did not answer")
	}
	if _, err := a.DeleteAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := answer(t, b, get("/x")); ok {
		t.Fatal("a deleted stub answered")
	}
}

func TestAnswer_TemplatesReadThePathQueryMethodAndBody(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"request":{"urlPathTemplate":"/payments/{id}"},"response":{
		"jsonBody":{"id":"{{request.path.id}}","q":"{{request.query.q}}","m":"{{request.method}}","n":"{{jsonPath request.body '$.n'}}",
		"u":"{{request.url}}","p":"{{request.path}}","s":"{{request.path.[0]}}","h":"{{request.headers.X-Trace}}","e":"{{request.query.e}}","r":"{{{request.query.e}}}"},
		"transformers":["response-template"]}}`)
	a, ok := answer(t, s, &stubs.Request{Method: "PUT", Path: "/payments/77", RawQuery: "q=a+b&e=%3Cb%3E",
		Header: map[string][]string{"X-Trace": {"t1"}}, Body: []byte(`{"n":12}`)})
	if !ok {
		t.Fatal("no answer")
	}
	want := `{"e":"&lt;b&gt;","h":"t1","id":"77","m":"PUT","n":"12","p":"/payments/77","q":"a b","r":"<b>","s":"payments","u":"/payments/77?q=a+b&amp;e=%3Cb%3E"}`
	if string(a.Body) != want {
		t.Fatalf("body = %s\nwant   %s", a.Body, want)
	}
}

func TestCreate_TheSameIDReplacesTheMapping(t *testing.T) {
	s := stubs.New(teststore.New(t))
	id := "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7"
	mustCreate(t, s, `{"id":"`+id+`","request":{"urlPath":"/x"},"response":{"status":200}}`)
	mustCreate(t, s, `{"id":"`+id+`","request":{"urlPath":"/x"},"response":{"status":201}}`)
	list, err := s.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", len(list), err)
	}
	if a, _ := answer(t, s, get("/x")); a.Status != 201 {
		t.Fatalf("status = %d", a.Status)
	}
	if err := s.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(context.Background(), id); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("second delete: %v", err)
	}
}

func TestParse_AStatusIsAFinalAnswerFrom200To599(t *testing.T) {
	for _, st := range []string{"100", "101", "103", "199", "600", "0", "-1"} {
		_, err := stubs.Parse([]byte(`{"request":{},"response":{"status":` + st + `}}`))
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "field response.status") {
			t.Errorf("status %s: err = %v, want Invalid naming response.status", st, err)
		}
	}
	for _, st := range []string{"200", "204", "302", "599"} {
		if _, err := stubs.Parse([]byte(`{"request":{},"response":{"status":` + st + `}}`)); err != nil {
			t.Errorf("status %s: %v", st, err)
		}
	}
}
