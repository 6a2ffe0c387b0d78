package redact_test

import (
	"strings"
	"testing"

	"github.com/marketplace/marketplace/internal/redact"
)

const operator = "OPERATOR-0123456789abcdef"

func TestText_TokensOfEveryShapeTheEngineIssuesAreReplaced(t *testing.T) {
	r := redact.New("my-chosen-operator-secret")
	for _, c := range []struct{ in, want string }{
		{"/items/APP_USR-6a1b2c3d4e5f", "/items/REDACTED"},                               // an operator-issued access token
		{"/items/APP_USR-1000001-030415-9f8e7d6c5b4a-1000002", "/items/REDACTED"},        // an OAuth access token
		{"/items/APP_USR-demo-seller-0000000000000001/relist", "/items/REDACTED/relist"}, // the demo seller's
		{"/questions/TG-a1b2c3d4e5f6-1000002", "/questions/REDACTED"},                    // a refresh token or code
		{"/users/OPERATOR-0a1b2c", "/users/REDACTED"},                                    // a generated operator token
		{"Item with id app_usr-abc not found", "Item with id REDACTED not found"},        // any case
		{`Invalid item id: "APP_USR-x\u0000"`, `Invalid item id: "REDACTED\u0000"`},      // quoted
		{"a APP_USR-1 b TG-2 c", "a REDACTED b REDACTED c"},                              // each of several
		{"/users/my-chosen-operator-secret/x", "/users/REDACTED/x"},                      // the server's own secret
		{"prefix:my-chosen-operator-secret.", "prefix:REDACTED."},                        // anywhere
	} {
		if got := r.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText_WordsThatOnlyResembleATokenAreKept(t *testing.T) {
	r := redact.New(operator)
	for _, s := range []string{
		"/items/MLA1234567890", "/classified_locations/states/BR-SP", "STG-1", "MLATG-2", "TG-", "APP_USR-",
		"/sites/MLA/search?q=mesa-roble", "gold_special", "",
	} {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it kept", s, got)
		}
	}
}

func TestPath_ASegmentThatIsAShortSecretIsReplaced(t *testing.T) {
	r := redact.New("op")
	if got := r.Path("/items/op/stock"); got != "/items/REDACTED/stock" {
		t.Errorf("Path = %q", got)
	}
	if got := r.Path("/items/MLAop/stop"); got != "/items/MLAop/stop" {
		t.Errorf("Path = %q, a short secret inside a word is kept", got)
	}
	if got := r.Text("/items/op"); got != "/items/op" {
		t.Errorf("Text = %q, a short secret is not looked for in free text", got)
	}
}

func TestQuery_ValuesThatNameOrHoldATokenOrTheSecretAreReplaced(t *testing.T) {
	r := redact.New(operator, "short")
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"limit=5&offset=10", "limit=5&offset=10"},
		{"access_token=x&limit=5", "access_token=REDACTED&limit=5"},
		{"q=APP_USR-123", "q=REDACTED"},
		{"q=mesa+APP_USR-123", "q=REDACTED"},
		{"q=APP%5FUSR-123", "q=REDACTED"},
		{"x=" + operator, "x=REDACTED"},
		{"x=short&y=shorter", "x=REDACTED&y=shorter"},
		{"Access%5FToken=x&flag", "Access%5FToken=REDACTED&flag"},
	} {
		if got := r.Query(c.in); got != c.want {
			t.Errorf("Query(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText_WithoutATokenAllocatesNothing(t *testing.T) {
	r := redact.New(operator)
	path := "/users/1000001/items/search"
	if n := testing.AllocsPerRun(100, func() { _ = r.Text(path) }); n != 0 {
		t.Errorf("Text allocated %v times for a path with no token", n)
	}
	if got := r.Text(strings.Repeat("a-", 10)); got != strings.Repeat("a-", 10) {
		t.Errorf("Text changed a text with dashes and no token: %q", got)
	}
}
