package stock

import (
	"strconv"
	"unicode/utf8"
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
	b = appendJSONString(b, s.ID)
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
		b = appendJSONString(b, *s.ProductReleaseDate)
	}
	b = append(b, `,"id":`...)
	b = appendJSONString(b, s.ID)
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
			b = appendJSONString(b, l.Type)
			b = append(b, ',')
		}
		b = append(b, `"store_id":`...)
		b = appendJSONString(b, l.StoreID)
		b = append(b, `,"network_node_id":`...)
		b = appendJSONString(b, l.NetworkNodeID)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, l.Quantity, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does without HTML escaping:
// control characters, quote and backslash escaped, invalid UTF-8 replaced
// by U+FFFD, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
