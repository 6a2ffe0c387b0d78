package questions

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ParseAskBody reads a question body {text, item_id} as ParseAsk reads its
// attributes (see attributes). Errors: Invalid.
func ParseAskBody(b []byte) (AskInput, error) {
	if in, ok := plainAsk(b); ok {
		return in, nil
	}
	return ParseAsk(attributes(b))
}

// ParseAnswerBody reads an answer body {question_id, text} as ParseAnswer
// reads its attributes (see attributes). Errors: Invalid.
func ParseAnswerBody(b []byte) (AnswerInput, error) {
	return ParseAnswer(attributes(b))
}

// attributes decodes body b as a JSON object's attributes. A body that is
// empty, not JSON at all, or JSON that is not an object (an array, a
// string, null) has none of the valid attributes, so it reaches the rules
// as an empty object and gets their invalid_post_body answer ("Invalid
// JSON. Valid attributes are: ..."), which is the spec's error for such a
// body, rather than a decoding message.
func attributes(b []byte) map[string]json.RawMessage {
	fields := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fields
	}
	// Unmarshal refuses trailing data after the object, as a second value
	// would be.
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return map[string]json.RawMessage{}
	}
	return fields
}

// plainAsk reads the usual body of an ask, an object of exactly text and
// item_id as strings with no escapes and no control characters, without
// the attribute map and the reflection of the general path, which is a
// good part of an ask's allocations. It reads what ParseAsk would; for any
// other body it returns false, and the general path gives that body its
// answer.
func plainAsk(b []byte) (in AskInput, ok bool) {
	i := skipJSONSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return in, false
	}
	var text, item bool
	for n := range 2 {
		key, j, ok := plainJSONString(b, skipJSONSpace(b, i+1))
		if !ok {
			return in, false
		}
		i = skipJSONSpace(b, j)
		if i == len(b) || b[i] != ':' {
			return in, false
		}
		value, j, ok := plainJSONString(b, skipJSONSpace(b, i+1))
		if !ok {
			return in, false
		}
		switch string(key) {
		case "text":
			if text {
				return in, false
			}
			text, in.Text = true, string(value)
		case "item_id":
			if item {
				return in, false
			}
			item, in.ItemID = true, string(value)
		default:
			return in, false
		}
		i = skipJSONSpace(b, j)
		if i == len(b) || b[i] != ",}"[n] {
			return in, false
		}
	}
	return in, text && item && skipJSONSpace(b, i+1) == len(b)
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainJSONString reads the string that starts at b[i] when it has no
// escapes, no control characters and is valid UTF-8 (what the decoder
// would keep byte for byte), and returns its content and the index after
// it.
func plainJSONString(b []byte, i int) ([]byte, int, bool) {
	if i == len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, 0, false
}
