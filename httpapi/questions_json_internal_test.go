package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/jsonenc/jsonenctest"
	"github.com/marketplace/marketplace/questions"
)

// jsonText draws strings that exercise every escaping rule.
var jsonText = jsonenctest.Text

func optional[T any](t *rapid.T, label string, g *rapid.Generator[T]) *T {
	if !rapid.Bool().Draw(t, label+"_set") {
		return nil
	}
	v := g.Draw(t, label)
	return &v
}

func drawQuestion(t *rapid.T) questions.Question {
	q := questions.Question{
		ID: rapid.Int64().Draw(t, "id"), SellerID: rapid.Int64().Draw(t, "seller"),
		ItemID: jsonText(t, "item"), Text: jsonText(t, "text"), Status: jsonText(t, "status"),
		DateCreated: jsonText(t, "date"), DeletedFromListing: rapid.Bool().Draw(t, "deleted"),
		Hold: rapid.Bool().Draw(t, "hold"), SuspectedSpam: optional(t, "spam", rapid.Bool()),
		From: questions.From{ID: rapid.Int64().Draw(t, "from"), AnsweredQuestions: optional(t, "answered", rapid.Int64())},
	}
	if rapid.Bool().Draw(t, "has_answer") {
		q.Answer = &questions.Answer{Text: jsonText(t, "answer_text"), Status: jsonText(t, "answer_status"),
			DateCreated: jsonText(t, "answer_date")}
	}
	if rapid.Bool().Draw(t, "has_details") {
		q.Details = &questions.Details{BuyerID: rapid.Int64().Draw(t, "buyer"), LastUpdated: jsonText(t, "updated"),
			AppID: optional(t, "app", rapid.Int64())}
	}
	return q
}

func encodingJSON(t *rapid.T, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return buf.Bytes()
}

func TestSearchEnvelopeEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := searchEnvelope{
			Total: rapid.Int().Draw(t, "total"), Limit: rapid.Int().Draw(t, "limit"),
			Filters: searchFilters{Limit: rapid.Int().Draw(t, "f_limit"), Offset: rapid.Int().Draw(t, "f_offset"),
				APIVersion: jsonText(t, "api_version"), IsAdmin: rapid.Bool().Draw(t, "admin"),
				Caller: rapid.Int64().Draw(t, "caller"), Item: jsonText(t, "f_item")},
			AvailableFilters: questions.AvailableFilters,
			AvailableSorts:   questions.SortFields,
		}
		if rapid.Bool().Draw(t, "has_questions") {
			e.Questions = rapid.SliceOfN(rapid.Custom(drawQuestion), 0, 4).Draw(t, "questions")
		}
		if rapid.Bool().Draw(t, "has_sorts") {
			e.Filters.Sorts = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) questions.Sort {
				return questions.Sort{Field: jsonText(t, "field"), Type: jsonText(t, "type")}
			}), 0, 4).Draw(t, "sorts")
		}
		if rapid.Bool().Draw(t, "other_tail") {
			e.AvailableFilters = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) questions.Filter {
				return questions.Filter{ID: jsonText(t, "fid"), Name: jsonText(t, "fname")}
			}), 0, 2).Draw(t, "available_filters")
			e.AvailableSorts = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return jsonText(t, "s") }), 0, 2).Draw(t, "available_sorts")
		}
		want := encodingJSON(t, e)
		if got := appendSearchEnvelope(nil, e); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

func TestQuestionEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := drawQuestion(t)
		want := encodingJSON(t, q)
		if got := append(appendQuestion(nil, q), '\n'); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
