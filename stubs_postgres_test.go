package marketplace_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/pgtest"
)

// TestStubsOnPostgres_TwoServersOnOneDatabaseShareAStubAndItsTimes makes a
// stub through one server and has the other answer with it at once, the
// two together answering no more than its times.
func TestStubsOnPostgres_TwoServersOnOneDatabaseShareAStubAndItsTimes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := mustOpenPostgres(t, url), mustOpenPostgres(t, url)
	const op = "operator-token-of-the-test-0123"
	sa := httptest.NewServer(httpapi.New(a, httpapi.Config{OperatorToken: op}))
	defer sa.Close()
	sb := httptest.NewServer(httpapi.New(b, httpapi.Config{OperatorToken: op}))
	defer sb.Close()
	req, _ := http.NewRequest("POST", sa.URL+"/operator/stubs", strings.NewReader(
		`{"request": {"urlPath": "/payments/1"}, "response": {"status": 200}, "marketplace": {"times": 3, "public": true}}`))
	req.Header.Set("Authorization", "Bearer "+op)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create through a: %v %v", res, err)
	}
	res.Body.Close()
	var got []int
	for _, base := range []string{sb.URL, sa.URL, sb.URL, sa.URL, sb.URL} {
		res, err := http.Get(base + "/payments/1")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got = append(got, res.StatusCode)
	}
	if want := []int{200, 200, 200, 404, 404}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	list, err := b.Stubs.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("b lists %d stubs: %v", len(list), err)
	}
}
