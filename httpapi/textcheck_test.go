package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
)

// fullSnapshot is the robust world's snapshot with the operator's lists,
// where a record created by a write that should have been refused shows.
func (w *robustWorld) fullSnapshot() string {
	s := w.snapshot()
	for _, path := range []string{"/operator/users?limit=1000", "/operator/items?limit=1000", "/operator/applications?limit=1000",
		fmt.Sprintf("/operator/users/%d/stores?limit=1000", w.plain.ID)} {
		rec := w.serve(robustRequest{method: "GET", target: path, headers: bearer(testOperatorToken)})
		s += fmt.Sprintf("%s %d %s\n", path, rec.Code, rec.Body.Bytes())
	}
	return s
}

// TestTextFields_ControlBidiAndInvisibleOnlyTextIsRefusedOverHTTPAndChangesNothing
// sends, for each text people read, one route that writes it a value of
// each refused kind: the answer is a 400 naming the field with the rule's
// cause, and nothing any route reads has changed.
func TestTextFields_ControlBidiAndInvisibleOnlyTextIsRefusedOverHTTPAndChangesNothing(t *testing.T) {
	w := newRobustWorld(t)
	kinds := []struct{ name, value, rule, code string }{
		{"Control", "Hola\x1b[2J", "must not contain control characters", "text.control_character"},
		{"C1Control", "Hola\u009b", "must not contain control characters", "text.control_character"},
		{"Bidi", "Hola \u202e0051", "must not contain bidirectional control characters", "text.bidi_control"},
		{"Isolate", "Hola \u2067x\u2069", "must not contain bidirectional control characters", "text.bidi_control"},
		{"InvisibleOnly", "\u200b\u200c\u200d\u2060\ufeff", "must have visible characters", "text.invisible_only"},
	}
	fields := []struct {
		name, method, path, token, field string
		body                             func(v string) map[string]any
	}{
		{"QuestionText", "POST", "/questions", w.buyr.Token, "text", func(v string) map[string]any {
			return map[string]any{"text": v, "item_id": w.plainItm}
		}},
		{"AnswerText", "POST", "/answers", w.plain.Token, "text", func(v string) map[string]any {
			return map[string]any{"question_id": w.question, "text": v}
		}},
		{"Nickname", "POST", "/operator/users", testOperatorToken, "nickname", func(v string) map[string]any {
			return map[string]any{"nickname": v, "site_id": "MLA"}
		}},
		{"StoreDescription", "POST", fmt.Sprintf("/operator/users/%d/stores", w.plain.ID), testOperatorToken, "description", func(v string) map[string]any {
			return map[string]any{"description": v, "tags": []any{"stock_location"}}
		}},
		{"ItemTitleOnPublish", "POST", "/items", w.plain.Token, "title", func(v string) map[string]any {
			return map[string]any{"title": v, "category_id": "MLA1055", "price": 100, "listing_type_id": "gold_special",
				"currency_id": "ARS", "available_quantity": 1}
		}},
		{"ItemTitleOnUpdate", "PUT", "/items/" + w.plainItm, w.plain.Token, "title", func(v string) map[string]any {
			return map[string]any{"title": v}
		}},
		{"ApplicationName", "POST", "/operator/applications", testOperatorToken, "name", func(v string) map[string]any {
			return map[string]any{"name": v, "owner_user_id": w.plain.ID, "callback_url": "https://example.com/cb", "topics": []any{"questions"}}
		}},
	}
	for _, f := range fields {
		for _, k := range kinds {
			t.Run(f.name+"/"+k.name, func(t *testing.T) {
				before := w.fullSnapshot()
				res := w.do(f.method, f.path, f.token, f.body(k.value))
				wantError(t, res, http.StatusBadRequest, "The field ["+f.field+"] "+k.rule)
				if res.Obj()["error"] != "bad_request" {
					t.Fatalf("error = %v, want bad_request", res.Obj()["error"])
				}
				causes, _ := res.Obj()["cause"].([]any)
				if len(causes) != 1 {
					t.Fatalf("cause = %v, want one", res.Obj()["cause"])
				}
				cause, _ := causes[0].(map[string]any)
				if cause["code"] != k.code || cause["message"] == "" {
					t.Fatalf("cause = %v, want code %s and a message", cause, k.code)
				}
				if after := w.fullSnapshot(); after != before {
					t.Fatalf("refused write changed state:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			})
		}
	}
}

// TestAsk_LineFeedAndTabInQuestionTextAreKeptOverHTTP: the texts that may
// have lines keep them, by either body parser (the plain fast path reads no
// escaped string, so "\n" goes through the general one).
func TestAsk_LineFeedAndTabInQuestionTextAreKeptOverHTTP(t *testing.T) {
	w := newRobustWorld(t)
	res := w.do("POST", "/questions", w.buyr.Token, `{"text":"Hola:\n\t¿tiene garantía?","item_id":"`+w.plainItm+`"}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("ask: %d %s", res.Status, res.Raw)
	}
	if got := res.Obj()["text"]; !reflect.DeepEqual(got, "Hola:\n\t¿tiene garantía?") {
		t.Fatalf("text = %q", got)
	}
	res = w.do("POST", "/questions", w.buyr.Token, `{"text":"Hola\u202e","item_id":"`+w.plainItm+`"}`)
	wantError(t, res, http.StatusBadRequest, "The field [text] must not contain bidirectional control characters")
	// The same character raw, which the plain fast path reads.
	res = w.do("POST", "/questions", w.buyr.Token, "{\"text\":\"Hola\u202e\",\"item_id\":\""+w.plainItm+"\"}")
	wantError(t, res, http.StatusBadRequest, "The field [text] must not contain bidirectional control characters")
}
