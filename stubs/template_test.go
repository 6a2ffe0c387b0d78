package stubs_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/stubs"
)

// FuzzTemplate_AJSONBodyIsWrittenAsEncodingJSONWouldWriteIt checks the
// answer written in one pass against encoding/json's writing of the same
// values: keys sorted, numbers as they were read, no HTML escaping, and any
// value a request brings (invalid UTF-8, U+2028, quotes) escaped alike.
func FuzzTemplate_AJSONBodyIsWrittenAsEncodingJSONWouldWriteIt(f *testing.F) {
	for _, v := range []string{"plain", `"quoted" \ back`, "<b>&amp;</b>", "line\u2028sep\u2029", "\xff\xfe bad", "tab\tnl\n\x00", "ñandú 🦆"} {
		f.Add(v)
	}
	body := `{"z":"{{{request.headers.X-V}}}","a":["{{request.headers.X-V}}",1,0.1,1e21,-0,12345678901234567890,true,null],
		"m":{"y":"<&>","b":"x{{{request.headers.X-V}}}y","\u2028":"\u2029"},"e":{},"l":[]}`
	s := stubs.New(teststore.New(f))
	mustCreateTB(f, s, `{"request":{"urlPath":"/t"},"response":{"jsonBody":`+body+`,"transformers":["response-template"]}}`)
	f.Fuzz(func(t *testing.T, v string) {
		a, ok, err := s.Answer(t.Context(), &stubs.Request{Method: "GET", Path: "/t", Header: map[string][]string{"X-V": {v}}}, false, nil)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		want["z"] = v
		want["a"].([]any)[0] = htmlEscape(v)
		want["m"].(map[string]any)["b"] = "x" + v + "y"
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(want); err != nil {
			t.Fatal(err)
		}
		if got := string(a.Body); got != string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))) {
			t.Fatalf("answer  %s\nwant    %s", got, b.Bytes())
		}
	})
}

// htmlEscape is Handlebars' {{ }}: what html.EscapeString does.
func htmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range []byte(s) {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\'':
			b.WriteString("&#39;")
		case '"':
			b.WriteString("&#34;")
		default:
			b.WriteByte(r)
		}
	}
	return b.String()
}
