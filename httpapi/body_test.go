package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/httpapi"
)

// notAnObject are JSON bodies that are valid JSON but not an object.
var notAnObject = []string{"null", " null\n", "[]", "[{}]", "1", "-0.5", `"x"`, "true"}

// bodyMessages are the routes whose refusal of a body that is not an
// object is their own spec error rather than the general message.
var bodyMessages = map[string]string{
	"POST /questions":        "Invalid JSON. Valid attributes are: [item_id, text].",
	"POST /answers":          "Invalid JSON. Valid attributes are: [question_id, text].",
	"PUT /operator/fixtures": "Invalid fixtures: a JSON object is expected",
	"POST /oauth/token":      "Malformed JSON body: a JSON object of parameters is expected",
}

// TestBodies_JSONThatIsNotAnObjectIsA400OnEveryRouteThatReadsOneAndChangesNothing
// walks the route table's body routes and sends each JSON value that is not
// an object: null (which decodes into nothing and used to create a store),
// arrays, numbers, strings and booleans. Each is a 400 with the route's
// message for a malformed body, and nothing any route reads has changed.
func TestBodies_JSONThatIsNotAnObjectIsA400OnEveryRouteThatReadsOneAndChangesNothing(t *testing.T) {
	w := newRobustWorld(t)
	routes := w.server.BodyRoutes()
	if routes[httpapi.Route{Method: "POST", Path: "/operator/users/:user_id/stores"}] != "object" ||
		routes[httpapi.Route{Method: "POST", Path: "/users/test_user"}] != "object" ||
		routes[httpapi.Route{Method: "PUT", Path: "/user-products/:user_product_id/stock/type/seller_warehouse"}] != "optional object" {
		t.Fatalf("the route table's body routes are not as declared: %v", routes)
	}
	params := strings.NewReplacer(":user_id", strconv.FormatInt(w.plain.ID, 10), ":item_id", w.plainItm,
		":user_product_id", w.userProduct, ":order_id", "1", ":shipment_id", "1",
		":question_id", strconv.FormatInt(w.question, 10), ":app_id", strconv.FormatInt(w.appID, 10),
		":pack_id", "1", ":message_id", "fd1d2e37ad004ede9e0bf25d1215002d", ":message_ids", "fd1d2e37ad004ede9e0bf25d1215002d",
		":claim_id", "5000000001", ":return_id", "57000001", ":feedback_id", "1", ":side", "sale", ":note_id", "1")
	keys := make([]httpapi.Route, 0, len(routes))
	for rt := range routes {
		keys = append(keys, rt)
	}
	slices.SortFunc(keys, func(a, b httpapi.Route) int { return strings.Compare(a.Method+a.Path, b.Method+b.Path) })
	for _, rt := range keys {
		path := params.Replace(rt.Path)
		if strings.Contains(path, ":") {
			t.Fatalf("%s %s: a parameter without a value", rt.Method, rt.Path)
		}
		token := w.plain.Token
		if strings.HasPrefix(path, "/operator/") {
			token = testOperatorToken
		}
		want := "Malformed JSON body: a JSON object is expected"
		if m, ok := bodyMessages[rt.Method+" "+rt.Path]; ok {
			want = m
		}
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			before := w.fullSnapshot()
			for _, body := range notAnObject {
				rec := w.serve(robustRequest{method: rt.Method, target: path, body: []byte(body),
					headers: bearer(token, "x-version", "0")})
				if err := checkAnswer(rec, w.log); err != nil {
					t.Fatalf("body %s: %v", body, err)
				}
				res := response{Status: rec.Code, Raw: rec.Body.Bytes()}
				res.Body = decodeJSON(t, res.Raw)
				wantError(t, res, http.StatusBadRequest, want)
			}
			// One look after all of them: a body that changed anything
			// leaves it changed.
			if after := w.fullSnapshot(); after != before {
				t.Fatalf("refused bodies changed state:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, b)
	}
	return v
}
