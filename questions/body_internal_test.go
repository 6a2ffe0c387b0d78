package questions

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
)

// generalAsk is what the general path reads from b.
func generalAsk(b []byte) (AskInput, error) {
	return ParseAsk(attributes(b))
}

func TestPlainAsk_ReadsWhatTheGeneralPathReads(t *testing.T) {
	for _, body := range []string{
		`{"text":"Does it come with a case?","item_id":"MLA1234567890"}`,
		`{"item_id":"MLA1","text":"¿Viene con funda?"}`,
		" \t\r\n{ \"text\" : \"a\" , \"item_id\" : \"b\" } \n",
		`{"text":"","item_id":""}`,
	} {
		in, ok := plainAsk([]byte(body))
		if !ok {
			t.Fatalf("%q: not read by the plain path", body)
		}
		want, err := generalAsk([]byte(body))
		if err != nil || in != want {
			t.Fatalf("%q: plain %+v, general %+v (%v)", body, in, want, err)
		}
	}
}

func TestPlainAsk_LeavesEveryOtherBodyToTheGeneralPath(t *testing.T) {
	for _, body := range []string{
		``, `null`, `[]`, `{}`, `"x"`,
		`{"text":"a"}`,
		`{"text":"a","item_id":"b","extra":1}`,
		`{"text":"a","text":"b"}`,
		`{"text":"a","item_id":"b"}x`,
		`{"text":"a","item_id":"b"}{}`,
		`{"text":"a\nb","item_id":"b"}`,
		`{"text":"a\u0041","item_id":"b"}`,
		`{"text":null,"item_id":"b"}`,
		`{"text":1,"item_id":"b"}`,
		`{"Text":"a","item_id":"b"}`,
		"{\"text\":\"a\xff\",\"item_id\":\"b\"}",
		"{\"text\":\"a\tb\",\"item_id\":\"b\"}",
		"\v{\"text\":\"a\",\"item_id\":\"b\"}",
		`{"text":"a","item_id":"b"`,
		`{"text":"a";"item_id":"b"}`,
	} {
		if in, ok := plainAsk([]byte(body)); ok {
			t.Errorf("%q: read by the plain path as %+v", body, in)
		}
	}
}

// Any body the plain path reads, the general path reads alike. Bodies are
// well-formed asks with at most one piece swapped for a near miss, so that
// both sides of every check are met.
func TestPlainAsk_NeverDisagreesWithTheGeneralPath(t *testing.T) {
	type piece struct{ good, bad []string }
	space := piece{[]string{"", " ", "\t", "\n", "\r\n"}, []string{"\v", "\u00a0", "x"}}
	value := piece{[]string{`""`, `"a"`, `"Does it come with a case?"`, `"¿Viene con funda?"`, `"MLA1234567890"`},
		[]string{`null`, `1`, `"\u00e9"`, "\"\xc3\"", `{}`, `"a\"b"`, `"a\\b"`, "\"a\tb\"", `"a`}}
	pieces := []piece{
		space, {[]string{"{"}, []string{"[", "", "{{"}},
		space, {[]string{`"text"`}, []string{`"Text"`, `"item_id"`, `"other"`, `"te\u0078t"`, `text`}},
		space, {[]string{":"}, []string{"", ";", "::"}},
		space, value,
		space, {[]string{","}, []string{"", ";", ",,"}},
		space, {[]string{`"item_id"`}, []string{`"text"`, `"item_ID"`, `"other"`}},
		space, {[]string{":"}, []string{"", "="}},
		space, value,
		space, {[]string{"}"}, []string{"", "}}", "} x", `,"other":"c"}`, `,"text":"c"}`}},
		space,
	}
	var read atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		broken := rapid.IntRange(-len(pieces), len(pieces)-1).Draw(t, "broken")
		swap := rapid.Bool().Draw(t, "swap_fields")
		var parts []string
		for i, p := range pieces {
			from := p.good
			if i == broken {
				from = p.bad
			}
			parts = append(parts, rapid.SampledFrom(from).Draw(t, "piece"))
		}
		if swap {
			// item_id first, text second
			parts[3], parts[11] = parts[11], parts[3]
		}
		body := []byte(strings.Join(parts, ""))
		in, ok := plainAsk(body)
		if !ok {
			return
		}
		read.Add(1)
		want, err := generalAsk(body)
		if err != nil || in != want {
			t.Fatalf("%q: plain %+v, general %+v (%v)", body, in, want, err)
		}
		if !json.Valid(body) {
			t.Fatalf("%q: read by the plain path, but not JSON", body)
		}
	})
	if read.Load() == 0 {
		t.Error("no drawn body was read by the plain path: the draws test nothing")
	}
}

// sameAnswer fails t unless ParseAskBody answers body as the general path
// does: the same input, or an error of the same kind, code and message.
func sameAnswer(t interface {
	Helper()
	Fatalf(string, ...any)
}, body []byte) {
	t.Helper()
	got, gotErr := ParseAskBody(body)
	want, wantErr := generalAsk(body)
	if got != want || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: ParseAskBody %+v (%v), general %+v (%v)", body, got, gotErr, want, wantErr)
	}
	if gotErr != nil {
		g, w := errs.As(gotErr), errs.As(wantErr)
		if g == nil || w == nil || g.Kind != w.Kind || g.Code != w.Code || g.Message != w.Message {
			t.Fatalf("%q: ParseAskBody error %v, general %v", body, gotErr, wantErr)
		}
	}
}

// askTokens are the pieces that generated bodies are made of: those of an
// ask, their near misses, and JSON's other shapes.
var askTokens = []string{
	"{", "}", "[", "]", ":", ",", " ", "\t", "\n", "\r", "\v", "x", "null", "1", "-0", "true",
	`"text"`, `"item_id"`, `"Text"`, `"other"`, `"te\u0078t"`,
	`""`, `"a"`, `"MLA1234567890"`, `"¿Viene con funda?"`, `"\u00e9"`, `"a\"b"`, `"a\\b"`, "\"a\tb\"", "\"\xc3\"", "\"\xff\"", `"`,
	`{"text":"a","item_id":"b"}`, `"text":"a"`, `"item_id":"b"`,
}

// ParseAskBody answers every body as the general path does, also bodies
// far from an ask: the plain path may only ever be a shortcut.
func TestParseAskBody_AnswersEveryBodyAsTheGeneralPath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom(askTokens), 0, 24).Draw(t, "tokens")
		sameAnswer(t, []byte(strings.Join(parts, "")))
	})
}

func FuzzParseAskBody_AnswersAsTheGeneralPath(f *testing.F) {
	for _, body := range []string{
		`{"text":"Does it come with a case?","item_id":"MLA1234567890"}`,
		`{"item_id":"MLA1","text":"¿Viene con funda?"}`,
		" \t\r\n{ \"text\" : \"a\" , \"item_id\" : \"b\" } \n",
		``, `null`, `[]`, `{}`, `{"text":"a","text":"b"}`, `{"text":"a","item_id":"b"}x`,
		`{"text":"a\u0041","item_id":"b"}`, "{\"text\":\"a\xff\",\"item_id\":\"b\"}",
		`{"text":1,"item_id":"b"}`, `{"text":"a","item_id":"b","extra":1}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAnswer(t, body) })
}
