package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/storage/memory"
)

func TestPanicIs500InErrorShapeAndTheServerKeepsServing(t *testing.T) {
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(m, Config{})
	s.handle(get("/boom", open(func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		panic("boom")
	})))
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("status = %d", rec.Code)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body["error"] != "internal_error" || body["status"] != float64(500) || body["message"] != "Internal server error" {
			t.Fatalf("body = %v", body)
		}
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("health after panic: %d", rec.Code)
	}
}
