package stock

import (
	"strconv"

	"github.com/marketplace/marketplace/internal/jsonenc"
)

// The stock read and write answers are the most frequent bodies of the
// package; they are written by hand rather than by reflection. The output
// is what encoding/json writes for the same values.

// MarshalJSON writes {"locations":[...],"user_id":...,"id":...}.
func (s Stock) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+96*len(s.Locations))
	b = append(b, `{"locations":`...)
	b = appendLocations(b, s.Locations)
	b = append(b, `,"user_id":`...)
	b = strconv.AppendInt(b, s.UserID, 10)
	b = append(b, `,"id":`...)
	b = jsonenc.AppendString(b, s.ID)
	return append(b, '}'), nil
}

// MarshalJSON writes {"user_id":...,"product_release_date":...,"id":...,"locations":[...]}.
func (s StockUpdate) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 96+96*len(s.Locations))
	b = append(b, `{"user_id":`...)
	b = strconv.AppendInt(b, s.UserID, 10)
	b = append(b, `,"product_release_date":`...)
	if s.ProductReleaseDate == nil {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, *s.ProductReleaseDate)
	}
	b = append(b, `,"id":`...)
	b = jsonenc.AppendString(b, s.ID)
	b = append(b, `,"locations":`...)
	b = appendLocations(b, s.Locations)
	return append(b, '}'), nil
}

func appendLocations(b []byte, locs []StockLocation) []byte {
	if locs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, l := range locs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if l.Type != "" {
			b = append(b, `"type":`...)
			b = jsonenc.AppendString(b, l.Type)
			b = append(b, ',')
		}
		b = append(b, `"store_id":`...)
		b = jsonenc.AppendString(b, l.StoreID)
		b = append(b, `,"network_node_id":`...)
		b = jsonenc.AppendString(b, l.NetworkNodeID)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, l.Quantity, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}
