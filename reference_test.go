package marketplace

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/storage/memory"
)

func newEngine(t *testing.T) *Marketplace {
	t.Helper()
	m, err := New(memory.New(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// docExamples returns the import documents of a doc page: its json blocks
// that hold records and no elision.
func docExamples(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	parts := strings.Split(string(b), "```json\n")
	for _, p := range parts[1:] {
		block, _, _ := strings.Cut(p, "```")
		if strings.Contains(block, `"records"`) && !strings.Contains(block, "...") {
			out = append(out, block)
		}
	}
	return out
}

func TestImportReference_DocumentExamplesImportAsCopied(t *testing.T) {
	ctx := context.Background()
	for _, page := range []string{"docs/reference-data.md", "docs/catalog.md"} {
		examples := docExamples(t, page)
		if len(examples) == 0 {
			t.Fatalf("%s: no import example found", page)
		}
		for i, ex := range examples {
			m := newEngine(t)
			if _, err := m.ImportReferenceJSON(ctx, strings.NewReader(ex)); err != nil {
				t.Fatalf("%s example %d: %v", page, i, err)
			}
		}
	}

	// The fee rule of the reference-data example prices as it says: 8.25% of
	// 100 plus the fixed 10 below 500.
	m := newEngine(t)
	if _, err := m.ImportReferenceJSON(ctx, strings.NewReader(docExamples(t, "docs/reference-data.md")[0])); err != nil {
		t.Fatal(err)
	}
	lp, err := m.Fees.ListingPrice(ctx, "MLU", "silver", fees.Query{Price: "100", CategoryID: "MLU1234"})
	if err != nil || lp.SaleFeeAmount.String() != "18.25" {
		t.Fatalf("documented fee rule: %+v %v", lp, err)
	}
}
