package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/httpapi/openapi"
)

func TestOpenAPI_ServedAsJSONAtOpenAPIJSON(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("GET", "/openapi.json", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Raw)
	}
	if res.Obj()["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", res.Obj()["openapi"])
	}
	paths, _ := res.Obj()["paths"].(map[string]any)
	if _, ok := paths["/user-products/{user_product_id}/stock"]; !ok {
		t.Errorf("paths lack the stock route: %v", paths)
	}
}

// TestOpenAPI_AnAnswerThatBreaksTheDocumentIsReported keeps the check of
// every test's answers honest: an answer of the wrong shape is caught.
func TestOpenAPI_AnAnswerThatBreaksTheDocumentIsReported(t *testing.T) {
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
		wantOK             bool
	}{
		{"OK health", "GET", "/health", 200, `{"status":"ok"}`, true},
		{"ErrHealthWithoutStatus", "GET", "/health", 200, `{"state":"ok"}`, false},
		{"OK error shape", "GET", "/items/MLA1", 404, `{"message":"x","error":"not_found","status":404,"cause":[]}`, true},
		{"ErrErrorWithoutCause", "GET", "/items/MLA1", 404, `{"message":"x","error":"not_found","status":404}`, false},
		{"ErrStockWithoutLocations", "GET", "/user-products/MLAU1/stock", 200, `{"id":"MLAU1","user_id":1}`, false},
		{"OK item with the fields the document lists", "GET", "/items/MLA1", 200, `{"id":"MLA1","condition":"new","permalink":"https://x"}`, true},
		{"ErrItemWithAFieldTheDocumentDoesNotList", "GET", "/items/MLA1", 200, `{"id":"MLA1","warranty":"1 year"}`, false},
		{"ErrErrorWithAFieldTheDocumentDoesNotList", "GET", "/items/MLA1", 404, `{"message":"x","error":"not_found","status":404,"cause":[],"hint":"y"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			res := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
				Body: io.NopCloser(bytes.NewReader([]byte(tc.body)))}
			findings := v.Response(req, res)
			if tc.wantOK != (len(findings) == 0) {
				t.Errorf("findings %v, want ok=%v", findings, tc.wantOK)
			}
		})
	}
}

func TestValidateRequests_ABodyThatBreaksTheDocumentIsRefusedWith400(t *testing.T) {
	ts := newTestServer(t)
	ts.handler = httpapi.New(ts.m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ValidateRequests: true}))
	seller, stores := ts.mustSeller(1)
	_ = stores
	// quantity must be an integer by the document.
	res := ts.do("POST", "/items/multiwarehouse", seller.Token, `{"title":"x","stock_locations":[{"store_id":"1","quantity":"many"}]}`)
	if res.Status != http.StatusBadRequest || res.Obj()["error"] != "bad_request" {
		t.Fatalf("got %d %s, want 400 bad_request", res.Status, res.Raw)
	}
	if c, _ := res.Obj()["cause"].([]any); len(c) == 0 {
		t.Errorf("cause is empty, want the validator's findings: %s", res.Raw)
	}
	// A request that matches goes through to the handler.
	res = ts.do("GET", "/health", "", nil)
	if res.Status != http.StatusOK {
		t.Errorf("GET /health: %d %s", res.Status, res.Raw)
	}
}

// curl -d and clients that name no type send JSON bodies as something
// else; the handlers read them as JSON, and so does the check.
func TestValidateRequests_AJSONBodySentAsAnotherTypeIsCheckedAsJSON(t *testing.T) {
	ts := newTestServer(t)
	ts.handler = httpapi.New(ts.m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ValidateRequests: true}))
	seller, stores := ts.mustSeller(1)
	for _, contentType := range []string{"", "application/x-www-form-urlencoded", "text/plain"} {
		t.Run("type "+contentType, func(t *testing.T) {
			bad := ts.do("POST", "/items/multiwarehouse", seller.Token, `{"title":"x","stock_locations":[{"store_id":"1","quantity":"many"}]}`,
				"Content-Type", contentType)
			causes, _ := bad.Obj()["cause"].([]any)
			if bad.Status != http.StatusBadRequest || len(causes) == 0 || !strings.Contains(string(bad.Raw), "quantity") {
				t.Fatalf("got %d %s, want 400 naming quantity", bad.Status, bad.Raw)
			}
			good := ts.do("POST", "/items/multiwarehouse", seller.Token, `{"title":"Red mug","category_id":"MLA1055","price":1500,"currency_id":"ARS",`+
				`"listing_type_id":"gold_special","stock_locations":[{"store_id":"`+stores[0]+`","quantity":4}]}`, "Content-Type", contentType)
			if good.Status != http.StatusCreated {
				t.Fatalf("a body that matches: got %d %s, want 201", good.Status, good.Raw)
			}
		})
	}
}
