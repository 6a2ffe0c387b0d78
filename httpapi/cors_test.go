package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/memory"
)

// newCORSServer is a server over a fresh engine with CORS for origins.
func newCORSServer(t *testing.T, origins ...string) http.Handler {
	t.Helper()
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, CORSOrigins: origins}))
}

// serveCORS sends method path with headers (name, value pairs).
func serveCORS(h http.Handler, method, path string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const app = "https://app.example.com"

func preflight(h http.Handler, path, origin, method string, more ...string) *httptest.ResponseRecorder {
	return serveCORS(h, http.MethodOptions, path, append([]string{"Origin", origin, "Access-Control-Request-Method", method}, more...)...)
}

func TestCORS_OffByDefaultOptionsAnswersTheMethodsAsJSON(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t)
	rec := preflight(h, "/items/MLA1", app, "PUT")
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Body.String(), "{\"allow\":[\"GET\",\"OPTIONS\",\"POST\",\"PUT\"]}\n")
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "")
	rec = serveCORS(h, "GET", "/currencies", "Origin", app)
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "") // no CORS headers
	is.Equal(rec.Header().Get("Vary"), "")
}

func TestCORS_PreflightFromAnAllowedOriginGetsThePathsMethodsAndTheAskedHeaders(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t, app, "http://localhost:5173")
	rec := preflight(h, "/items/MLA1", app, "PUT", "Access-Control-Request-Headers", "authorization, content-type")
	is.Equal(rec.Code, http.StatusNoContent)
	is.Equal(rec.Body.Len(), 0)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), app)
	is.Equal(rec.Header().Get("Access-Control-Allow-Methods"), "GET, OPTIONS, POST, PUT")
	is.Equal(rec.Header().Get("Access-Control-Allow-Headers"), "authorization, content-type")
	is.Equal(rec.Header().Get("Access-Control-Max-Age"), "600")
	is.Equal(rec.Header().Get("Access-Control-Allow-Credentials"), "") // tokens, not cookies
	is.Equal(rec.Header().Values("Vary"), []string{"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"})

	rec = preflight(h, "/user-products/X/stock/type/seller_warehouse", "http://localhost:5173", "PUT")
	is.Equal(rec.Code, http.StatusNoContent)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "http://localhost:5173")
	is.Equal(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization, Content-Type, X-Version") // none asked
}

func TestCORS_PreflightFromAnotherOriginOrWithoutARequestMethodIsThePlainOptionsAnswer(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t, app)
	rec := preflight(h, "/items/MLA1", "https://evil.example", "PUT")
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Body.String(), "{\"allow\":[\"GET\",\"OPTIONS\",\"POST\",\"PUT\"]}\n")
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "")
	is.Equal(rec.Header().Get("Access-Control-Allow-Methods"), "")

	rec = serveCORS(h, http.MethodOptions, "/items/MLA1", "Origin", app)
	is.Equal(rec.Code, http.StatusOK) // not a preflight: no Access-Control-Request-Method
	is.Equal(rec.Body.String(), "{\"allow\":[\"GET\",\"OPTIONS\",\"POST\",\"PUT\"]}\n")
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), app)
}

func TestCORS_PreflightOfAnUnknownPathIsThe404ErrorReadableByTheApp(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t, app)
	rec := preflight(h, "/nowhere", app, "GET")
	is.Equal(rec.Code, http.StatusNotFound)
	is.Equal(rec.Body.String(), "{\"message\":\"Resource OPTIONS /nowhere not found\",\"error\":\"not_found\",\"status\":404,\"cause\":[]}\n")
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), app)
}

func TestCORS_AnswersToAnAllowedOriginCarryTheHeadersErrorsToo(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t, app)
	rec := serveCORS(h, "GET", "/currencies/ARS", "Origin", app)
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), app)
	is.Equal(rec.Header().Get("Access-Control-Expose-Headers"), "X-Version, X-Total-Count")
	is.True(slices.Contains(rec.Header().Values("Vary"), "Origin"))

	rec = serveCORS(h, "GET", "/currencies", "Origin", app, "Authorization", "Bearer nope")
	is.Equal(rec.Code, http.StatusUnauthorized)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), app) // the app can read the error

	rec = serveCORS(h, "GET", "/currencies/ARS", "Origin", "https://evil.example")
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "")
	is.Equal(rec.Header().Get("Vary"), "Origin") // caches keep answers per origin
}

func TestCORS_AnyOriginIsAllowedWithStar(t *testing.T) {
	is := is.New(t)
	h := newCORSServer(t, "*")
	rec := serveCORS(h, "GET", "/sites", "Origin", "https://whoever.example")
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "*")
	is.Equal(rec.Header().Get("Vary"), "")
	rec = preflight(h, "/questions", "http://localhost:3000", "POST")
	is.Equal(rec.Code, http.StatusNoContent)
	is.Equal(rec.Header().Get("Access-Control-Allow-Origin"), "*")
	is.Equal(rec.Header().Get("Access-Control-Allow-Methods"), "OPTIONS, POST")
}

func TestCheckCORSOrigin_AcceptsStarAndOriginsOnly(t *testing.T) {
	is := is.New(t)
	for _, ok := range []string{"*", "https://app.example.com", "http://localhost:5173", "http://[::1]:8080"} {
		is.NoErr(httpapi.CheckCORSOrigin(ok))
	}
	for _, bad := range []string{"", "app.example.com", "https://app.example.com/", "https://x.example/p", "ftp://x.example", "https://u@x.example", "https://x.example?q"} {
		is.True(httpapi.CheckCORSOrigin(bad) != nil) // not an origin
	}
}
