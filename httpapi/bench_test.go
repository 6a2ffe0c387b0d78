package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/metrics"
)

// bareHandler answers every request on path with body, through httprouter
// and nothing else: the baseline that the full stack is compared with.
func bareHandler(method, path string, body []byte, headers ...string) http.Handler {
	r := httprouter.New()
	r.Handle(method, path, func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	return r
}

// benchServe serves req on h b.N times, in parallel.
func benchServe(b *testing.B, h http.Handler, method, target, token string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(method, target, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
}

// BenchmarkGetUser compares GET /users/:user_id through the whole stack
// (routing, token lookup, storage read, JSON) with a bare httprouter handler
// answering the same bytes.
func BenchmarkGetUser(b *testing.B) {
	ts := newTestServer(b)
	u := ts.mustUser("MLA", "normal", "warehouse_management")
	path := fmt.Sprintf("/users/%d", u.ID)
	res := ts.do("GET", path, u.Token, nil)
	b.Run("stack", func(b *testing.B) { benchServe(b, ts.handler, "GET", path, u.Token) })
	metered := httpapi.New(ts.m, httpapi.Config{OperatorToken: testOperatorToken, Metrics: metrics.New()})
	b.Run("stack+metrics", func(b *testing.B) { benchServe(b, metered, "GET", path, u.Token) })
	b.Run("bare", func(b *testing.B) {
		benchServe(b, bareHandler("GET", "/users/:user_id", res.Raw), "GET", path, u.Token)
	})
}
