package redact_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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

func TestText_CredentialShapesAreReplaced(t *testing.T) {
	r := redact.New()
	hex64 := strings.Repeat("0123456789abcdef", 4)
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	for _, c := range []struct{ in, want string }{
		{"k " + jwt + " v", "k REDACTED v"},                                          // a JSON Web Token
		{"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "REDACTED"},                         // unsigned
		{"secret=" + hex64, "secret=REDACTED"},                                       // a client or notification secret
		{strings.ToUpper(hex64), "REDACTED"},                                         // in any case
		{"Authorization: Bearer opaque.value_123", "Authorization: Bearer REDACTED"}, // any bearer credential
		{"basic dXNlcjpwYXNzd29yZA== x", "basic REDACTED x"},                         // user:password
		{"Basic dXNlcjpwYXNzd29yZA", "Basic REDACTED"},                               // without its padding
	} {
		if got := r.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText_WordsThatOnlyResembleACredentialAreKept(t *testing.T) {
	r := redact.New()
	for _, s := range []string{
		"basic questions", "Basic shipping", "the bearer of", "eyJ", "eyJhbGciOiJIUzI1NiJ9", // no payload
		strings.Repeat("a", 63), "0f8fad5bd9cb469fa16570867728950e", // a UUID without its dashes
		"x" + strings.Repeat("ab", 40), // hex inside a word
	} {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it kept", s, got)
		}
	}
}

func TestHeader_ANameThatSaysCredentialHidesTheWholeValue(t *testing.T) {
	r := redact.New()
	for _, name := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Auth",
		"X-Auth-Token", "X-Api-Key", "Api-Key", "X-Access-Token", "X-Csrf-Token", "X-Client-Secret", "X-Password",
		"X-Session-Id", "X-Amz-Security-Token", "Private-Key", "X-Credentials", "Basic-Auth", "xAuth"} {
		if got := r.Header(name, "plain-value-1"); got != redact.Mark {
			t.Errorf("Header(%s) = %q, want %s", name, got, redact.Mark)
		}
	}
	for _, name := range []string{"Content-Type", "X-Version", "X-Idempotency-Key", "User-Agent", "Accept",
		"X-Author", "X-Passenger", "X-Keyword", "X-Caller-Id", "X-Zip-Code"} {
		if got := r.Header(name, "plain-value-1"); got != "plain-value-1" {
			t.Errorf("Header(%s) = %q, want it kept", name, got)
		}
	}
}

func TestFor_ACredentialTheRequestPresentsIsReplacedWhereverItAppearsAgain(t *testing.T) {
	const tok = "chosen~fixture:token!42"
	h := map[string][]string{"Authorization": {"Bearer " + tok}, "X-Auth": {"other-credential-77"}}
	r := redact.New(operator).For(context.Background(), nil, h, "access_token=query-credential-9")
	for _, c := range []struct{ got, want string }{
		{r.Path("/items/" + tok), "/items/REDACTED"},
		{r.Query("q=" + url.QueryEscape(tok)), "q=REDACTED"},
		{r.Header("X-Note", "see other-credential-77"), "see REDACTED"},
		{r.Body("application/json", []byte(`{"note":"query-credential-9"}`)), `{"note":"REDACTED"}`},
		{r.Text("a " + tok + " b"), "a REDACTED b"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// A secret the body carries under a credential's name is replaced in
	// the rest of the request too.
	r = redact.New().For(context.Background(), nil, nil, "")
	_ = r.Body("", []byte("client_id=1&client_secret=body-secret-123"))
	if got := r.Path("/x/body-secret-123"); got != "/x/REDACTED" {
		t.Errorf("Path after the body = %q", got)
	}
	// The redactor of New learns nothing: it serves every request at once.
	base := redact.New()
	_ = base.Header("Authorization", "Bearer learned-nothing-1")
	if got := base.Text("learned-nothing-1"); got != "learned-nothing-1" {
		t.Errorf("New's redactor learned a request's credential: %q", got)
	}
}

func TestFor_TheKnownCheckIsAskedOncePerWordWithinItsBoundAndNotForRoutedPaths(t *testing.T) {
	asked := map[string]int{}
	known := func(w string) bool { asked[w]++; return w == "fixturetokenwithnoshape" }
	r := redact.New().For(context.Background(), checkOf(known), nil, "")
	if got := r.Path("/items/fixturetokenwithnoshape"); got != "/items/REDACTED" {
		t.Errorf("Path = %q", got)
	}
	if got := r.Query("q=fixturetokenwithnoshape&ids=MLA1"); got != "q=REDACTED&ids=MLA1" {
		t.Errorf("Query = %q", got)
	}
	if got := r.Body("text/plain", []byte("it is fixturetokenwithnoshape, ok")); got != "it is REDACTED, ok" {
		t.Errorf("Body = %q", got)
	}
	if asked["fixturetokenwithnoshape"] != 1 {
		t.Errorf("asked %d times about one word", asked["fixturetokenwithnoshape"])
	}
	if len(asked) != 1 {
		t.Errorf("asked about %v; words under %d characters are not asked about", asked, redact.MinKnownLength)
	}
	r = redact.New().For(context.Background(), checkOf(known), nil, "")
	if got := r.RoutedPath("/orders/2000000000000001"); got != "/orders/2000000000000001" || asked["2000000000000001"] != 0 {
		t.Errorf("RoutedPath = %q, asked %d times", got, asked["2000000000000001"])
	}
	// Beyond the bound, a word is taken for a token without asking.
	var words []string
	for i := range redact.MaxKnownChecks + 2 {
		words = append(words, fmt.Sprintf("ordinary-long-word-%03d", i))
	}
	got := r.Body("text/plain", []byte(strings.Join(words, " ")))
	if n := strings.Count(got, redact.Mark); n != 2 {
		t.Errorf("%d words replaced beyond the bound, want 2: %s", n, got)
	}
}

func TestBody_WithoutASecretIsKeptAsSent(t *testing.T) {
	r := redact.New(operator).For(context.Background(), checkOf(func(string) bool { return false }), nil, "")
	for _, c := range []struct{ contentType, body string }{
		{"application/json", `{"question_id": 1, "text": "Sí, hacemos envío"}`},
		{"application/json", "{\n  \"title\": \"Mesa de roble\", \"price\": 12.50, \"zip_code\": \"1425\",\n  \"pictures\": [{\"source\": \"https://example.com/a.jpg?w=1&h=2\"}], \"author_id\": 7\n}"},
		{"application/json", `{"z":1,"a":[true,null,1e3],"codes":["x"],"keyword":"basic questions"}`},
		{"application/x-www-form-urlencoded", "grant_type=authorization_code&client_id=1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb"},
		{"text/plain", "Hola, ¿tienen stock? Gracias & saludos: 100% seguro"},
		{"", `<xml a="b">c</xml>`},
	} {
		if got := r.Body(c.contentType, []byte(c.body)); got != c.body {
			t.Errorf("Body(%q) = %q, want it as sent", c.body, got)
		}
	}
}

func TestBody_SecretsAreReplacedWhateverTheEncoding(t *testing.T) {
	r := redact.New(operator)
	for _, c := range []struct{ name, contentType, body, want string }{
		{"JSON", "application/json", `{"a": 1, "password": "hunter2", "b": [2]}`, `{"a": 1, "password": "REDACTED", "b": [2]}`},
		{"JSONNumber", "application/json", `{"pin": 1, "pwd": 1234}`, `{"pin": 1, "pwd": "REDACTED"}`},
		{"JSONObject", "application/json", `{"credentials": {"user": "u", "pass": ["x"]}, "k": 1}`, `{"credentials": "REDACTED", "k": 1}`},
		{"JSONEscapedName", "application/json", `{"client\u005fsecret": "s"}`, `{"client\u005fsecret": "REDACTED"}`},
		{"JSONEscapedValue", "application/json", `{"note": "APP\u005fUSR-123"}`, `{"note": "REDACTED"}`},
		{"JSONEmbeddedForm", "application/json", `{"note": "a=1&client_secret=s"}`, `{"note": "a=1&client_secret=REDACTED"}`},
		{"FormAsTextPlain", "text/plain", "grant_type=x&client_secret=s3cr3t", "grant_type=x&client_secret=REDACTED"},
		{"FormWithoutContentType", "", "client%5Fsecret=s3cr3t&x=1", "client%5Fsecret=REDACTED&x=1"},
		{"InvalidJSON", "application/json", `{"client_secret": "s3cr3t", "x": 1,}`, `{"client_secret": "REDACTED", "x": 1,}`},
		{"InvalidJSONEscaped", "application/json", `{"note": "APP\u005fUSR-1",`, redact.Mark},
		{"Text", "text/plain", "user: me\npassword: hunter2\nAuthorization: Basic abc", "user: me\npassword: REDACTED\nAuthorization: REDACTED"},
		{"TextQuoted", "text/plain", `{auth: 'a b c', x: 1}`, `{auth: "REDACTED", x: 1}`},
		{"Multipart", "multipart/form-data; boundary=B",
			"--B\r\nContent-Disposition: form-data; name=\"passwd\"\r\n\r\nhunter2\r\n--B--\r\n",
			"--B\r\nContent-Disposition: form-data; name=\"passwd\"\r\n\r\nREDACTED\r\n--B--\r\n"},
		{"MultipartCut", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"passwd\"\r\n\r\nhun", redact.Mark},
		{"MultipartUndeclared", "", "--B\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nok\r\n--B--\r\n",
			"--B\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nok\r\n--B--\r\n"},
		{"EscapedTwice", "text/plain", "q=" + url.QueryEscape(url.QueryEscape("x&password=hunter2")), "q=REDACTED"},
	} {
		if got := r.Body(c.contentType, []byte(c.body)); got != c.want {
			t.Errorf("%s: Body(%q) = %q, want %q", c.name, c.body, got, c.want)
		}
	}
}

// checkOf is a known check that never fails.
func checkOf(known func(string) bool) func(context.Context, string) (bool, error) {
	return func(_ context.Context, w string) (bool, error) { return known(w), nil }
}

func TestFor_AKnownCheckThatFailsIsNotAskedAgainAndItsWordsAreReplaced(t *testing.T) {
	asked := 0
	r := redact.New().For(context.Background(), func(context.Context, string) (bool, error) {
		asked++
		return false, errors.New("the store is down")
	}, nil, "")
	got := r.Path("/users/someLongOpaqueWord0001/items/anotherLongOpaqueWord02")
	if got != "/users/"+redact.Mark+"/items/"+redact.Mark || asked != 1 {
		t.Fatalf("path %q after %d checks; want both words replaced after 1", got, asked)
	}
}
