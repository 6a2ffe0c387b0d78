package catalog_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/catalog"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/product-views.golden from the code as it stands")

// The by-id answer of every product of the embedded dataset, and of products
// with characters that JSON encoders treat apart (HTML, line separators), as
// json.Marshal and the HTTP answers encode it and as ProductJSON stores it:
// written once from the code before ProductView was built from Product, so
// that the wire stays as it was.
func TestProductView_EncodesAsTheGoldenFile(t *testing.T) {
	s, st := newService(t)
	if err := s.LoadBuiltin(ctx); err != nil {
		t.Fatal(err)
	}
	odd := "<b>Fish & Chips</b> \u2028 \"quoted\" é"
	err := importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"),
		productRec(map[string]any{"name": odd, "short_description": map[string]any{"type": "plaintext", "content": odd},
			"buy_box_winner": map[string]any{"item_id": "MLA1", "price": 10.5},
			"pictures":       []map[string]any{{"id": "P1", "url": "https://x.example/a.jpg?x=1&y=<2>"}}}),
		productRec(map[string]any{"id": "MLA900002", "parent_id": "MLA900001", "status": "inactive",
			"pictures": []map[string]any{{"id": "P2", "url": "https://x.example/b.jpg"}}, "last_updated": nil}),
		productRec(map[string]any{"id": "MLA900003", "parent_id": "MLA900001", "attributes": []map[string]any{{"id": "COLOR", "name": "Color", "value_id": "1", "value_name": "Rojo & <Azul>"}}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"MLA900001", "MLA900002", "MLA900003"}
	d, err := catalog.BuiltinDataset()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Records {
		if r.Kind == catalog.KindProduct {
			var head struct{ ID string }
			if err := json.Unmarshal(r.Data, &head); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, head.ID)
		}
	}
	var got strings.Builder
	for _, id := range ids {
		p, err := s.Product(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		escaped, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.ProductJSON(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(id + "\n" + string(escaped) + "\n" + encodeLikeHTTP(t, p) + "\n" + string(stored) + "\n")
	}
	golden := filepath.Join("testdata", "product-views.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("product views:\n%s\nwant:\n%s", got.String(), want)
	}
}
