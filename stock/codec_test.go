package stock

import (
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestUserProductCodec_RoundTripsAndRejectsCorruptRecords(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		up := UserProduct{
			ID: rapid.String().Draw(t, "id"), UserID: rapid.Int64().Draw(t, "user"),
			SiteID: rapid.String().Draw(t, "site"), Version: rapid.Int64().Draw(t, "version"),
			MultiOrigin: rapid.Bool().Draw(t, "multi"), PlainQuantity: rapid.Int64().Draw(t, "plain"),
			Locations: []StockLocation{},
		}
		n := rapid.IntRange(0, 5).Draw(t, "locations")
		for i := 0; i < n; i++ {
			up.Locations = append(up.Locations, StockLocation{Type: LocationTypeSellerWarehouse,
				StoreID: rapid.String().Draw(t, "store"), NetworkNodeID: rapid.String().Draw(t, "node"),
				Quantity: rapid.Int64().Draw(t, "qty")})
		}
		b := encodeUserProduct(up)
		got, err := decodeUserProduct(b)
		if err != nil || !reflect.DeepEqual(got, up) {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", up, got, err)
		}
		// Every truncation is refused without a panic.
		cut := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if _, err := decodeUserProduct(b[:cut]); err == nil {
			t.Fatalf("a record cut at %d of %d decoded", cut, len(b))
		}
	})
}

func TestItemCodec_RoundTripsAndRejectsCorruptRecords(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var it Item
		it.SellerID = rapid.Int64().Draw(t, "seller")
		for i, f := range itemStrings(&it) {
			*f = rapid.String().Draw(t, "field"+string(rune('a'+i)))
		}
		it.Channels = rapid.SliceOf(rapid.String()).Draw(t, "channels")
		if it.Channels == nil {
			it.Channels = []string{}
		}
		it.CatalogListing = rapid.Bool().Draw(t, "catalog_listing")
		if rapid.Bool().Draw(t, "is_catalog") {
			cp := rapid.String().Draw(t, "catalog_product_id")
			it.CatalogProductID = &cp
		}
		it.SoldQuantity = rapid.Int64().Draw(t, "sold_quantity")
		it.SubStatus = rapid.SliceOf(rapid.String()).Draw(t, "sub_status")
		if it.SubStatus == nil {
			it.SubStatus = []string{}
		}
		if rapid.Bool().Draw(t, "is_relist") {
			parent := rapid.String().Draw(t, "parent_item_id")
			it.ParentItemID = &parent
		}
		it.RelistedAs = rapid.String().Draw(t, "relisted_as")
		b := encodeItem(it)
		got, err := decodeItem(b)
		if err != nil || !reflect.DeepEqual(got, it) {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", it, got, err)
		}
		cut := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if _, err := decodeItem(b[:cut]); err == nil {
			t.Fatalf("a record cut at %d of %d decoded", cut, len(b))
		}
	})
}

// TestItemCodec_Format1IsReadOnlyThroughItsMigration reads a format 1
// record as the binary of 48e1fd1 wrote it (testdata/item-format1.hex, taken
// from the golden store testdata/schema/48e1fd1.dump at the root), never
// one made by today's encoder.
func TestItemCodec_Format1IsReadOnlyThroughItsMigration(t *testing.T) {
	raw, err := os.ReadFile("testdata/item-format1.hex")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeItem(v1); err == nil {
		t.Fatal("a format 1 record read without its migration")
	}
	old, err := decodeItemV1or2(v1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeItem(encodeItemV2(old))
	if err != nil {
		t.Fatal(err)
	}
	want := Item{ID: "MLA1400000001", SiteID: "MLA", SellerID: 100000001, Title: "A Bicicleta rodado 29 aluminio",
		CategoryID: "MLA1055", Price: "150000", BasePrice: "150000", CurrencyID: "ARS", ListingTypeID: "gold_special",
		Condition: "new", Status: StatusActive, UserProductID: "MLAU300000001",
		Permalink:   "https://articulo.mercadolibre.com.ar/MLA-1400000001-a-bicicleta-rodado-29-aluminio-_JM",
		DateCreated: "2026-03-04T15:28:00.000Z", LastUpdated: "2026-03-04T15:28:00.000Z", Channels: []string{"marketplace"},
		SubStatus: []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("format 1 read through the migration as\n%+v\nwant\n%+v", got, want)
	}
	cp := "MLA123"
	want.CatalogProductID, want.CatalogListing = &cp, true
	if again, err := decodeItemV1or2(encodeItemV2(old)); err != nil || !bytes.Equal(encodeItemV2(again), encodeItemV2(old)) {
		t.Fatalf("a format 2 record does not survive the migration's decoder and encoder: %v", err)
	}
	// A format 3 record reads as format 2 plus the sale fields, and the
	// migrations' decoder reads its format 2 part.
	sold := want
	sold.SoldQuantity, sold.SubStatus = 3, []string{SubStatusOutOfStock}
	if again, err := decodeItemV1or2(encodeItem(sold)); err != nil || !bytes.Equal(encodeItemV2(again), encodeItemV2(mustV2(t, encodeItem(want)))) {
		t.Fatalf("the migrations' decoder does not read a format 3 record's format 2 part: %v", err)
	}
}

func mustV2(t *testing.T, b []byte) itemV2 {
	t.Helper()
	it, err := decodeItemV1or2(b)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// TestItemCodec_Format2ReadsWithNoSales: a record written before the sale
// fields reads with no sales, no sub-status and no parent.
func TestItemCodec_Format2ReadsWithNoSales(t *testing.T) {
	it := Item{ID: "MLA1", SiteID: "MLA", Status: StatusActive, Channels: []string{}, SubStatus: []string{}}
	got, err := decodeItem(encodeItemV2(mustV2(t, encodeItem(it))))
	if err != nil || !reflect.DeepEqual(got, it) {
		t.Fatalf("format 2 read as %+v, %v; want %+v", got, err, it)
	}
}
