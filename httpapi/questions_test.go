package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/matryer/is"

	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
)

// qWorld is a test server with a plain seller, two other users and an active
// item of the seller.
type qWorld struct {
	*testServer
	seller, buyer, other user
	item                 string
}

func newQWorld(t testing.TB) *qWorld {
	t.Helper()
	ts := newTestServer(t)
	w := &qWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA"), other: ts.mustUser("MLA")}
	w.item = w.mustItem(w.seller.ID)
	return w
}

// mustItem publishes a complete, valid plain item of seller.
func (w *qWorld) mustItem(seller int64) string {
	w.t.Helper()
	qty := int64(5)
	p, err := w.m.Stock.Publish(context.Background(), seller, stock.NewItem{
		Title: "Guitar", CategoryID: "MLA1055", Price: money.FromInt(1500), ListingTypeID: "gold_special",
		CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"}, AvailableQuantity: &qty,
	})
	if err != nil {
		w.t.Fatalf("publish: %v", err)
	}
	return p.ID
}

func (w *qWorld) mustAsk(u user, item, text string) int64 {
	w.t.Helper()
	res := w.do("POST", "/questions", u.Token, map[string]any{"text": text, "item_id": item})
	if res.Status != http.StatusCreated {
		w.t.Fatalf("ask: %d %s", res.Status, res.Raw)
	}
	return int64(res.Obj()["id"].(float64))
}

func (w *qWorld) mustAnswer(id int64, text string) {
	w.t.Helper()
	res := w.do("POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": text})
	if res.Status != http.StatusOK {
		w.t.Fatalf("answer: %d %s", res.Status, res.Raw)
	}
}

func qpath(id int64) string { return fmt.Sprintf("/questions/%d", id) }

func TestPostQuestion_Returns201WithUnansweredQuestion(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	res := w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "Does it come with a case?", "item_id": w.item})
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Header.Get("Content-Type"), "application/json; charset=utf-8")
	o := res.Obj()
	is.True(o["id"].(float64) > 0)
	is.Equal(o["seller_id"], float64(w.seller.ID))
	is.Equal(o["item_id"], w.item)
	is.Equal(o["text"], "Does it come with a case?")
	is.Equal(o["status"], "UNANSWERED")
	is.Equal(o["date_created"], "2026-03-04T12:00:00.000-03:00")
	is.Equal(o["deleted_from_listing"], false)
	is.Equal(o["hold"], false)
	is.Equal(o["answer"], nil)
	is.True(o != nil && hasKey(o, "answer")) // answer is present and null
	is.Equal(o["from"], map[string]any{"id": float64(w.buyer.ID), "answered_questions": float64(0)})
	is.Equal(o["buyer_id"], float64(w.buyer.ID)) // the by-id form
	is.Equal(o["last_updated"], "2026-03-04T12:00:00.000-03:00")
	is.Equal(o["app_id"], nil)
	is.True(hasKey(o, "app_id") && !hasKey(o, "suspected_spam"))
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func TestPostAnswer_ReturnsWholeQuestionAnswered(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	w.clock.Advance(30 * time.Minute)
	res := w.do("POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": "Yes."})
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["id"], float64(id))
	is.Equal(o["status"], "ANSWERED")
	is.Equal(o["text"], "Is it new?")
	is.Equal(o["answer"], map[string]any{"text": "Yes.", "status": "ACTIVE", "date_created": "2026-03-04T12:30:00.000-03:00"})
	is.Equal(o["from"], map[string]any{"id": float64(w.buyer.ID), "answered_questions": float64(1)})
}

func TestQuestionRoutes_Errors(t *testing.T) {
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	answered := w.mustAsk(w.buyer, w.item, "Which color?")
	w.mustAnswer(answered, "Black.")
	closedItem := w.mustItem(w.seller.ID)
	closed := stock.StatusClosed
	if _, err := w.m.Stock.UpdateItem(context.Background(), w.seller.ID, closedItem, stock.ItemUpdate{Status: &closed}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("ü", 2001)
	const postBody = "Invalid JSON. Valid attributes are: [question_id, text]."
	const askBody = "Invalid JSON. Valid attributes are: [item_id, text]."
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		token   string
		body    any
		status  int
		code    string
		message string
	}{
		{"AskWithoutToken", "POST", "/questions", "", map[string]any{"text": "x", "item_id": w.item}, 401, "unauthorized", ""},
		{"AskEmptyText", "POST", "/questions", w.buyer.Token, map[string]any{"text": "  ", "item_id": w.item}, 400, "bad_request", "The question text cannot be empty"},
		{"AskTextOver2000Characters", "POST", "/questions", w.buyer.Token, map[string]any{"text": long, "item_id": w.item}, 400, "bad_request", "The question text has 2001 characters; the maximum is 2000"},
		{"AskUnknownItem", "POST", "/questions", w.buyer.Token, map[string]any{"text": "x", "item_id": "MLA1"}, 404, "not_found", "Item with id MLA1 not found"},
		{"AskClosedItem", "POST", "/questions", w.buyer.Token, map[string]any{"text": "x", "item_id": closedItem}, 400, "bad_request", "Item " + closedItem + " is not active: questions cannot be asked"},
		{"AskOwnItem", "POST", "/questions", w.seller.Token, map[string]any{"text": "x", "item_id": w.item}, 403, "forbidden", "A seller cannot ask questions on its own item " + w.item},
		{"AskUnknownAttribute", "POST", "/questions", w.buyer.Token, map[string]any{"text": "x", "item_id": w.item, "title": "y"}, 400, "invalid_post_body", askBody},
		{"AskMissingItem", "POST", "/questions", w.buyer.Token, map[string]any{"text": "x"}, 400, "invalid_post_body", askBody},
		{"AskMalformedJSONIsInvalidPostBody", "POST", "/questions", w.buyer.Token, `{"text":`, 400, "invalid_post_body", askBody},
		{"AskEmptyBodyIsInvalidPostBody", "POST", "/questions", w.buyer.Token, "", 400, "invalid_post_body", askBody},
		{"AnswerMalformedJSONIsInvalidPostBody", "POST", "/answers", w.seller.Token, `{"question_id": 1, "text": "x"`, 400, "invalid_post_body", postBody},
		{"AnswerNotJSONIsInvalidPostBody", "POST", "/answers", w.seller.Token, `question_id=1&text=x`, 400, "invalid_post_body", postBody},
		{"AnswerTrailingDataIsInvalidPostBody", "POST", "/answers", w.seller.Token, `{"question_id": 1, "text": "x"} {}`, 400, "invalid_post_body", postBody},
		{"AnswerEmptyBodyIsInvalidPostBody", "POST", "/answers", w.seller.Token, "", 400, "invalid_post_body", postBody},
		{"AskTextNotString", "POST", "/questions", w.buyer.Token, map[string]any{"text": 5, "item_id": w.item}, 400, "bad_request", "Invalid JSON: the field [text] must be of type string"},
		{"AnswerQuestionIDNotInteger", "POST", "/answers", w.seller.Token, map[string]any{"question_id": "abc", "text": "x"}, 400, "invalid_question", "The question is invalid."},
		{"AnswerQuestionIDFraction", "POST", "/answers", w.seller.Token, map[string]any{"question_id": 1.5, "text": "x"}, 400, "invalid_question", "The question is invalid."},
		{"AnswerUnknownAttribute", "POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": "x", "foo": 1}, 400, "invalid_post_body", postBody},
		{"AnswerMissingText", "POST", "/answers", w.seller.Token, map[string]any{"question_id": id}, 400, "invalid_post_body", postBody},
		{"AnswerArrayBodyIsInvalidPostBody", "POST", "/answers", w.seller.Token, `[1]`, 400, "invalid_post_body", postBody},
		{"AnswerNullBodyIsInvalidPostBody", "POST", "/answers", w.seller.Token, `null`, 400, "invalid_post_body", postBody},
		{"AskStringBodyIsInvalidPostBody", "POST", "/questions", w.buyer.Token, `"text"`, 400, "invalid_post_body", askBody},
		{"AnswerTwice", "POST", "/answers", w.seller.Token, map[string]any{"question_id": answered, "text": "again"}, 400, "bad_request", fmt.Sprintf("Question %d is already answered", answered)},
		{"AnswerTextOver2000Characters", "POST", "/answers", w.seller.Token, map[string]any{"question_id": id, "text": long}, 400, "bad_request", "The answer text has 2001 characters; the maximum is 2000"},
		{"AnswerAnotherSellersQuestion", "POST", "/answers", w.other.Token, map[string]any{"question_id": id, "text": "x"}, 403, "forbidden", fmt.Sprintf("Only the seller of item %s can answer question %d", w.item, id)},
		{"AnswerUnknownQuestion", "POST", "/answers", w.seller.Token, map[string]any{"question_id": 7, "text": "x"}, 404, "not_found", "Question with id 7 not found"},
		{"GetNonIntegerID", "GET", "/questions/abc", "", nil, 400, "invalid_question", "The question is invalid."},
		{"GetUnknown", "GET", "/questions/99", "", nil, 404, "not_found", "Question with id 99 not found"},
		{"GetBadAPIVersion", "GET", qpath(id) + "?api_version=x", "", nil, 400, "bad_request", "Invalid api_version: x. Valid values are: [1, 2, 3, 4]"},
		{"DeleteByAsker", "DELETE", qpath(id), w.buyer.Token, nil, 403, "forbidden", fmt.Sprintf("Only the seller of item %s can delete question %d", w.item, id)},
		{"DeleteWithoutToken", "DELETE", qpath(id), "", nil, 401, "unauthorized", ""},
		{"DeleteNonIntegerID", "DELETE", "/questions/x1", w.seller.Token, nil, 400, "invalid_question", "The question is invalid."},
		{"HideEmpty", "POST", "/my/questions/hidden", w.seller.Token, map[string]any{"question_ids": []int64{}}, 400, "bad_request", "The fields [question_ids] are required for requested call"},
		{"HideOthersQuestion", "POST", "/my/questions/hidden", w.other.Token, map[string]any{"question_ids": []int64{id}}, 403, "forbidden", fmt.Sprintf("Only the seller of item %s can hide question %d", w.item, id)},
		{"HideUnknown", "POST", "/my/questions/hidden", w.seller.Token, map[string]any{"question_ids": []int64{id, 5}}, 404, "not_found", "Question with id 5 not found"},
		{"HideArrayBodyIsNotAnObject", "POST", "/my/questions/hidden", w.seller.Token, `[1]`, 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
		{"ModerateArrayBodyIsNotAnObject", "PUT", "/operator" + qpath(id), testOperatorToken, `["BANNED"]`, 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
		{"HideNotIntegers", "POST", "/my/questions/hidden", w.seller.Token, map[string]any{"question_ids": []string{"a"}}, 400, "bad_request", ""},
		{"AskItemIDWithControlCharacter", "POST", "/questions", w.buyer.Token, map[string]any{"text": "x", "item_id": w.item + "\x00"}, 400, "bad_request", fmt.Sprintf("Invalid item id: %q", w.item+"\x00")},
		{"SearchItemWithControlCharacter", "GET", "/questions/search?item=" + w.item + "%00", "", nil, 400, "bad_request", fmt.Sprintf("Invalid item id: %q", w.item+"\x00")},
		{"SearchWithoutScope", "GET", "/questions/search", w.buyer.Token, nil, 400, "bad_request", "The parameters [seller_id] or [item] are required for requested call"},
		{"SearchSellerWithoutTokenIs401", "GET", fmt.Sprintf("/questions/search?seller_id=%d", w.seller.ID), "", nil, 401, "unauthorized", "Missing access token: send Authorization: Bearer <token>"},
		{"SearchBadSellerAlias", "GET", "/questions/search?seller=x", w.seller.Token, nil, 400, "bad_request", "Invalid seller: x. It must be a positive integer"},
		{"SearchOtherSellerByFilterIDSeller", "GET", fmt.Sprintf("/questions/search?seller=%d", w.seller.ID), w.other.Token, nil, 403, "forbidden", fmt.Sprintf("Only user %d can search the questions it received", w.seller.ID)},
		{"SearchOtherSeller", "GET", fmt.Sprintf("/questions/search?seller_id=%d", w.seller.ID), w.other.Token, nil, 403, "forbidden", fmt.Sprintf("Only user %d can search the questions it received", w.seller.ID)},
		{"SearchBadStatus", "GET", "/questions/search?item=" + w.item + "&status=OPEN", "", nil, 400, "bad_request", "Invalid status: OPEN. Valid values are: [ANSWERED, BANNED, CLOSED_UNANSWERED, DELETED, DISABLED, UNANSWERED, UNDER_REVIEW]"},
		{"SearchBadSortField", "GET", "/questions/search?item=" + w.item + "&sort_fields=text", "", nil, 400, "bad_request", "Invalid sort_fields: text. Valid values are: [item_id, seller_id, from_id, date_created]"},
		{"SearchBadSortType", "GET", "/questions/search?item=" + w.item + "&sort_fields=item_id&sort_types=UP", "", nil, 400, "bad_request", "Invalid sort_types: UP. Valid values are: [ASC, DESC]"},
		{"SearchMoreTypesThanFields", "GET", "/questions/search?item=" + w.item + "&sort_types=ASC", "", nil, 400, "bad_request", "Invalid sort_types: ASC. There are more sort types than sort fields"},
		{"SearchBadLimit", "GET", "/questions/search?item=" + w.item + "&limit=-1", "", nil, 400, "bad_request", "Invalid limit: -1. It must be a non-negative integer"},
		{"SearchBadFrom", "GET", "/questions/search?item=" + w.item + "&from=me", "", nil, 400, "bad_request", "Invalid from: me. It must be a positive integer"},
		{"SearchBadDivision", "GET", "/questions/search?item=" + w.item + "&totalDivisions=2&division=2", "", nil, 400, "bad_request", "Invalid division: it must be at least 0 and below totalDivisions"},
		{"SearchInvalidToken", "GET", "/questions/search?item=" + w.item, "APP_USR-nope-nope-nope", nil, 401, "unauthorized", ""},
		{"ModerateWithUserToken", "PUT", qpath(id), w.seller.Token, map[string]any{"status": "BANNED"}, 405, "method_not_allowed", ""},
		{"ModerateUserTokenOnOperatorRoute", "PUT", "/operator" + qpath(id), w.seller.Token, map[string]any{"status": "BANNED"}, 403, "forbidden", "Operator routes need the operator token"},
		{"ModerateBadStatus", "PUT", "/operator" + qpath(id), testOperatorToken, map[string]any{"status": "ANSWERED"}, 400, "bad_request", "Invalid status: ANSWERED. Valid values are: [BANNED, UNDER_REVIEW, DISABLED]"},
		{"ModerateBadAnswerStatus", "PUT", "/operator" + qpath(answered), testOperatorToken, map[string]any{"answer_status": "GONE"}, 400, "bad_request", "Invalid answer_status: GONE. Valid values are: [ACTIVE, BANNED, DISABLED]"},
		{"ModerateAnswerOfUnanswered", "PUT", "/operator" + qpath(id), testOperatorToken, map[string]any{"answer_status": "BANNED"}, 400, "bad_request", fmt.Sprintf("Question %d has no answer to moderate", id)},
		{"ModerateNothing", "PUT", "/operator" + qpath(id), testOperatorToken, map[string]any{}, 400, "bad_request", "The fields [status] or [answer_status] are required for requested call"},
		{"ModerateUnknown", "PUT", "/operator/questions/8", testOperatorToken, map[string]any{"status": "BANNED"}, 404, "not_found", "Question with id 8 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.do(tc.method, tc.path, tc.token, tc.body)
			wantError(t, res, tc.status, tc.message)
			if got := res.Obj()["error"]; got != tc.code {
				t.Fatalf("error = %v, want %s", got, tc.code)
			}
		})
	}
	// None of the refused calls changed the questions.
	for qid, status := range map[int64]string{id: "UNANSWERED", answered: "ANSWERED"} {
		res := w.do("GET", qpath(qid), "", nil)
		if res.Obj()["status"] != status || res.Obj()["deleted_from_listing"] != false {
			t.Fatalf("question %d changed: %s", qid, res.Raw)
		}
	}
}

func TestGetQuestion_DispatchesSearchAndID(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	byID := w.do("GET", qpath(id), "", nil)
	is.Equal(byID.Status, http.StatusOK)
	is.Equal(byID.Obj()["id"], float64(id))
	search := w.do("GET", "/questions/search?item="+w.item, "", nil)
	is.Equal(search.Status, http.StatusOK)
	is.Equal(search.Obj()["total"], float64(1))
}

func TestGetQuestion_ByIDReturnsBuyerIDLastUpdatedAppIDAndVersion4AddsSuspectedSpam(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	w.clock.Advance(time.Hour)
	w.mustAnswer(id, "Yes")
	res := w.do("GET", qpath(id)+"?api_version=4", w.other.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	want := map[string]any{
		"id": float64(id), "seller_id": float64(w.seller.ID), "item_id": w.item, "text": "Is it new?",
		"status": "ANSWERED", "date_created": "2026-03-04T12:00:00.000-03:00", "deleted_from_listing": false,
		"hold": false, "suspected_spam": false,
		"answer":   map[string]any{"text": "Yes", "status": "ACTIVE", "date_created": "2026-03-04T13:00:00.000-03:00"},
		"from":     map[string]any{"id": float64(w.buyer.ID), "answered_questions": float64(1)},
		"buyer_id": float64(w.buyer.ID), "last_updated": "2026-03-04T13:00:00.000-03:00", "app_id": nil,
	}
	is.Equal(res.Obj(), want)
	// Without api_version the by-id lookup still returns buyer_id,
	// last_updated and app_id; suspected_spam is for version 4 only.
	delete(want, "suspected_spam")
	is.Equal(w.do("GET", qpath(id), "", nil).Obj(), want)
}

func TestGetQuestion_WithoutTokenDeletedOrBannedIsNotFound(t *testing.T) {
	w := newQWorld(t)
	deleted := w.mustAsk(w.buyer, w.item, "one")
	banned := w.mustAsk(w.buyer, w.item, "two")
	review := w.mustAsk(w.buyer, w.item, "three")
	if res := w.do("DELETE", qpath(deleted), w.seller.Token, nil); res.Status != 200 {
		t.Fatalf("delete: %s", res.Raw)
	}
	for id, status := range map[int64]string{banned: "BANNED", review: "UNDER_REVIEW"} {
		if res := w.do("PUT", "/operator"+qpath(id), testOperatorToken, map[string]any{"status": status}); res.Status != 200 {
			t.Fatalf("moderate: %s", res.Raw)
		}
	}
	for _, tc := range []struct {
		name   string
		id     int64
		token  string
		status int
	}{
		{"DeletedAnonymous", deleted, "", 404},
		{"BannedAnonymous", banned, "", 404},
		{"UnderReviewAnonymous", review, "", 200},
		{"DeletedWithToken", deleted, w.other.Token, 200},
		{"BannedWithToken", banned, w.seller.Token, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.do("GET", qpath(tc.id), tc.token, nil)
			if tc.status == 404 {
				wantError(t, res, 404, fmt.Sprintf("Question with id %d not found", tc.id))
				return
			}
			if res.Status != tc.status {
				t.Fatalf("status = %d: %s", res.Status, res.Raw)
			}
		})
	}
	// A banned question's text is not shown.
	if got := w.do("GET", qpath(banned), w.seller.Token, nil).Obj()["text"]; got != "" {
		t.Fatalf("banned text = %q", got)
	}
}

func TestDeleteQuestion_SellerGetsArrayWithOneTextAndStatusDeleted(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	res := w.do("DELETE", qpath(id), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Arr(), []any{"Question deleted."})
	is.Equal(w.do("GET", qpath(id), w.seller.Token, nil).Obj()["status"], "DELETED")
	again := w.do("DELETE", qpath(id), w.seller.Token, nil)
	wantError(t, again, 400, fmt.Sprintf("Question %d is already deleted", id))
}

func TestHideQuestions_HiddenQuestionLeavesPublicListings(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	hidden := w.mustAsk(w.buyer, w.item, "hide me")
	shown := w.mustAsk(w.other, w.item, "keep me")
	res := w.do("POST", "/my/questions/hidden", w.seller.Token, map[string]any{"question_ids": []int64{hidden, hidden}})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj(), map[string]any{"question_ids": []any{float64(hidden)}})

	ids := func(token string) []any {
		var out []any
		for _, q := range w.do("GET", "/questions/search?item="+w.item, token, nil).Obj()["questions"].([]any) {
			out = append(out, q.(map[string]any)["id"])
		}
		return out
	}
	is.Equal(ids(""), []any{float64(shown)})                              // the public no longer sees it
	is.Equal(ids(w.other.Token), []any{float64(shown)})                   // nor another user
	is.Equal(ids(w.seller.Token), []any{float64(shown), float64(hidden)}) // the seller does, newest first
	is.Equal(ids(w.buyer.Token), []any{float64(shown), float64(hidden)})  // and so does its asker
	got := w.do("GET", qpath(hidden), "", nil).Obj()
	is.Equal(got["deleted_from_listing"], true)
	is.Equal(got["status"], "UNANSWERED") // hiding keeps the status
}

func TestSearchQuestions_EnvelopeBySeller(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	first := w.mustAsk(w.buyer, w.item, "first")
	w.clock.Advance(time.Minute)
	second := w.mustAsk(w.other, w.item, "second")
	res := w.do("GET", fmt.Sprintf("/questions/search?seller_id=%d&api_version=4&limit=1", w.seller.ID), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["total"], float64(2))
	is.Equal(o["limit"], float64(1))
	qs := o["questions"].([]any)
	is.Equal(len(qs), 1)
	q := qs[0].(map[string]any)
	is.Equal(q["id"], float64(second)) // date_created DESC by default
	is.Equal(q["suspected_spam"], false)
	is.Equal(q["from"], map[string]any{"id": float64(w.other.ID)})
	is.Equal(o["filters"], map[string]any{"limit": float64(1), "offset": float64(0), "api_version": "4",
		"is_admin": false, "sorts": []any{}, "caller": float64(w.seller.ID)})
	statusValues := []any{"ANSWERED", "BANNED", "CLOSED_UNANSWERED", "DELETED", "DISABLED", "UNANSWERED", "UNDER_REVIEW"}
	is.Equal(o["available_filters"], []any{
		map[string]any{"id": "from", "name": "From user id", "type": "number"},
		map[string]any{"id": "seller", "name": "Seller id", "type": "number"},
		map[string]any{"id": "totalDivisions", "name": "Total divisions", "type": "number"},
		map[string]any{"id": "division", "name": "Division", "type": "number"},
		map[string]any{"id": "status", "name": "Status", "type": "text", "values": statusValues},
	})
	is.Equal(o["available_sorts"], []any{"item_id", "from_id", "date_created", "seller_id"})

	next := w.do("GET", fmt.Sprintf("/questions/search?seller_id=%d&limit=1&offset=1", w.seller.ID), w.seller.Token, nil).Obj()
	is.Equal(next["questions"].([]any)[0].(map[string]any)["id"], float64(first))
	is.Equal(next["filters"].(map[string]any)["api_version"], "1")
	is.True(!hasKey(next["questions"].([]any)[0].(map[string]any), "suspected_spam"))

	// "seller", the seller filter's id in available_filters, works as seller_id.
	alias := w.do("GET", fmt.Sprintf("/questions/search?seller=%d&limit=1", w.seller.ID), w.seller.Token, nil).Obj()
	is.Equal(alias["total"], float64(2))
	is.Equal(alias["questions"].([]any)[0].(map[string]any)["id"], float64(second))
}

func TestSearchQuestions_ByItemFromStatusAndSorts(t *testing.T) {
	w := newQWorld(t)
	item2 := w.mustItem(w.seller.ID)
	a := w.mustAsk(w.buyer, w.item, "a")
	w.clock.Advance(time.Minute)
	b := w.mustAsk(w.other, w.item, "b")
	w.clock.Advance(time.Minute)
	c := w.mustAsk(w.buyer, item2, "c")
	w.clock.Advance(time.Minute)
	d := w.mustAsk(w.buyer, w.item, "d")
	w.mustAnswer(d, "ok")
	seller := fmt.Sprintf("/questions/search?seller_id=%d", w.seller.ID)
	for _, tc := range []struct {
		name  string
		path  string
		token string
		want  []int64
		item  string
	}{
		{"ByItemNewestFirst", "/questions/search?item=" + w.item, "", []int64{d, b, a}, w.item},
		{"ByItemIDAlias", "/questions/search?item_id=" + item2, "", []int64{c}, item2},
		{"FromCombinedWithItem", fmt.Sprintf("/questions/search?item=%s&from=%d", w.item, w.buyer.ID), "", []int64{d, a}, w.item},
		{"StatusFilterBySeller", seller + "&status=UNANSWERED", w.seller.Token, []int64{c, b, a}, ""},
		{"StatusFilterAnswered", seller + "&status=ANSWERED", w.seller.Token, []int64{d}, ""},
		{"DateCreatedASC", seller + "&sort_fields=date_created&sort_types=ASC", w.seller.Token, []int64{a, b, c, d}, ""},
		{"ItemThenDateDESC", seller + "&sort_fields=item_id,date_created&sort_types=ASC,DESC", w.seller.Token, []int64{d, b, a, c}, ""},
		{"FromIDDESCThenDate", seller + "&sort_fields=from_id,date_created&sort_types=DESC,ASC", w.seller.Token, []int64{b, a, c, d}, ""},
		{"SellerIDTypeDefaultsASC", seller + "&sort_fields=seller_id", w.seller.Token, []int64{a, b, c, d}, ""},
		{"Divisions", seller + fmt.Sprintf("&totalDivisions=2&division=%d&sort_fields=date_created&sort_types=ASC", a%2), w.seller.Token, []int64{a, c}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.do("GET", tc.path, tc.token, nil)
			if res.Status != 200 {
				t.Fatalf("status %d: %s", res.Status, res.Raw)
			}
			var got []int64
			for _, q := range res.Obj()["questions"].([]any) {
				got = append(got, int64(q.(map[string]any)["id"].(float64)))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || int(res.Obj()["total"].(float64)) != len(tc.want) {
				t.Fatalf("got %v (total %v), want %v", got, res.Obj()["total"], tc.want)
			}
			f := res.Obj()["filters"].(map[string]any)
			if tc.item != "" && f["item"] != tc.item || tc.item == "" && hasKey(f, "item") {
				t.Fatalf("filters.item = %v, want %q", f["item"], tc.item)
			}
		})
	}
}

func TestSearchQuestions_SortsAreEchoedInFilters(t *testing.T) {
	w := newQWorld(t)
	res := w.do("GET", "/questions/search?item="+w.item+"&sort_fields=item_id,date_created&sort_types=DESC", "", nil)
	got := res.Obj()["filters"].(map[string]any)["sorts"]
	want := []any{map[string]any{"field": "item_id", "type": "DESC"}, map[string]any{"field": "date_created", "type": "ASC"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sorts = %v, want %v", got, want)
	}
}

func TestModerate_EveryStateIsReachableAndBannedAnswerTextIsEmpty(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	id := w.mustAsk(w.buyer, w.item, "Is it new?")
	w.mustAnswer(id, "Yes")
	res := w.do("PUT", "/operator"+qpath(id), testOperatorToken, map[string]any{"answer_status": "BANNED"})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["answer"].(map[string]any)["text"], "")
	is.Equal(res.Obj()["answer"].(map[string]any)["status"], "BANNED")
	for _, st := range []string{"UNDER_REVIEW", "DISABLED", "BANNED"} {
		res := w.do("PUT", "/operator"+qpath(id), testOperatorToken, map[string]any{"status": st})
		is.Equal(res.Status, http.StatusOK)
		is.Equal(res.Obj()["status"], st)
	}
	res = w.do("PUT", "/operator"+qpath(id), testOperatorToken, map[string]any{"answer_status": "DISABLED"})
	is.Equal(res.Obj()["answer"].(map[string]any)["text"], "Yes") // only a banned answer hides its text
}

func TestCloseItem_UnansweredQuestionsBecomeClosedUnanswered(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	open := w.mustAsk(w.buyer, w.item, "open")
	done := w.mustAsk(w.buyer, w.item, "done")
	w.mustAnswer(done, "ok")
	closed := stock.StatusClosed
	_, err := w.m.Stock.UpdateItem(context.Background(), w.seller.ID, w.item, stock.ItemUpdate{Status: &closed})
	is.NoErr(err)
	is.Equal(w.do("GET", qpath(open), "", nil).Obj()["status"], "CLOSED_UNANSWERED")
	is.Equal(w.do("GET", qpath(done), "", nil).Obj()["status"], "ANSWERED")
	res := w.do("POST", "/answers", w.seller.Token, map[string]any{"question_id": open, "text": "late"})
	wantError(t, res, 400, fmt.Sprintf("Question %d cannot be answered: its status is CLOSED_UNANSWERED", open))
}

func TestBlacklist_BlockedUserCannotAskUntilRemoved(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	bl := fmt.Sprintf("/users/%d/questions_blacklist", w.seller.ID)
	res := w.do("POST", bl, w.seller.Token, map[string]any{"user_id": w.buyer.ID})
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(res.Obj(), map[string]any{"user_id": float64(w.buyer.ID)})
	again := w.do("POST", bl, w.seller.Token, map[string]any{"user_id": w.buyer.ID})
	is.Equal(again.Status, http.StatusOK) // already blocked: nothing new

	other := w.mustItem(w.seller.ID)
	for _, item := range []string{w.item, other} {
		res := w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "hi?", "item_id": item})
		wantError(t, res, 403, fmt.Sprintf("User %d is blocked from asking questions to seller %d", w.buyer.ID, w.seller.ID))
	}
	list := w.do("GET", bl, w.seller.Token, nil)
	is.Equal(list.Status, http.StatusOK)
	is.Equal(list.Obj(), map[string]any{"users": []any{map[string]any{"user_id": float64(w.buyer.ID)}},
		"paging": map[string]any{"total": float64(1), "offset": float64(0), "limit": float64(50)}})

	del := w.do("DELETE", fmt.Sprintf("%s/%d", bl, w.buyer.ID), w.seller.Token, nil)
	is.Equal(del.Status, http.StatusOK)
	is.Equal(del.Obj(), map[string]any{"user_id": float64(w.buyer.ID)})
	w.mustAsk(w.buyer, w.item, "may I ask again?")
	empty := w.do("GET", bl+"?limit=10", w.seller.Token, nil)
	is.Equal(empty.Obj()["users"], []any{})
}

func TestBlacklist_Errors(t *testing.T) {
	w := newQWorld(t)
	bl := fmt.Sprintf("/users/%d/questions_blacklist", w.seller.ID)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		token   string
		body    any
		status  int
		message string
	}{
		{"PostByOtherUser", "POST", bl, w.other.Token, map[string]any{"user_id": w.buyer.ID}, 403, fmt.Sprintf("Only user %d can manage its questions blacklist", w.seller.ID)},
		{"GetByOtherUser", "GET", bl, w.other.Token, nil, 403, fmt.Sprintf("Only user %d can manage its questions blacklist", w.seller.ID)},
		{"DeleteByOtherUser", "DELETE", fmt.Sprintf("%s/%d", bl, w.buyer.ID), w.other.Token, nil, 403, fmt.Sprintf("Only user %d can manage its questions blacklist", w.seller.ID)},
		{"PostWithoutToken", "POST", bl, "", map[string]any{"user_id": w.buyer.ID}, 401, ""},
		{"PostMissingUserID", "POST", bl, w.seller.Token, map[string]any{}, 400, "The fields [user_id] are required for requested call"},
		{"PostUserIDNotInteger", "POST", bl, w.seller.Token, map[string]any{"user_id": "x"}, 400, "Invalid JSON: the field [user_id] must be of type integer"},
		{"PostNegativeUserID", "POST", bl, w.seller.Token, map[string]any{"user_id": -3}, 400, "Invalid user_id: -3. It must be a positive integer"},
		{"PostSelf", "POST", bl, w.seller.Token, map[string]any{"user_id": w.seller.ID}, 400, "A seller cannot block itself"},
		{"PostUnknownUser", "POST", bl, w.seller.Token, map[string]any{"user_id": 5}, 404, "User not found: 5"},
		{"DeleteNotBlocked", "DELETE", fmt.Sprintf("%s/%d", bl, w.buyer.ID), w.seller.Token, nil, 404, fmt.Sprintf("User %d is not in the questions blacklist of user %d", w.buyer.ID, w.seller.ID)},
		{"PostArrayBodyIsNotAnObject", "POST", bl, w.seller.Token, `[1]`, 400, "Malformed JSON body: a JSON object is expected"},
		{"DeleteBadID", "DELETE", bl + "/abc", w.seller.Token, nil, 400, "Invalid user_id: abc. It must be a positive integer"},
		{"GetBadSeller", "GET", "/users/x/questions_blacklist", w.seller.Token, nil, 400, "Invalid user_id: x. It must be a positive integer"},
		{"GetBadOffset", "GET", bl + "?offset=z", w.seller.Token, nil, 400, "Invalid offset: z. It must be a non-negative integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, w.do(tc.method, tc.path, tc.token, tc.body), tc.status, tc.message)
		})
	}
	if got := w.do("GET", bl, w.seller.Token, nil).Obj()["paging"].(map[string]any)["total"]; got != float64(0) {
		t.Fatalf("refused calls changed the blacklist: total %v", got)
	}
}

// benchPair runs the request built by req through the marketplace and, in
// the same run, through a bare httprouter handler that answers the same
// bytes; the ratio of the two is the cost of the marketplace's work.
func benchPair(b *testing.B, w *qWorld, method, route string, wantStatus int, req func(b *testing.B, i int) *http.Request) {
	b.Helper()
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req(b, -1))
	if rec.Code != wantStatus {
		b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.Bytes())
	}
	answer := append([]byte(nil), rec.Body.Bytes()...)
	bare := httprouter.New()
	bare.Handle(method, route, func(rw http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		_, _ = io.Copy(io.Discard, r.Body)
		rw.Header().Set("Content-Type", "application/json; charset=utf-8")
		rw.WriteHeader(wantStatus)
		_, _ = rw.Write(answer)
	})
	run := func(h http.Handler) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req(b, i))
				if rec.Code != wantStatus {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
				}
			}
		}
	}
	b.Run("baseline", run(bare))
	b.Run("marketplace", run(w.handler))
}

func jsonRequest(method, path, token string, body any) *http.Request {
	enc, _ := json.Marshal(body)
	r := httptest.NewRequest(method, path, bytes.NewReader(enc))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	return r
}

func BenchmarkAsk(b *testing.B) {
	w := newQWorld(b)
	body := map[string]any{"text": "Does it come with a case?", "item_id": w.item}
	benchPair(b, w, "POST", "/questions", http.StatusCreated, func(*testing.B, int) *http.Request {
		return jsonRequest("POST", "/questions", w.buyer.Token, body)
	})
}

func BenchmarkAnswer(b *testing.B) {
	w := newQWorld(b)
	// Each run answers fresh questions; they are asked before the timer runs.
	var ids []int64
	var warm int64
	benchPair(b, w, "POST", "/answers", http.StatusOK, func(b *testing.B, i int) *http.Request {
		if i < 0 {
			warm = w.mustAsk(w.buyer, w.item, "warm-up")
			return jsonRequest("POST", "/answers", w.seller.Token, map[string]any{"question_id": warm, "text": "Yes, it does."})
		}
		if i == 0 {
			b.StopTimer()
			ids = ids[:0]
			for range b.N {
				q, err := w.m.Questions.Ask(context.Background(), w.buyer.ID, questions.AskInput{Text: "Is it new?", ItemID: w.item})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, q.ID)
			}
			b.StartTimer()
		}
		return jsonRequest("POST", "/answers", w.seller.Token, map[string]any{"question_id": ids[i], "text": "Yes, it does."})
	})
}

// BenchmarkSearch pages a seller with 100,000 questions, 50 at a time,
// newest first, and in the other orders the seller indexes hold.
func BenchmarkSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 100,000 questions")
	}
	w := newQWorld(b)
	buyers := []user{w.buyer, w.other}
	for i := range 100_000 {
		if i%1000 == 0 {
			w.clock.Advance(time.Minute)
		}
		if _, err := w.m.Questions.Ask(context.Background(), buyers[i%2].ID, questions.AskInput{Text: "Is it new?", ItemID: w.item}); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		sort   string
		offset int
	}{
		{"date_created&sort_types=DESC", 0}, {"date_created&sort_types=DESC", 5000},
		{"item_id&sort_types=DESC", 5000}, {"from_id&sort_types=ASC", 5000},
	} {
		path := fmt.Sprintf("/questions/search?seller_id=%d&limit=50&offset=%d&sort_fields=%s", w.seller.ID, tc.offset, tc.sort)
		b.Run(fmt.Sprintf("sort=%s/offset=%d", strings.SplitN(tc.sort, "&", 2)[0], tc.offset), func(b *testing.B) {
			benchPair(b, w, "GET", "/questions/:question_id", http.StatusOK, func(*testing.B, int) *http.Request {
				r := httptest.NewRequest("GET", path, nil)
				r.Header.Set("Authorization", "Bearer "+w.seller.Token)
				return r
			})
		})
	}
}

func TestSearchQuestions_DefaultLimitIs50AndOffsetIs0(t *testing.T) {
	is := is.New(t)
	w := newQWorld(t)
	for i := range 51 {
		w.mustAsk(w.buyer, w.item, fmt.Sprintf("question %d", i))
	}
	for _, path := range []string{
		fmt.Sprintf("/questions/search?seller_id=%d", w.seller.ID), // index-backed
		"/questions/search?item=" + w.item,                         // scan
	} {
		o := w.do("GET", path, w.seller.Token, nil).Obj()
		is.Equal(o["total"], float64(51))
		is.Equal(o["limit"], float64(50))
		is.Equal(len(o["questions"].([]any)), 50)
		is.Equal(o["filters"].(map[string]any)["offset"], float64(0))
		limited := w.do("GET", path+"&limit=3", w.seller.Token, nil).Obj()
		is.Equal(len(limited["questions"].([]any)), 3) // a limit of 3 returns at most 3
	}
}
