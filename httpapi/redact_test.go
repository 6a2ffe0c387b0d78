package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
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
