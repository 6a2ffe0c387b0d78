package redact_test

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/internal/redact"
)

// BenchmarkRequestLogPath is what every logged request pays: a request's
// redactor (its Authorization header and query read) and its path.
func BenchmarkRequestLogPath(b *testing.B) {
	r := redact.New(operator)
	h := map[string][]string{"Authorization": {"Bearer APP_USR-a985b719e0f568269e0e12d0b29f76e7"},
		"Content-Type": {"application/json"}, "User-Agent": {"Go-http-client/1.1"}, "X-Version": {"3"}}
	known := func(string) bool { return false }
	b.ReportAllocs()
	for b.Loop() {
		_ = r.For(context.Background(), checkOf(known), h, "limit=50&offset=0").RoutedPath("/users/1000001/items/search")
	}
}

// BenchmarkBodyJSON redacts a typical item body of a journal with bodies.
func BenchmarkBodyJSON(b *testing.B) {
	r := redact.New(operator).For(context.Background(), checkOf(func(string) bool { return false }), nil, "")
	body := []byte(`{"title": "Mesa de roble maciza", "category_id": "MLA1902", "price": 12500.5, "currency_id": "ARS",
 "available_quantity": 3, "buying_mode": "buy_it_now", "listing_type_id": "gold_special", "condition": "new",
 "description": {"plain_text": "Mesa de roble de 1,80 m, seis sillas. Envíos a todo el país."},
 "pictures": [{"source": "https://example.com/mesa-roble-1.jpg"}, {"source": "https://example.com/mesa-roble-2.jpg"}],
 "attributes": [{"id": "BRAND", "value_name": "Roble Hnos"}, {"id": "MODEL", "value_name": "Clásica"}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = r.Body("application/json", body)
	}
}
