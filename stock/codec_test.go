package stock

import (
	"bytes"
	"reflect"
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

func TestItemCodec_Format1IsReadOnlyThroughItsMigration(t *testing.T) {
	it := Item{ID: "MLA1", SiteID: "MLA", SellerID: 7, Title: "Mesa", Price: "10.5", Status: StatusActive, Channels: []string{"marketplace"}}
	b := encodeItem(it)
	// A format 1 record is the same without the trailing flags byte and
	// catalog product id (one byte of length 0).
	v1 := append([]byte{1}, b[1:len(b)-2]...)
	if _, err := decodeItem(v1); err == nil {
		t.Fatal("a format 1 record read without its migration")
	}
	old, err := decodeItemV1or2(v1)
	if err != nil {
		t.Fatal(err)
	}
	migrated := encodeItemV2(old)
	if !bytes.Equal(migrated, b) {
		t.Fatalf("the migration wrote %x, the package writes %x", migrated, b)
	}
	got, err := decodeItem(migrated)
	if err != nil || !reflect.DeepEqual(got, it) {
		t.Fatalf("decode(migrated) = %+v, %v; want %+v", got, err, it)
	}
	cp := "MLA123"
	it.CatalogProductID, it.CatalogListing = &cp, true
	if again, err := decodeItemV1or2(encodeItem(it)); err != nil || !bytes.Equal(encodeItemV2(again), encodeItem(it)) {
		t.Fatalf("a format 2 record does not survive the migration's decoder and encoder: %v", err)
	}
}
