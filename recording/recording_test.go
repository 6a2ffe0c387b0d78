package recording_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/recording"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/stubs"
)

// exchange is a GET of path answered 200 with body, as JSON.
func exchange(method, target, body string) recording.Exchange {
	path, query, _ := strings.Cut(target, "?")
	return recording.Exchange{Method: method, Path: path, RawQuery: query,
		RequestHeader:  http.Header{"Authorization": {"Bearer APP_USR-1234567-120101-abcdef0123456789-99"}},
		Status:         200,
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		ResponseBody:   []byte(body)}
}

// mappingOf captures ex alone and returns its mapping.
func mappingOf(t *testing.T, ex recording.Exchange) map[string]any {
	t.Helper()
	rec := newRecorder(t, recording.Options{})
	if _, err := rec.Add(recording.Capture(ex)); err != nil {
		t.Fatal(err)
	}
	ms := rec.Mappings()
	if len(ms) != 1 {
		t.Fatalf("%d mappings; want 1", len(ms))
	}
	var m map[string]any
	if err := json.Unmarshal(ms[0], &m); err != nil {
		t.Fatal(err)
	}
	if _, err := stubs.Parse(ms[0]); err != nil {
		t.Fatalf("the stubs refuse the recorded mapping: %v\n%s", err, ms[0])
	}
	return m
}

func newRecorder(t *testing.T, o recording.Options) *recording.Recorder {
	t.Helper()
	r, err := recording.NewRecorder(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// playback loads mappings into a stub service of their own and returns
// it.
func playback(t *testing.T, mappings []json.RawMessage) *stubs.Service {
	t.Helper()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	s := stubs.New(st)
	for _, m := range mappings {
		if _, err := s.Create(context.Background(), m); err != nil {
			t.Fatalf("load %s: %v", m, err)
		}
	}
	return s
}

func answerOf(t *testing.T, s *stubs.Service, r *stubs.Request) (*stubs.Answer, bool) {
	t.Helper()
	a, ok, err := s.Answer(context.Background(), r, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, ok
}

func TestCapture_TheAnswerReplaysByteForByte(t *testing.T) {
	cases := []struct {
		name, contentType, body, field string
	}{
		// The stubs write a jsonBody compact with its members sorted: a
		// body already so is kept readable as jsonBody.
		{"compact sorted JSON", "application/json", `{"id":"MLA1","price":10.5,"tags":["a"]}`, "jsonBody"},
		// Anything else would change on the way back: kept as text.
		{"JSON in the API's order", "application/json", `{"site_id":"MLA","id":"MLA1"}`, "body"},
		{"indented JSON", "application/json", "{\n  \"id\": \"MLA1\"\n}\n", "body"},
		{"a number a float cannot hold", "application/json", `{"id":12345678901234567890}`, "body"},
		{"HTML-looking JSON", "application/json", `{"a":"<b>&"}`, "jsonBody"},
		{"text", "text/plain; charset=utf-8", "not found\n", "body"},
		{"not UTF-8", "application/octet-stream", "\xff\xfe\x00binary", "base64Body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := exchange("GET", "/items/MLA1", c.body)
			ex.ResponseHeader.Set("Content-Type", c.contentType)
			m := mappingOf(t, ex)
			resp := m["response"].(map[string]any)
			if _, ok := resp[c.field]; !ok {
				t.Errorf("response = %v; want the body as %s", resp, c.field)
			}
			b, _ := json.Marshal(m)
			s := playback(t, []json.RawMessage{b})
			a, ok := answerOf(t, s, &stubs.Request{Method: "GET", Path: "/items/MLA1"})
			if !ok {
				t.Fatal("the recording does not answer its own request")
			}
			if !bytes.Equal(a.Body, []byte(c.body)) || a.Status != 200 {
				t.Errorf("replayed %d %q; want 200 %q", a.Status, a.Body, c.body)
			}
		})
	}
}

func TestCapture_ConnectionAndDeliveryHeadersAreNotRecorded(t *testing.T) {
	ex := exchange("GET", "/items/MLA1", `{}`)
	ex.ResponseHeader = http.Header{
		"Content-Type":      {"application/json;charset=UTF-8"},
		"X-Request-Id":      {"abc-123"},
		"Cache-Control":     {"max-age=60"},
		"Connection":        {"keep-alive, X-Hop"},
		"X-Hop":             {"1"},
		"Keep-Alive":        {"timeout=5"},
		"Transfer-Encoding": {"chunked"},
		"Date":              {"Mon, 07 Dec 2026 12:00:00 GMT"},
		"Set-Cookie":        {"session=s3cr3t-value-123; HttpOnly"},
		"Content-Length":    {"2"},
		"X-Auth-Token":      {"whatever-it-holds"},
	}
	m := mappingOf(t, ex)
	got := m["response"].(map[string]any)["headers"].(map[string]any)
	want := map[string]any{"Content-Type": "application/json;charset=UTF-8", "X-Request-Id": "abc-123", "Cache-Control": "max-age=60"}
	if len(got) != len(want) {
		t.Errorf("headers = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("header %s = %v; want %v", k, got[k], v)
		}
	}
}

func TestCapture_TheRequestIsMatchedByMethodPathQueryAndBodyNotByHeaders(t *testing.T) {
	ex := exchange("POST", "/items/MLA1/relist?site=MLA&attributes=id,price", `{"id":"MLA2"}`)
	ex.RequestHeader.Set("Content-Type", "application/json")
	ex.RequestHeader.Set("X-Format-New", "true")
	ex.RequestBody = []byte(`{"price": 10, "quantity": 1}`)
	m := mappingOf(t, ex)
	req := m["request"].(map[string]any)
	if req["method"] != "POST" || req["urlPath"] != "/items/MLA1/relist" || req["headers"] != nil {
		t.Errorf("request = %v; want POST urlPath /items/MLA1/relist and no header matcher", req)
	}
	q := req["queryParameters"].(map[string]any)
	if q["site"].(map[string]any)["equalTo"] != "MLA" || q["attributes"].(map[string]any)["equalTo"] != "id,price" {
		t.Errorf("queryParameters = %v", q)
	}
	b, _ := json.Marshal(m)
	s := playback(t, []json.RawMessage{b})
	same := &stubs.Request{Method: "POST", Path: "/items/MLA1/relist", RawQuery: "attributes=id%2Cprice&site=MLA",
		Body: []byte(`{"quantity":1,"price":10}`)}
	if _, ok := answerOf(t, s, same); !ok {
		t.Error("the same request (query reordered, JSON rewritten) is not answered")
	}
	other := &stubs.Request{Method: "POST", Path: "/items/MLA1/relist", RawQuery: "attributes=id%2Cprice&site=MLA",
		Body: []byte(`{"quantity":2,"price":10}`)}
	if _, ok := answerOf(t, s, other); ok {
		t.Error("a request with another body is answered")
	}
}

func TestCapture_SecretsOfTheRequestAreLeftToAnyValue(t *testing.T) {
	t.Run("query", func(t *testing.T) {
		ex := exchange("GET", "/users/me?access_token=APP_USR-999-abc&attributes=id", `{"id":1}`)
		m := mappingOf(t, ex)
		q := m["request"].(map[string]any)["queryParameters"].(map[string]any)
		if _, ok := q["access_token"]; ok || len(q) != 1 {
			t.Errorf("queryParameters = %v; want attributes only", q)
		}
		b, _ := json.Marshal(m)
		s := playback(t, []json.RawMessage{b})
		if _, ok := answerOf(t, s, &stubs.Request{Method: "GET", Path: "/users/me", RawQuery: "access_token=APP_USR-other-token&attributes=id"}); !ok {
			t.Error("a replay with another token is not answered")
		}
	})
	t.Run("form", func(t *testing.T) {
		ex := exchange("POST", "/oauth/token", `{"access_token":"APP_USR-1-2-3","token_type":"Bearer"}`)
		ex.RequestHeader = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		ex.RequestBody = []byte("grant_type=authorization_code&client_id=123&client_secret=aVeryS3cretValue&code=TG-5f2a-1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb")
		m := mappingOf(t, ex)
		b, _ := json.Marshal(m)
		for _, secret := range []string{"aVeryS3cretValue", "TG-5f2a-1", "APP_USR-1-2-3"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the mapping holds %s: %s", secret, b)
			}
		}
		s := playback(t, []json.RawMessage{b})
		again := &stubs.Request{Method: "POST", Path: "/oauth/token",
			Body: []byte("grant_type=authorization_code&client_id=123&client_secret=another&code=TG-other&redirect_uri=https%3A%2F%2Fapp.example%2Fcb")}
		if _, ok := answerOf(t, s, again); !ok {
			t.Errorf("a replay with other secrets is not answered by %s", b)
		}
		otherClient := &stubs.Request{Method: "POST", Path: "/oauth/token",
			Body: []byte("grant_type=authorization_code&client_id=456&client_secret=another&code=TG-other&redirect_uri=https%3A%2F%2Fapp.example%2Fcb")}
		if _, ok := answerOf(t, s, otherClient); ok {
			t.Error("another client is answered")
		}
	})
	t.Run("JSON", func(t *testing.T) {
		ex := exchange("POST", "/oauth/token", `{"access_token":"APP_USR-1-2-3"}`)
		ex.RequestHeader = http.Header{"Content-Type": {"application/json"}}
		ex.RequestBody = []byte(`{"grant_type":"refresh_token","client_id":"123","client_secret":"aVeryS3cretValue","refresh_token":"TG-abc-123","nested":{"password":"hunter2hunter2","site":"MLA"}}`)
		m := mappingOf(t, ex)
		b, _ := json.Marshal(m)
		for _, secret := range []string{"aVeryS3cretValue", "TG-abc-123", "hunter2hunter2", "APP_USR-1-2-3"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the mapping holds %s: %s", secret, b)
			}
		}
		s := playback(t, []json.RawMessage{b})
		again := &stubs.Request{Method: "POST", Path: "/oauth/token",
			Body: []byte(`{"client_secret":"x","grant_type":"refresh_token","client_id":"123","refresh_token":"TG-new","nested":{"site":"MLA","password":"y"}}`)}
		if _, ok := answerOf(t, s, again); !ok {
			t.Errorf("a replay with other secrets is not answered by %s", b)
		}
		without := &stubs.Request{Method: "POST", Path: "/oauth/token",
			Body: []byte(`{"grant_type":"refresh_token","client_id":"123","nested":{"site":"MLA"}}`)}
		if _, ok := answerOf(t, s, without); ok {
			t.Error("a replay without the secrets is answered: they are required")
		}
	})
}

func TestCapture_TokensInTheAnswerAreRedacted(t *testing.T) {
	ex := exchange("POST", "/oauth/token",
		`{"access_token":"APP_USR-123-456","token_type":"Bearer","refresh_token":"TG-789","user_id":1,"note":"use eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}`)
	ex.ResponseHeader.Set("X-Echo", "Bearer APP_USR-1234567-120101-abcdef0123456789-99")
	m := mappingOf(t, ex)
	b, _ := json.Marshal(m)
	for _, secret := range []string{"APP_USR-", "TG-789", "eyJhbGciOiJIUzI1NiJ9", "abcdef0123456789"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the mapping holds %s: %s", secret, b)
		}
	}
	if !bytes.Contains(b, []byte(`\"user_id\":1`)) {
		t.Errorf("the answer lost what is not a secret: %s", b)
	}
}

func TestRecorder_ADistinctRequestIsRecordedOnceWithItsFirstAnswer(t *testing.T) {
	rec := newRecorder(t, recording.Options{})
	for _, body := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := rec.Add(recording.Capture(exchange("GET", "/items/MLA1", body))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rec.Add(recording.Capture(exchange("GET", "/items/MLA1?attributes=id", `{"n":3}`))); err != nil {
		t.Fatal(err)
	}
	ms := rec.Mappings()
	if len(ms) != 2 {
		t.Fatalf("%d mappings; want 2 (one per distinct request)", len(ms))
	}
	s := playback(t, ms)
	for range 2 {
		a, ok := answerOf(t, s, &stubs.Request{Method: "GET", Path: "/items/MLA1"})
		if !ok || string(a.Body) != `{"n":1}` {
			t.Errorf("answer = %v %q; want the first answer, every time", ok, a.Body)
		}
	}
}

func TestRecorder_RepeatsReplayEachAnswerInOrderThenTheLast(t *testing.T) {
	rec := newRecorder(t, recording.Options{Repeats: true})
	answers := []string{`{"n":1}`, `{"n":1}`, `{"n":2}`, `{"n":3}`}
	for _, body := range answers {
		if _, err := rec.Add(recording.Capture(exchange("GET", "/orders/1", body))); err != nil {
			t.Fatal(err)
		}
	}
	ms := rec.Mappings()
	if len(ms) != 3 {
		t.Fatalf("%d mappings; want 3 (two like answers in a row are one with times 2)", len(ms))
	}
	var first map[string]any
	_ = json.Unmarshal(ms[0], &first)
	if first["marketplace"].(map[string]any)["times"] != 2.0 {
		t.Errorf("first mapping = %s; want times 2", ms[0])
	}
	s := playback(t, ms)
	want := append(answers, `{"n":3}`, `{"n":3}`)
	for i, w := range want {
		a, ok := answerOf(t, s, &stubs.Request{Method: "GET", Path: "/orders/1"})
		if !ok || string(a.Body) != w {
			t.Errorf("request %d: %v %q; want %q", i+1, ok, a.Body, w)
		}
	}
}

func TestRecorder_EachMappingIsAFileAndARecordingAgainReplacesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recorded")
	for run := range 2 {
		rec := newRecorder(t, recording.Options{Dir: dir, Repeats: true})
		for _, body := range []string{`{"n":1}`, `{"n":2}`} {
			if _, err := rec.Add(recording.Capture(exchange("GET", "/items/MLA1", body))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := rec.Add(recording.Capture(exchange("GET", "/sites/MLA", `{"id":"MLA"}`))); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(files) != 3 {
			t.Fatalf("run %d: files %v; want 3, one per mapping", run+1, files)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(f, ".json") {
				t.Errorf("file %s: want a .json name, as -stubs reads", f)
			}
			if _, err := stubs.Parse(b); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

func TestRecorder_AFilterRecordsOnlyTheRequestsItMatches(t *testing.T) {
	p, err := stubs.ParsePattern([]byte(`{"urlPathPattern":"/items/.*","method":"GET"}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, recording.Options{Filter: p})
	for _, ex := range []recording.Exchange{exchange("GET", "/items/MLA1", `{}`), exchange("GET", "/sites/MLA", `{}`), exchange("DELETE", "/items/MLA1", `{}`)} {
		if _, err := rec.Add(recording.Capture(ex)); err != nil {
			t.Fatal(err)
		}
	}
	if rec.Len() != 1 {
		t.Errorf("%d mappings; want 1: %s", rec.Len(), rec.Mappings())
	}
}

func TestSession_StartsStopsOnceAtATime(t *testing.T) {
	var s recording.Session
	if s.Status() != recording.NeverStarted {
		t.Errorf("status = %s; want NeverStarted", s.Status())
	}
	if _, _, err := s.Stop(); !errs.Is(err, errs.Conflict) {
		t.Errorf("stop before start: %v; want Conflict", err)
	}
	spec, err := recording.ParseStart([]byte(`{"targetBaseUrl":"http://127.0.0.1:9/api/","filters":{"method":"GET"},"marketplace":{"upstreamAll":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(spec, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(spec, false); !errs.Is(err, errs.Conflict) {
		t.Errorf("second start: %v; want Conflict", err)
	}
	f, ok := s.Forwarding()
	if !ok || f.Target.String() != "http://127.0.0.1:9/api" || !f.All {
		t.Errorf("forwarding = %+v, %v; want the target without its trailing slash, all", f, ok)
	}
	_ = s.Add(recording.Capture(exchange("GET", "/items/MLA1", `{}`)))
	_ = s.Add(recording.Capture(exchange("POST", "/items", `{}`)))
	ms, _, err := s.Stop()
	if err != nil || len(ms) != 1 || s.Status() != recording.Stopped {
		t.Errorf("stop: %d mappings, %v, %s; want 1 (the filter's), Stopped", len(ms), err, s.Status())
	}
	if _, ok := s.Forwarding(); ok {
		t.Error("a stopped recording still forwards")
	}
}

func TestParseStart_EveryFieldIsChecked(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"targetBaseUrl":"ftp://x"}`, "targetBaseUrl"},
		{`{"targetBaseUrl":"http://u:p@x"}`, "targetBaseUrl"},
		{`{"targetBaseUrl":"http://x/?a=1"}`, "targetBaseUrl"},
		{`{"filters":{"urlPathPattern":"("}}`, "filters"},
		{`{"captureHeaders":{}}`, "captureHeaders"},
		{`{"persist":"yes"}`, "persist"},
		{`{"marketplace":{"all":true}}`, "marketplace.all"},
		{`[]`, "body"},
	}
	for _, c := range cases {
		_, err := recording.ParseStart([]byte(c.body))
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want Invalid naming %s", c.body, err, c.want)
		}
	}
	if _, err := recording.ParseSnapshot([]byte(`{"targetBaseUrl":"http://x"}`)); !errs.Is(err, errs.Invalid) {
		t.Errorf("a snapshot with a target: %v; want Invalid", err)
	}
	spec, err := recording.ParseSnapshot(nil)
	if err != nil || !spec.Persist {
		t.Errorf("empty snapshot body: %+v, %v; want persist", spec, err)
	}
}

func TestLog_KeepsTheLastExchangesWithinItsBounds(t *testing.T) {
	l := recording.NewLog(2, 1<<20)
	for _, p := range []string{"/a", "/b", "/c"} {
		l.Add(recording.Capture(exchange("GET", p, `{}`)))
	}
	es := l.Entries()
	if len(es) != 2 || es[0].Name() != "GET /b" || es[1].Name() != "GET /c" {
		t.Errorf("entries = %v; want GET /b, GET /c", es)
	}
	small := recording.NewLog(10, 300)
	small.Add(recording.Capture(exchange("GET", "/big", strings.Repeat("x", 400))))
	if len(small.Entries()) != 0 {
		t.Error("an entry larger than the bound is kept")
	}
}

func TestHopByHop_StandardOnesAndThoseConnectionNames(t *testing.T) {
	h := http.Header{"Connection": {"close, X-Trace"}}
	for _, name := range []string{"Connection", "keep-alive", "Transfer-Encoding", "Upgrade", "x-trace", "Proxy-Authorization"} {
		if !recording.HopByHop(h, name) {
			t.Errorf("%s is not hop-by-hop", name)
		}
	}
	for _, name := range []string{"Authorization", "Content-Type", "X-Request-Id"} {
		if recording.HopByHop(h, name) {
			t.Errorf("%s is hop-by-hop", name)
		}
	}
	fwd := recording.ForwardHeader(http.Header{"Authorization": {"Bearer x"}, "Accept-Encoding": {"br"}, "Connection": {"X-Trace"}, "X-Trace": {"1"}})
	if fwd.Get("Authorization") != "Bearer x" || len(fwd) != 1 {
		t.Errorf("forwarded headers = %v; want Authorization only", fwd)
	}
}
