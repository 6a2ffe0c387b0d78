package openapi_test

import (
	"encoding/json"
	"testing"

	"github.com/marketplace/marketplace/httpapi/openapi"
)

func TestDocument_IsValidOpenAPI31(t *testing.T) {
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if _, err := openapi.NewValidator(); err != nil {
		t.Fatal(err)
	}
}
