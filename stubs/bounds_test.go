package stubs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/stubs"
)

func jsonPathMapping(expr string) []byte {
	v, _ := json.Marshal(expr)
	return []byte(`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":` + string(v) + `}]},"response":{},"marketplace":{"public":true}}`)
}

func TestParse_AJSONPathWhoseWorkGrowsFasterThanTheBodyIsRefused(t *testing.T) {
	refused := []struct{ expr, why string }{
		{`$..[?(@..a)]`, "descendant segment"},
		{`$..a..b`, "at most one descendant segment"},
		{`$[?count($..*) > 0]`, "descendant segment"},
		{`$..[?@[*]]`, "singular"},
		{`$[?count(@.*) > 1]`, "singular"},
		{`$[?@[0,1]]`, "singular"},
		{`$[?@[?@.a]]`, "singular"},
		{`$[?$[*].a]`, "singular"},
		{`$[?match(@.a, "x.*")]`, "match()"},
		{`$[?search(@.a, @.b)]`, "search()"},
		{`$..[?@.a == @.b]`, "literal on one side"},
		{`$[?(@.a == "x" || (@.b != $.c))]`, "literal on one side"},
		{`$[?!(@.a < value(@.b))]`, "literal on one side"},
		{"$." + strings.Repeat("a", stubs.MaxPathLength), "at most"},
	}
	for _, c := range refused {
		_, err := stubs.Parse(jsonPathMapping(c.expr))
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "request.bodyPatterns[0].matchesJsonPath") || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: err = %v, want Invalid naming the field and %q", c.expr, err, c.why)
		}
	}
	taken := []string{
		`$.things[?(@.name == 'RequiredThing')]`, `$..book[?(@.price < 10)]`, `$.a[0].b`, `$..a`, `$..*`, `$[?@.a == -1.5e3]`,
		`$["a","b"][*]`, `$[?length(@.name) > 3]`, `$..[?(@.name == "..$" && @["x y"][0] != "[?@..a]")]`, `$[0:3]..id`,
		`$[?@.a || !@.b]`, `$.items[?value(@.tags[0]) == "x"]`, `$[?null != @.a && (true == @.b || @.c >= 0)]`, `$[?length(@.a) > 3]`,
	}
	for _, expr := range taken {
		if _, err := stubs.Parse(jsonPathMapping(expr)); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
	// A template's JSONPath is held to the same shapes.
	_, err := stubs.Parse([]byte(`{"request":{},"response":{"body":"{{jsonPath request.body '$..a..b'}}","transformers":["response-template"]}}`))
	if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "descendant") {
		t.Errorf("a template's JSONPath: %v", err)
	}
}

func TestParse_ARegularExpressionIsBoundedInLengthAndSize(t *testing.T) {
	for _, c := range []struct{ mapping, want string }{
		{`{"request":{"urlPathPattern":"/` + strings.Repeat("a", stubs.MaxPatternLength) + `"},"response":{}}`, "at most 1000 bytes"},
		{`{"request":{"queryParameters":{"q":{"matches":"[a-z]{700}[0-9]{700}[a-f]{700}"}}},"response":{}}`, "too large"},
		{`{"request":{"bodyPatterns":[{"doesNotMatch":"[a-z]{1000}[0-9]{1000}"}]},"response":{}}`, "too large"},
	} {
		if _, err := stubs.Parse([]byte(c.mapping)); errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: err = %v, want %q", c.mapping, err, c.want)
		}
	}
}

// nested is n arrays of one object each, as the reports sent them.
func nested(n int) string {
	return strings.Repeat("[", n) + `{"a":1}` + strings.Repeat("]", n)
}

func post(body string) *stubs.Request {
	return &stubs.Request{Method: "POST", Path: "/x", Body: []byte(body)}
}

func TestMatch_ABodyBeyondTheJSONBoundsIsNoJSONToTheMatchers(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":"$..a"}]},"response":{"status":201},"marketplace":{"public":true}}`)
	mustCreate(t, s, `{"priority":9,"request":{"urlPath":"/x","bodyPatterns":[{"contains":"\"a\""}]},"response":{"status":202},"marketplace":{"public":true}}`)
	within := stubs.MaxJSONDepth - 1 // and the object inside
	big := `{"a":"` + strings.Repeat("x", stubs.MaxJSONBody-8) + `"}`
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"nested to the bound", nested(within), 201},
		{"nested beyond it", nested(within + 1), 202},
		{"the reported 20 KB", strings.Repeat("[", 9990) + `{"a":1}` + strings.Repeat("]", 9990), 202},
		{"the reported 30 KB", strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000), 202},
		{"as large as the bound", big, 201},
		{"larger", big + " ", 202},
	} {
		r := post(c.body)
		a, ok, err := s.Answer(context.Background(), r, false, nil)
		if err != nil || !ok || a.Status != c.want {
			t.Errorf("%s: %+v %v %v, want %d", c.name, a, ok, err, c.want)
		}
		if r.Work() > stubs.MaxWork {
			t.Errorf("%s: %d steps, past the bound %d", c.name, r.Work(), stubs.MaxWork)
		}
	}
}

// adversarial are mappings within the shape rules whose work on the right
// body is the largest: every node visited, and filtered, under a
// descendant segment; every pair of a large array compared; a regular
// expression whose automaton runs every state on every byte.
var adversarial = []string{
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":"$[*,*,*,*,*,*,*,*]..[?@.a.b.c.d.e.f.g.h == 1 && @[0][1][2][3] != 'x' && $.a.b.c.d.e.f.g.h == null && length(@[1]) > 0]"}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":{"expression":"$..*","matches":"(.*a){20}"}}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"equalToJson":[[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[1,2],[3,4]],"ignoreArrayOrder":true,"ignoreExtraElements":true}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matches":"(.*a){20}x"}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","queryParameters":{"q":{"matches":"(.*a){20}x"}},"headers":{"X-A":{"doesNotMatch":"(.*a){20}"}}},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":"$..*"}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":"$.none"}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matches":"(.*a){5}x"}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":{"expression":"$..*","equalTo":"x"}}]},"response":{},"marketplace":{"public":true}}`,
	`{"request":{"urlPath":"/x","bodyPatterns":[{"matchesJsonPath":"$..[?@.a == 1 || @.b != 'x' || @.a.a.a.a.b == null]"}]},"response":{},"marketplace":{"public":true}}`,
}

// adversarialBodies are the bodies that make the mappings above work
// hardest within MaxJSONBody and MaxJSONDepth.
func adversarialBodies() []string {
	var wide strings.Builder
	wide.WriteString("[")
	for wide.Len() < stubs.MaxJSONBody-16 {
		wide.WriteString("[1,2],")
	}
	wide.WriteString("[1,2]]")
	deep := strings.Repeat(`{"a":`, stubs.MaxJSONDepth-1) + `[[[[1]]]]` + strings.Repeat("}", stubs.MaxJSONDepth-1)
	deep = deep[:len(deep)-1] + `,"b":"` + strings.Repeat("a", stubs.MaxJSONBody-len(deep)-16) + `"}`
	// A tree whose every object holds two equal halves, as deep as it
	// fits: comparing the halves reads them whole.
	twin := "1"
	for len(twin)*2+16 < stubs.MaxJSONBody {
		twin = `{"a":` + twin + `,"b":` + twin + `}`
	}
	return []string{wide.String(), deep, strings.Repeat("a", 1<<20), twin}
}

func TestMatch_TheWorstMappingsOnTheWorstBodiesStayWithinTheBound(t *testing.T) {
	s := stubs.New(teststore.New(t))
	// Each mapping 20 times: a request tries them all.
	for range 20 {
		for _, m := range adversarial {
			mustCreate(t, s, m)
		}
	}
	for i, body := range adversarialBodies() {
		r := post(body)
		r.RawQuery = "q=" + strings.Repeat("a", 60000)
		r.Header = map[string][]string{"X-A": {strings.Repeat("a", 60000)}}
		if _, _, err := s.Answer(context.Background(), r, false, nil); err != nil {
			t.Fatal(err)
		}
		if r.Work() > stubs.MaxWork {
			t.Errorf("body %d: %d steps, past the bound %d", i, r.Work(), stubs.MaxWork)
		}
	}
}

func TestAnswer_AStubThatIsNotPublicReadsNothingBeyondTheURLOfACallerItRefuses(t *testing.T) {
	s := stubs.New(teststore.New(t))
	mustCreate(t, s, `{"request":{"urlPath":"/x","queryParameters":{"q":{"matches":"(.*a){20}"}},"bodyPatterns":[{"matchesJsonPath":"$..[?@.a]"}]},"response":{}}`)
	refuse := errs.Unauthorizedf("no token")
	r := post(nested(30))
	r.RawQuery = "q=" + strings.Repeat("a", 1000)
	calls := 0
	_, _, err := s.Answer(context.Background(), r, false, func(*stubs.Mapping) error { calls++; return refuse })
	if err != refuse || calls != 1 {
		t.Fatalf("err = %v after %d asks, want the refusal after one", err, calls)
	}
	if r.Work() != 0 {
		t.Fatalf("%d steps spent on a refused caller's query and body", r.Work())
	}
	// A refusal that the body would not have matched either: still the
	// refusal, not a 404 that tells the caller what the stub wants.
	if _, _, err := s.Answer(context.Background(), post(`{}`), false, func(*stubs.Mapping) error { return refuse }); err != refuse {
		t.Fatalf("err = %v", err)
	}
}

func TestAnswer_ACallerGoneStopsTheStubsBeingTried(t *testing.T) {
	s := stubs.New(teststore.New(t))
	for i := range 100 {
		mustCreate(t, s, fmt.Sprintf(`{"request":{"urlPath":"/x","bodyPatterns":[{"contains":"%d-never"}]},"response":{},"marketplace":{"public":true}}`, i))
	}
	// The newest is tried first: a stub that asks who the caller is, who
	// leaves while asked.
	mustCreate(t, s, `{"request":{"urlPath":"/x","bodyPatterns":[{"contains":"never"}]},"response":{}}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := post(strings.Repeat("b", 64<<10))
	_, _, err := s.Answer(ctx, r, false, func(*stubs.Mapping) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	// Each stub reads the body once (64 KiB at 64 bytes a step): the
	// caller's leaving is seen within 32 stubs.
	if r.Work() > 32*(1<<10+1) {
		t.Fatalf("%d steps after the caller left", r.Work())
	}
	r = post("b")
	if _, _, err := s.Answer(ctx, r, false, nil); !errors.Is(err, context.Canceled) || r.Work() != 0 {
		t.Fatalf("a caller gone before: %v, %d steps", err, r.Work())
	}
}

// FuzzMatch_AnyBodyStaysWithinTheBound sends any body, query and header
// value to the adversarial mappings and to ones of every matcher kind.
func FuzzMatch_AnyBodyStaysWithinTheBound(f *testing.F) {
	for _, b := range adversarialBodies()[:2] {
		f.Add(b, "aaaa")
	}
	f.Add(nested(9990), "q")
	f.Add(`{"a":[1,{"b":[2,{"c":3}]}]}`, "x")
	st := teststore.New(f)
	s := stubs.New(st)
	for _, m := range adversarial {
		mustCreateTB(f, s, m)
	}
	for _, expr := range []string{`$..a`, `$..*`, `$[*]..[?@.a == 'b']`, `$..[?@ != 1]`, `$[*,*,*,*][*,*,*,*]..*`} {
		mustCreateTB(f, s, string(jsonPathMapping(expr)))
	}
	f.Fuzz(func(t *testing.T, body, value string) {
		r := post(body)
		r.RawQuery = "q=" + value
		r.Header = map[string][]string{"X-A": {value}}
		if _, _, err := s.Answer(context.Background(), r, false, nil); err != nil {
			t.Fatal(err)
		}
		if r.Work() > stubs.MaxWork {
			t.Fatalf("%d steps, past the bound %d", r.Work(), stubs.MaxWork)
		}
	})
}

func mustCreateTB(tb testing.TB, s *stubs.Service, mapping string) {
	tb.Helper()
	if _, err := s.Create(context.Background(), []byte(mapping)); err != nil {
		tb.Fatalf("create %s: %v", mapping, err)
	}
}

// FuzzParse_AnAcceptedJSONPathStaysWithinTheBound tries any JSONPath: one
// that Parse takes runs on any body within the bound, without a panic.
func FuzzParse_AnAcceptedJSONPathStaysWithinTheBound(f *testing.F) {
	for _, e := range []string{`$..a`, `$..[?(@..a)]`, `$[?@.a == "x"]`, `$[*,*]..[?length(@.a) > 1]`, `$..[?@.b[0] != null]`, `$["a"][1:9:2]`} {
		f.Add(e, `{"a":[{"a":1,"b":[null]},"x"]}`)
	}
	f.Add(`$[*,*,*,*][*,*,*,*]..*`, nested(20))
	f.Fuzz(func(t *testing.T, expr, body string) {
		s := stubs.New(teststore.New(t))
		if _, err := s.Create(context.Background(), jsonPathMapping(expr)); err != nil {
			return
		}
		r := post(body)
		if _, _, err := s.Answer(context.Background(), r, false, nil); err != nil {
			t.Fatal(err)
		}
		if r.Work() > stubs.MaxWork {
			t.Fatalf("%d steps, past the bound %d", r.Work(), stubs.MaxWork)
		}
	})
}
