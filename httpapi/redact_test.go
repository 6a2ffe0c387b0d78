package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/storage/memory"
)

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// loggedServer is a test server whose log lines (JSON) are kept.
func loggedServer(t *testing.T) (*testServer, *lockedBuffer) {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var log lockedBuffer
	h := httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk,
		Logger: slog.New(slog.NewJSONHandler(&log, nil))}))
	return &testServer{t: t, m: m, clock: clk, handler: h}, &log
}

// requestLogPaths returns the path of every "request" line of log.
func requestLogPaths(t *testing.T, log string) []string {
	t.Helper()
	var paths []string
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct{ Msg, Path string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Bytes())
		}
		if line.Msg == "request" {
			paths = append(paths, line.Path)
		}
	}
	return paths
}

// TestRedaction_TokenWrittenIntoAPathIsRedactedInTheLogTheJournalAndTheErrorMessage
// sends, for each token shape the engine issues and for the operator
// token, a request with the token as a path segment: the 404's message, the
// request log line and the journal entry all read REDACTED in its place,
// and the token is nowhere in any of them.
func TestRedaction_TokenWrittenIntoAPathIsRedactedInTheLogTheJournalAndTheErrorMessage(t *testing.T) {
	ts, log := loggedServer(t)
	buyer := ts.mustUser("MLA", "normal")
	for _, c := range []struct {
		name, token, path, message string
	}{
		{"OwnAccessTokenAsItemID", buyer.Token, "/items/" + buyer.Token, "Item with id REDACTED not found"},
		{"OAuthAccessToken", "APP_USR-1000001-030415-9f8e7d6c5b4a3f2e-1000002", "/items/APP_USR-1000001-030415-9f8e7d6c5b4a3f2e-1000002",
			"Item with id REDACTED not found"},
		{"DemoToken", marketplace.DemoSellerToken, "/items/" + marketplace.DemoSellerToken, "Item with id REDACTED not found"},
		{"RefreshToken", "TG-6a5b4c3d2e1f-1000002", "/questions/TG-6a5b4c3d2e1f-1000002", ""},
		{"OperatorToken", testOperatorToken, "/items/" + testOperatorToken, "Item with id REDACTED not found"},
		{"NoRoute", "APP_USR-abcdef0123456789", "/nope/APP_USR-abcdef0123456789", "Resource GET /nope/REDACTED not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do("GET", c.path, buyer.Token, nil)
			if res.Status < 400 {
				t.Fatalf("status %d, want an error", res.Status)
			}
			if bytes.Contains(res.Raw, []byte(c.token)) {
				t.Fatalf("the answer quotes the token: %s", res.Raw)
			}
			if c.message != "" && res.Obj()["message"] != c.message {
				t.Fatalf("message = %q, want %q", res.Obj()["message"], c.message)
			}
			want := strings.Replace(c.path, c.token, "REDACTED", 1)
			paths := requestLogPaths(t, log.String())
			if len(paths) == 0 || paths[len(paths)-1] != want {
				t.Fatalf("last logged path of %v, want %q", paths, want)
			}
			if strings.Contains(log.String(), c.token) {
				t.Fatalf("the log holds the token: %s", log.String())
			}
			j := ts.do("GET", "/operator/requests?limit=1", testOperatorToken, nil)
			entries, _ := j.Obj()["results"].([]any)
			if len(entries) != 1 || entries[0].(map[string]any)["path"] != want {
				t.Fatalf("journal = %s, want the path %q", j.Raw, want)
			}
			if bytes.Contains(j.Raw, []byte(c.token)) {
				t.Fatalf("the journal holds the token: %s", j.Raw)
			}
		})
	}
}

// TestRedaction_TokenInAQueryValueIsRedactedInTheJournalAndTheErrorMessage:
// a token sent as the value of any parameter is replaced in the journal's
// query, and an error message that quotes the value does not show it.
func TestRedaction_TokenInAQueryValueIsRedactedInTheJournalAndTheErrorMessage(t *testing.T) {
	ts, _ := loggedServer(t)
	buyer := ts.mustUser("MLA", "normal")
	tok := "APP_USR-0123456789abcdef0123"
	res := ts.do("GET", "/items?ids="+tok, buyer.Token, nil)
	if bytes.Contains(res.Raw, []byte(tok)) {
		t.Fatalf("the answer quotes the token: %s", res.Raw)
	}
	j := ts.do("GET", "/operator/requests?limit=1", testOperatorToken, nil)
	entries, _ := j.Obj()["results"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["query"] != "ids=REDACTED" {
		t.Fatalf("journal = %s, want the query ids=REDACTED", j.Raw)
	}
	res = ts.do("GET", "/users/"+testOperatorToken+"/items/search", buyer.Token, nil)
	if res.Status != http.StatusBadRequest && res.Status != http.StatusNotFound && res.Status != http.StatusForbidden {
		t.Fatalf("status %d: %s", res.Status, res.Raw)
	}
	if strings.Contains(string(res.Raw), testOperatorToken) {
		t.Fatalf("the answer quotes the operator token: %s", res.Raw)
	}
}

// TestRedaction_PathsWithoutATokenAreLoggedAsSent: the redaction changes
// nothing else, ids with dashes included.
func TestRedaction_PathsWithoutATokenAreLoggedAsSent(t *testing.T) {
	ts, log := loggedServer(t)
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/classified_locations/states/BR-SP", nil))
	if paths := requestLogPaths(t, log.String()); len(paths) != 1 || paths[0] != "/classified_locations/states/BR-SP" {
		t.Fatalf("logged paths %v", paths)
	}
}

// journalSize is the journal of journalServer: room for every position of
// one secret.
const journalSize = 400

// journalServer is a test server whose journal keeps headers and bodies,
// and whose log lines are kept.
func journalServer(t *testing.T) (*testServer, *lockedBuffer) {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var log lockedBuffer
	// Unchecked against the OpenAPI document, as the fuzz tests are: the
	// requests carry their credentials where no client should.
	h := httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk,
		Journal: journal.NewWithBodies(journalSize, journal.Bodies{}), Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	return &testServer{t: t, m: m, clock: clk, handler: h}, &log
}

// secretShape is a credential as it is written into a request (put) and
// the part of it that must never be kept (hidden).
type secretShape struct{ name, put, hidden string }

// engineSecrets returns a credential of every shape the engine issues or
// accepts: its access tokens (operator-issued and OAuth), a refresh token,
// an authorization code, a client secret, a notification secret, the
// operator token, fixture tokens of shapes of their authors' choice, a JSON
// Web Token and Basic and Bearer credentials.
func engineSecrets(t *testing.T, ts *testServer) []secretShape {
	t.Helper()
	u := ts.mustUser("MLA", "normal")
	res := ts.operator("POST", "/operator/applications", map[string]any{
		"name": "My app", "owner_user_id": u.ID, "callback_url": "https://example.com/notifications",
		"topics": []string{"questions"}, "redirect_uris": []string{appRedirect},
	})
	if res.Status != http.StatusCreated {
		t.Fatalf("create application: %d %s", res.Status, res.Raw)
	}
	o := res.Obj()
	app := oauthApp{ID: int64(o["id"].(float64)), ClientID: fmt.Sprint(int64(o["client_id"].(float64))), Secret: o["client_secret"].(string)}
	pair := ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
		"client_secret": {app.Secret}, "code": {ts.mustCode(app, u.ID, appRedirect, nil)}, "redirect_uri": {appRedirect}})
	if pair.Status != http.StatusOK {
		t.Fatalf("token: %d %s", pair.Status, pair.Raw)
	}
	fixtures := []string{"fixture.Token~of_any:shape!42", "plainfixturetokenwithnoprefix", "12345678901234567890"}
	for _, tok := range fixtures {
		if err := ts.m.Accounts.AddToken(context.Background(), u.ID, tok); err != nil {
			t.Fatalf("add token %q: %v", tok, err)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte(app.ClientID + ":" + app.Secret))
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMDAwMDAxIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	shapes := []secretShape{
		{"OperatorIssuedAccessToken", u.Token, u.Token},
		{"OAuthAccessToken", pair.Obj()["access_token"].(string), pair.Obj()["access_token"].(string)},
		{"RefreshToken", pair.Obj()["refresh_token"].(string), pair.Obj()["refresh_token"].(string)},
		{"AuthorizationCode", ts.mustCode(app, u.ID, appRedirect, nil), ""},
		{"ClientSecret", app.Secret, app.Secret},
		{"NotificationSecret", o["secret"].(string), o["secret"].(string)},
		{"OperatorToken", testOperatorToken, testOperatorToken},
		{"DemoToken", marketplace.DemoSellerToken, marketplace.DemoSellerToken},
		{"JWT", jwt, jwt},
		{"BasicCredentials", "Basic " + basic, basic},
		{"BearerCredentials", "Bearer opaque.credential_value-77", "opaque.credential_value-77"},
	}
	shapes[3].hidden = shapes[3].put
	for i, tok := range fixtures {
		shapes = append(shapes, secretShape{fmt.Sprintf("FixtureToken%d", i), tok, tok})
	}
	return shapes
}

// secretNames are the names under which a client sends a credential.
var secretNames = []string{"password", "passwd", "pwd", "secret", "client_secret", "token", "access_token",
	"refresh_token", "api_key", "apikey", "private_key", "credentials", "auth", "authorization", "code",
	"code_verifier", "X-Api-Key", "id_token", "Password"}

// jsonEscaped writes s as a JSON string with every character \u-escaped.
func jsonEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// bodyEncoding writes a body that carries value under name.
type bodyEncoding struct {
	name, contentType string
	write             func(name, value string) string
}

var bodyEncodings = []bodyEncoding{
	{"JSON", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{"grant_type": "authorization_code", %q: %q}`, n, v)
	}},
	{"JSONEscaped", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{"grant_type":"x",%s:%s}`, jsonEscaped(n), jsonEscaped(v))
	}},
	{"JSONNested", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{"a":{"b":[1,{"c":[%q]},{%q:%q}]}}`, v, n, v)
	}},
	{"JSONObjectValue", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{%q:{"user":"u","value":[%q]}}`, n, v)
	}},
	{"JSONAsText", "text/plain", func(n, v string) string { return fmt.Sprintf(`{%q: %q}`, n, v) }},
	{"InvalidJSON", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{"grant_type": "x", %q: %q,}`, n, v)
	}},
	{"InvalidJSONEscaped", "application/json", func(n, v string) string {
		return fmt.Sprintf(`{%s: %s`, jsonEscaped(n), jsonEscaped(v))
	}},
	{"Form", "application/x-www-form-urlencoded", func(n, v string) string {
		return url.Values{"grant_type": {"authorization_code"}, n: {v}}.Encode()
	}},
	{"FormAsTextPlain", "text/plain", func(n, v string) string {
		return url.Values{"grant_type": {"authorization_code"}, n: {v}}.Encode()
	}},
	{"FormWithoutContentType", "", func(n, v string) string {
		return url.Values{"grant_type": {"authorization_code"}, n: {v}}.Encode()
	}},
	{"FormAsJSON", "application/json", func(n, v string) string {
		return url.Values{n: {v}, "client_id": {"1"}}.Encode()
	}},
	{"TextPair", "text/plain", func(n, v string) string { return fmt.Sprintf("hello\n%s: %s\nbye", n, v) }},
	{"Multipart", "multipart/form-data; boundary=XyZ", func(n, v string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\nx\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"" + n + "\"\r\n\r\n" + v + "\r\n--XyZ--\r\n"
	}},
	{"MultipartWithoutContentType", "", func(n, v string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"" + n + "\"\r\n\r\n" + v + "\r\n--XyZ--\r\n"
	}},
}

// secretPosition builds a request that carries a credential somewhere.
type secretPosition struct {
	name  string
	build func(value string) *http.Request
}

func secretPositions() []secretPosition {
	ps := []secretPosition{
		{"PathSegment", func(v string) *http.Request { return httptest.NewRequest("GET", "/items/"+url.PathEscape(v), nil) }},
		{"PathSegmentOfNoRoute", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/nope/"+url.PathEscape(v)+"/x", nil)
		}},
		{"PathSegmentEscapedTwice", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/items/"+url.PathEscape(url.PathEscape(v)), nil)
		}},
		{"QueryValue", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/sites/MLA/search?limit=1&q="+url.QueryEscape(v), nil)
		}},
		{"QueryFlag", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/sites/MLA/search?"+url.QueryEscape(v), nil)
		}},
		{"QueryValueEscapedTwice", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/sites/MLA/search?q="+url.QueryEscape(url.QueryEscape(v)), nil)
		}},
		{"QueryInARedirectURI", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/sites/MLA/search?redirect_uri="+url.QueryEscape("https://app.example/cb?state="+v), nil)
		}},
		{"AccessTokenQuery", func(v string) *http.Request {
			return httptest.NewRequest("GET", "/users/me?access_token="+url.QueryEscape(v), nil)
		}},
		{"HeaderOfNoCredential", func(v string) *http.Request {
			r := httptest.NewRequest("GET", "/users/me", nil)
			r.Header.Set("X-Note", "see "+v)
			return r
		}},
		{"AuthorizationBearer", func(v string) *http.Request {
			r := httptest.NewRequest("GET", "/users/me", nil)
			r.Header.Set("Authorization", "Bearer "+v)
			return r
		}},
		{"Referer", func(v string) *http.Request {
			r := httptest.NewRequest("GET", "/users/me", nil)
			r.Header.Set("Referer", "https://app.example/cb?code="+url.QueryEscape(v))
			return r
		}},
	}
	for _, h := range []string{"Authorization", "X-Auth", "X-Api-Key", "X-Auth-Token", "Cookie", "Proxy-Authorization", "X-Access-Token"} {
		ps = append(ps, secretPosition{"Header" + h, func(v string) *http.Request {
			r := httptest.NewRequest("GET", "/users/me", nil)
			r.Header.Set(h, v)
			return r
		}})
	}
	for _, enc := range bodyEncodings {
		for _, n := range append([]string{"note"}, secretNames...) {
			ps = append(ps, secretPosition{"Body" + enc.name + "/" + n, func(v string) *http.Request {
				r := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(enc.write(n, v)))
				if enc.contentType != "" {
					r.Header.Set("Content-Type", enc.contentType)
				}
				return r
			}})
		}
		ps = append(ps, secretPosition{"Body" + enc.name + "/InText", func(v string) *http.Request {
			r := httptest.NewRequest("POST", "/questions", strings.NewReader(enc.write("text", "is this in stock? "+v+" thanks")))
			if enc.contentType != "" {
				r.Header.Set("Content-Type", enc.contentType)
			}
			return r
		}})
	}
	return ps
}

// revealed returns s and what it shows once decoded: URL escapes, JSON
// escapes, and every string of s read as JSON.
func revealed(s string) []string {
	out := []string{s}
	if u, err := url.PathUnescape(s); err == nil {
		out = append(out, u)
		if uu, err := url.PathUnescape(u); err == nil {
			out = append(out, uu)
		}
	}
	if u, err := url.QueryUnescape(s); err == nil {
		out = append(out, u)
	}
	if u, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`); err == nil {
		out = append(out, u)
	}
	var doc any
	if json.Unmarshal([]byte(s), &doc) == nil {
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				out = append(out, revealed(x)...)
			case map[string]any:
				for k, e := range x {
					out = append(out, k)
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(doc)
	}
	return out
}

// keptStrings returns every string of a journal answer.
func keptStrings(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("journal answer is not JSON: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// showsSecret reports whether any of kept, decoded as it may be, shows
// hidden.
func showsSecret(kept []string, hidden string) (string, bool) {
	for _, k := range kept {
		for _, r := range revealed(k) {
			if strings.Contains(r, hidden) {
				return k, true
			}
		}
	}
	return "", false
}

// TestJournal_NeverKeepsASecretOfAnyShapeInAnyPositionOrEncoding sends
// every credential the engine issues or accepts in every position a
// request has (path, query, headers, body) and every body encoding (JSON,
// escaped, nested, invalid, form under any Content-Type, text, multipart):
// neither the journal's answer nor the log shows it, decoded or not.
func TestJournal_NeverKeepsASecretOfAnyShapeInAnyPositionOrEncoding(t *testing.T) {
	ts, log := journalServer(t)
	shapes := engineSecrets(t, ts)
	positions := secretPositions()
	if len(positions) > journalSize {
		t.Fatalf("%d positions, more than the journal keeps", len(positions))
	}
	failures := 0
	for _, sh := range shapes {
		logged := len(log.String())
		for _, p := range positions {
			ts.handler.ServeHTTP(httptest.NewRecorder(), p.build(sh.put))
		}
		j := ts.do("GET", fmt.Sprintf("/operator/requests?limit=%d", len(positions)), testOperatorToken, nil)
		entries, _ := j.Obj()["results"].([]any)
		if j.Status != http.StatusOK || len(entries) != len(positions) {
			t.Fatalf("journal: %d, %d entries, want %d", j.Status, len(entries), len(positions))
		}
		for i, e := range entries { // newest first
			raw, _ := json.Marshal(e)
			if k, ok := showsSecret(keptStrings(t, raw), sh.hidden); ok {
				if failures++; failures <= 20 {
					t.Errorf("%s in %s: the journal kept %.200q", sh.name, positions[len(positions)-1-i].name, k)
				}
			}
		}
		if k, ok := showsSecret([]string{log.String()[logged:]}, sh.hidden); ok {
			failures++
			t.Errorf("%s: the log kept %.300q", sh.name, k)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d requests kept their secret", failures, len(shapes)*len(positions))
	}
}

// lastEntry returns the journal's newest entry, through the operator
// route.
func lastEntry(t *testing.T, ts *testServer) map[string]any {
	t.Helper()
	j := ts.do("GET", "/operator/requests?limit=1", testOperatorToken, nil)
	entries, _ := j.Obj()["results"].([]any)
	if j.Status != http.StatusOK || len(entries) != 1 {
		t.Fatalf("journal: %d %s", j.Status, j.Raw)
	}
	return entries[0].(map[string]any)
}

// TestJournal_NeverKeepsTheClientSecretOfATokenRequestWhateverItsContentType:
// the token route reads a form body under any Content-Type but JSON's, so
// the journal finds the client secret there too: in a form sent as
// text/plain or with no Content-Type, and in JSON that does not parse. The
// rest of the body is kept as sent.
func TestJournal_NeverKeepsTheClientSecretOfATokenRequestWhateverItsContentType(t *testing.T) {
	ts, _ := journalServer(t)
	u := ts.mustUser("MLA", "normal")
	app := ts.mustOAuthApp(u.ID, appRedirect)
	for _, c := range []struct{ name, contentType, body, want string }{
		{"FormAsTextPlain", "text/plain", "grant_type=authorization_code&client_id=" + app.ClientID + "&client_secret=" + app.Secret,
			"grant_type=authorization_code&client_id=" + app.ClientID + "&client_secret=REDACTED"},
		{"FormWithoutContentType", "", "client_secret=" + app.Secret + "&grant_type=refresh_token",
			"client_secret=REDACTED&grant_type=refresh_token"},
		{"InvalidJSON", "application/json", `{"grant_type": "x", "client_secret": "` + app.Secret + `",}`,
			`{"grant_type": "x", "client_secret": "REDACTED",}`},
		{"EscapedJSON", "application/json", `{"client\u005fsecret": "` + app.Secret + `"}`, `{"client\u005fsecret": "REDACTED"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(c.body))
			if c.contentType != "" {
				r.Header.Set("Content-Type", c.contentType)
			}
			ts.handler.ServeHTTP(httptest.NewRecorder(), r)
			if body := lastEntry(t, ts)["body"]; body != c.want {
				t.Fatalf("kept body %q, want %q", body, c.want)
			}
		})
	}
}

// TestJournal_NeverKeepsAFixtureTokenOfAnyShape: a fixture may give a user
// a token of no shape the engine issues; the journal and the log know it
// as a token all the same, in the path, the query and an X-Auth header,
// whether or not the request also presents it as its credential.
func TestJournal_NeverKeepsAFixtureTokenOfAnyShape(t *testing.T) {
	ts, log := journalServer(t)
	u := ts.mustUser("MLA", "normal")
	const tok = "my-fixture-token-of-no-shape"
	if err := ts.m.Accounts.AddToken(context.Background(), u.ID, tok); err != nil {
		t.Fatal(err)
	}
	for _, presented := range []bool{true, false} {
		r := httptest.NewRequest("GET", "/items/"+tok+"?q="+tok, nil)
		r.Header.Set("X-Auth", tok)
		r.Header.Set("X-Note", tok)
		if presented {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		ts.handler.ServeHTTP(httptest.NewRecorder(), r)
		if paths := requestLogPaths(t, log.String()); paths[len(paths)-1] != "/items/REDACTED" {
			t.Errorf("presented %v: logged path %q", presented, paths[len(paths)-1])
		}
		e := lastEntry(t, ts)
		if e["path"] != "/items/REDACTED" || e["query"] != "q=REDACTED" {
			t.Errorf("presented %v: kept path %q and query %q", presented, e["path"], e["query"])
		}
		if h, _ := e["headers"].(map[string]any); fmt.Sprint(h["X-Auth"], h["X-Note"]) != "[REDACTED] [REDACTED]" {
			t.Errorf("presented %v: kept headers %v", presented, h)
		}
	}
	if strings.Contains(log.String(), tok) {
		t.Errorf("the log holds the token: %s", log.String())
	}
}

// TestJournal_KeepsWhatHoldsNoSecretAsSent: the redaction leaves alone the
// requests that carry none, byte for byte, and a path a route answered
// with success costs no read of the store.
func TestJournal_KeepsWhatHoldsNoSecretAsSent(t *testing.T) {
	ts, _ := journalServer(t)
	seller := ts.mustUser("MLA", "normal")
	for _, c := range []struct{ path, contentType, body string }{
		{"/questions?limit=1&attributes=id,text,status,date_created", "application/json",
			`{"item_id": "MLA1", "text": "¿Tienen stock? Básicamente, ¿envían a 1425?"}`},
		{"/items", "application/json", "{\n \"title\": \"Mesa de roble\", \"price\": 12.5,\n \"pictures\": [{\"source\": \"https://example.com/mesa-roble-grande.jpg?w=1&h=2\"}]\n}"},
		{"/oauth/token", "application/x-www-form-urlencoded", "grant_type=authorization_code&client_id=1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb"},
	} {
		ts.do("POST", c.path, seller.Token, c.body, "Content-Type", c.contentType, "X-Idempotency-Key", "0f8fad5bd9cb469fa16570867728950e")
		e := lastEntry(t, ts)
		path, query, _ := strings.Cut(c.path, "?")
		if e["body"] != c.body || e["path"] != path || e["query"] != query {
			t.Errorf("kept %q %q %q, want %q %q %q", e["path"], e["query"], e["body"], path, query, c.body)
		}
		if h, _ := e["headers"].(map[string]any); fmt.Sprint(h["X-Idempotency-Key"]) != "[0f8fad5bd9cb469fa16570867728950e]" {
			t.Errorf("kept headers %v", h)
		}
	}
}
