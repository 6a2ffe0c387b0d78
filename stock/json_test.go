package stock

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// encodeStd writes v as encoding/json does (no HTML escaping), for
// comparison with the hand-written encoders.
func encodeStd(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestStockJSON_IsWhatEncodingJSONWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom([]rune{0, 1, 0x1f, 0x7f, 0x2028, 0x2029, 0xfffd, 0x10ffff, 0xe9, 0x22, 0x5c, 0x3c})),
			rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))
		var locs []StockLocation
		if !rapid.Bool().Draw(t, "nil") {
			locs = []StockLocation{}
			for i := rapid.IntRange(0, 3).Draw(t, "n"); i > 0; i-- {
				locs = append(locs, StockLocation{Type: rapid.SampledFrom([]string{"", LocationTypeSellerWarehouse}).Draw(t, "type"),
					StoreID: str.Draw(t, "store"), NetworkNodeID: str.Draw(t, "node"), Quantity: rapid.Int64().Draw(t, "q")})
			}
		}
		st := Stock{Locations: locs, UserID: rapid.Int64().Draw(t, "user"), ID: str.Draw(t, "id")}
		// The same fields without the Marshaler are the reference.
		type plainStock struct {
			Locations []StockLocation `json:"locations"`
			UserID    int64           `json:"user_id"`
			ID        string          `json:"id"`
		}
		if got, want := encodeStd(st), encodeStd(plainStock{st.Locations, st.UserID, st.ID}); !bytes.Equal(got, want) {
			t.Fatalf("Stock = %s, encoding/json = %s", got, want)
		}
		var date *string
		if rapid.Bool().Draw(t, "date") {
			d := str.Draw(t, "release")
			date = &d
		}
		up := StockUpdate{UserID: st.UserID, ProductReleaseDate: date, ID: st.ID, Locations: locs}
		type plainUpdate struct {
			UserID             int64           `json:"user_id"`
			ProductReleaseDate *string         `json:"product_release_date"`
			ID                 string          `json:"id"`
			Locations          []StockLocation `json:"locations"`
		}
		if got, want := encodeStd(up), encodeStd(plainUpdate{up.UserID, up.ProductReleaseDate, up.ID, up.Locations}); !bytes.Equal(got, want) {
			t.Fatalf("StockUpdate = %s, encoding/json = %s", got, want)
		}
	})
}
