package httpapi

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/questions"
)

// generalAsk is what the general path reads from b.
func generalAsk(b []byte) (questions.AskInput, error) {
	return questions.ParseAsk(attributesOf(b))
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
