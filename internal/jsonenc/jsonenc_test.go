package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/jsonenc"
)

func stdlib(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendString_WritesWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "\x00\x01\x1f\n\r\t\b\f", "<&>", "ñandú", "\u2028\u2029", "bad\xffutf8", "\xed\xa0\x80"} {
		if got, want := jsonenc.AppendString(nil, s), stdlib(s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "text")
		if rapid.Bool().Draw(t, "raw bytes") {
			s = string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		}
		if got, want := jsonenc.AppendString([]byte("x"), s), append([]byte("x"), stdlib(s)...); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
