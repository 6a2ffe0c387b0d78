package stubs_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/stubs"
)

// withURL is a mapping whose request is {kind: value}, as an override
// that anyone may call: the worst a mapping on a reserved path could be.
func withURL(kind, value string) []byte {
	v, _ := json.Marshal(value)
	return []byte(`{"request":{"` + kind + `":` + string(v) + `},"response":{"status":200},"marketplace":{"override":true,"public":true}}`)
}

func TestParse_AURLMatcherThatCouldMatchAReservedPathIsRefusedNamingIt(t *testing.T) {
	cases := []struct{ kind, value, names string }{
		{"url", "/operator/stubs", "/operator/stubs"},
		{"url", "/operator/stubs?limit=1", "/operator/stubs"},
		{"url", "/operator", "/operator"},
		{"urlPath", "/operator/users/1", "/operator/users/1"},
		{"urlPath", "/operator/not-a-route-yet", "/operator/not-a-route-yet"},
		{"urlPath", "/health", "/health"},
		{"urlPath", "/metrics", "/metrics"},
		{"urlPath", "/console", "/console"},
		{"urlPath", "/console/app.js", "/console/app.js"},
		{"urlPathPattern", "/operator/stubs.*", "a path under /operator/"},
		{"urlPathPattern", "/operator/.*", "a path under /operator/"},
		{"urlPathPattern", "/operator.*", "/operator"},
		{"urlPathPattern", "/op.*", "/openapi.json"},
		{"urlPathPattern", ".*", "/console"},
		{"urlPathPattern", "/.*", "/console"},
		{"urlPathPattern", "/[a-z]+/stubs/.*", "a path under /console/"},
		{"urlPathPattern", "(?i)/OPERATOR/USERS/[0-9]+", "a path under /operator/"},
		{"urlPathPattern", "/(health|ready)", "/health"},
		{"urlPathPattern", "/hea?lth", "/health"},
		{"urlPathPattern", "/openapi.json", "/openapi.json"},
		{"urlPathPattern", "/console(/.*)?", "/console"},
		{"urlPathPattern", "/cons[o]le/x", "a path under /console/"},
		{"urlPathPattern", "/operator/\\d{1,3}", "a path under /operator/"},
		{"urlPathPattern", "/operator/\\b.*", "a path under /operator/"},
		{"urlPattern", "/health\\?.*", "/health with a query"},
		{"urlPattern", "/operator\\?x=1", "/operator with a query"},
		{"urlPattern", "/metrics(\\?.*)?", "/metrics"},
		{"urlPattern", ".*stubs.*", "/console with a query"},
		{"urlPattern", "/operator/.*", "a path under /operator/"},
		{"urlPathTemplate", "/operator/{x}", "a path under /operator/"},
		{"urlPathTemplate", "/{a}/stubs", "a path under /console/"},
		{"urlPathTemplate", "/{a}/payments", "a path under /console/"},
		{"urlPathTemplate", "/{x}", "/console"},
		{"urlPathTemplate", "/console/{asset}", "a path under /console/"},
	}
	for _, c := range cases {
		_, err := stubs.Parse(withURL(c.kind, c.value))
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "field request."+c.kind) ||
			!strings.Contains(err.Error(), "it could match "+c.names+",") {
			t.Errorf("%s %q: err = %v\n\twant Invalid naming request.%s and %q", c.kind, c.value, err, c.kind, c.names)
		}
	}
}

func TestParse_URLMatchersBesideTheReservedPathsAreTaken(t *testing.T) {
	cases := []struct{ kind, value string }{
		{"url", "/v1/payments/1?next=/operator/stubs"},
		{"urlPath", "/operators"},
		{"urlPath", "/healthz"},
		{"urlPath", "/health/deep"},
		{"urlPath", "/consoles"},
		{"urlPath", "/OPERATOR/stubs"},
		{"urlPathPattern", "/api/.*"},
		{"urlPathPattern", "/operators/.*"},
		{"urlPathPattern", "/health/.+"},
		{"urlPathPattern", "/healthz?x"},
		{"urlPathPattern", "/(v1|v2)/payments/[0-9]+"},
		{"urlPathPattern", "/operator$/x"},
		{"urlPattern", "/items\\?q=/operator/.*"},
		{"urlPathTemplate", "/v1/payments/{id}"},
		{"urlPathTemplate", "/v1/{a}/payments"},
	}
	for _, c := range cases {
		if _, err := stubs.Parse(withURL(c.kind, c.value)); err != nil {
			t.Errorf("%s %q: %v", c.kind, c.value, err)
		}
	}
	// No URL matcher: every path but the reserved ones, WireMock's any URL.
	if _, err := stubs.Parse([]byte(`{"request":{},"response":{},"marketplace":{"override":true}}`)); err != nil {
		t.Errorf("a catch-all: %v", err)
	}
}

func TestAnswer_NoStubAnswersAReservedPathWhateverTheStoreHolds(t *testing.T) {
	s := stubs.New(teststore.New(t))
	ctx := context.Background()
	// Kept by a server from before the rule: not judged again when read.
	for _, raw := range []string{
		`{"request":{"urlPathPattern":".*"},"response":{"status":418},"marketplace":{"override":true,"public":true}}`,
		`{"request":{"urlPath":"/operator/stubs"},"response":{"status":418},"marketplace":{"override":true,"public":true}}`,
	} {
		if _, err := s.CreateUnchecked(ctx, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, s, `{"request":{},"response":{"status":418},"marketplace":{"override":true,"public":true}}`)
	for _, path := range []string{"/operator/stubs", "/operator", "/operator/users/1", "/health", "/console", "/console/app.js", "/favicon.ico"} {
		for _, only := range []bool{true, false} {
			if a, ok, err := s.Answer(ctx, get(path), only, nil); ok || err != nil {
				t.Errorf("GET %s (only overrides %v): answered %+v %v", path, only, a, err)
			}
		}
	}
	if a, ok := answer(t, s, get("/v1/claims")); !ok || a.Status != 418 {
		t.Fatalf("the same stubs on a path of the API: %+v %v", a, ok)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("the stubs kept are listed, so that they can be deleted: %d %v", len(list), err)
	}
}

func TestLoad_AFileWithAMappingOnAReservedPathStoresNone(t *testing.T) {
	s := stubs.New(teststore.New(t))
	doc := `{"mappings": [{"request":{"urlPath":"/v1/claims"},"response":{}}, {"request":{"urlPathPattern":"/operator/.*"},"response":{}}]}`
	_, err := s.Load(context.Background(), []byte(doc))
	if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "Mapping 2 of 2") || !strings.Contains(err.Error(), "/operator/") {
		t.Fatalf("err = %v", err)
	}
	if list, _ := s.List(context.Background()); len(list) != 0 {
		t.Fatalf("stored %d mappings", len(list))
	}
}

// reservedSamples are paths a URL matcher must never match once the
// reserved paths of TestMain are set: each exact path, each prefix bare,
// and each prefix followed by suffix.
func reservedSamples(suffix string) []string {
	out := []string{"/health", "/ready", "/version", "/openapi.json", "/metrics", "/favicon.ico", "/console", "/operator"}
	for _, p := range []string{"/operator/", "/console/"} {
		out = append(out, p, p+suffix, p+"stubs/"+suffix)
	}
	return out
}

// FuzzParse_AnAcceptedURLPatternMatchesNoReservedPath checks the refusal
// against the regular expression engine itself: whatever pattern Parse
// takes, it matches none of the reserved paths, with or without a query.
func FuzzParse_AnAcceptedURLPatternMatchesNoReservedPath(f *testing.F) {
	for _, seed := range []string{".*", "/op.*", "/(?:a|operator)/.*", "/operator", "(?i)/Operator/x", `/\w+/stubs`, "/[^a]+",
		`/health\b.*`, "/heal(th)?", "/operator$x", "/o[p-q]erator/.+", "/con.ole/.*", "/.{6}", "/[a-z]{8}/[a-z]+", "/x|/health", "^/operator/.*$",
		`(?s).*`, `/operator\/stubs`, "/(?:operator/)*x", `\A/console\z`} {
		f.Add(seed, "x", false)
		f.Add(seed, "stubs/1", true)
	}
	f.Fuzz(func(t *testing.T, pattern, suffix string, withQuery bool) {
		if !utf8.ValidString(pattern) {
			return // JSON would carry another pattern than the one tried here
		}
		kind := "urlPathPattern"
		if withQuery {
			kind = "urlPattern"
		}
		if _, err := stubs.Parse(withURL(kind, pattern)); err != nil {
			return
		}
		re := regexp.MustCompile(`^(?:` + pattern + `)$`)
		for _, p := range reservedSamples(suffix) {
			if re.MatchString(p) || withQuery && re.MatchString(p+"?"+suffix) {
				t.Fatalf("%s %q was taken, and matches the reserved %q", kind, pattern, p)
			}
		}
	})
}
