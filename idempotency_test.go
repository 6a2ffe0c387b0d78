package marketplace_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/idempotency"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
)

var operatorCaller = idempotency.Caller{Operator: true}

// createUserOnce carries out a creation of a user under key as the HTTP
// server does; it returns the user created, or zero when the key's answer
// was given again, and the error Begin or the creation gave.
func createUserOnce(t *testing.T, m *marketplace.Marketplace, key, nick string) (accounts.User, error) {
	t.Helper()
	ctx := context.Background()
	req := idempotency.Request{Caller: operatorCaller, Key: key, Method: "POST", Path: "/operator/users", Body: []byte(nick)}
	answer, claim, err := m.Idempotency.Begin(ctx, req)
	if err != nil || answer != nil {
		return accounts.User{}, err
	}
	u, _, err := m.CreateUser(idempotency.WithClaim(ctx, claim), accounts.NewUser{Nickname: nick, SiteID: "MLA"})
	if err != nil {
		return u, err
	}
	return u, m.Idempotency.Finish(ctx, claim, idempotency.Answer{Status: 201, Body: []byte(fmt.Sprint(u.ID))})
}

func TestIdempotency_AServiceWriteUnderAClaimCarriesTheKeysRecordOnEveryBackend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		req := idempotency.Request{Caller: operatorCaller, Key: "k1", Method: "POST", Path: "/operator/users", Body: []byte("ONCE")}
		_, claim, err := m.Idempotency.Begin(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.CreateUser(idempotency.WithClaim(ctx, claim), accounts.NewUser{Nickname: "ONCE", SiteID: "MLA"}); err != nil {
			t.Fatal(err)
		}
		if !claim.Written() {
			t.Fatal("the creation went through the gate without writing the key's record")
		}
		// Its answer not recorded yet: a retry is refused, not carried out.
		if _, _, err := m.Idempotency.Begin(ctx, req); !errs.Is(err, errs.Conflict) {
			t.Fatalf("retry before the answer: %v, want Conflict", err)
		}
		if err := m.Idempotency.Finish(ctx, claim, idempotency.Answer{Status: 201, Body: []byte("first")}); err != nil {
			t.Fatal(err)
		}
		a, c, err := m.Idempotency.Begin(ctx, req)
		if err != nil || c != nil || a == nil || string(a.Body) != "first" {
			t.Fatalf("retry after the answer: %+v %v %v, want the first answer", a, c, err)
		}
	})
}

func TestReset_ClearsIdempotencyKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		if _, err := createUserOnce(t, m, "k1", "FIRST"); err != nil {
			t.Fatal(err)
		}
		if err := m.Reset(context.Background(), marketplace.ResetOptions{}); err != nil {
			t.Fatal(err)
		}
		u, err := createUserOnce(t, m, "k1", "FIRST")
		if err != nil || u.ID == 0 {
			t.Fatalf("after the reset: %+v %v, want a user created anew", u, err)
		}
	})
}

func TestSnapshot_RestoreBringsTheKeysBackWithTheStateTheyDescribe(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		before, err := m.CreateSnapshot(ctx, "before")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := createUserOnce(t, m, "k1", "FIRST"); err != nil {
			t.Fatal(err)
		}
		after, err := m.CreateSnapshot(ctx, "after")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.RestoreSnapshot(ctx, after.ID); err != nil {
			t.Fatal(err)
		}
		if u, err := createUserOnce(t, m, "k1", "FIRST"); err != nil || u.ID != 0 {
			t.Fatalf("restored with the user: %+v %v, want the first answer again", u, err)
		}
		if err := m.RestoreSnapshot(ctx, before.ID); err != nil {
			t.Fatal(err)
		}
		if u, err := createUserOnce(t, m, "k1", "FIRST"); err != nil || u.ID == 0 {
			t.Fatalf("restored without the user: %+v %v, want it created", u, err)
		}
	})
}

// TestIdempotencyOnPostgres_TwoServersCarryOutOneKeyOnce sends one ask, with
// one key, to two servers on one database at once, then again to each.
func TestIdempotencyOnPostgres_TwoServersCarryOutOneKeyOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	engines := []*marketplace.Marketplace{mustOpenPostgres(t, url), mustOpenPostgres(t, url)}
	const operator = "op-token"
	servers := []http.Handler{httpapi.New(engines[0], httpapi.Config{OperatorToken: operator}), httpapi.New(engines[1], httpapi.Config{OperatorToken: operator})}
	ctx := context.Background()
	seller := mustUserOn(t, engines[0], "SELLER")
	_, buyerToken, err := engines[0].CreateUser(ctx, accounts.NewUser{Nickname: "BUYER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	qty := int64(3)
	published, err := engines[0].Stock.Publish(ctx, seller, stock.NewItem{
		Title: "Auriculares", CategoryID: "MLA1055", Price: money.FromInt(1500), ListingTypeID: "gold_special",
		CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"}, AvailableQuantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	item := published.ID
	body := fmt.Sprintf(`{"text":"Is it new?","item_id":%q}`, item)
	ask := func(h http.Handler) (int, string) {
		req := httptest.NewRequest("POST", "/questions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+buyerToken)
		req.Header.Set("X-Idempotency-Key", "ask-on-two-servers")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	const n = 6
	var wg sync.WaitGroup
	status := make([]int, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status[i], _ = ask(servers[i%2])
		}()
	}
	close(start)
	wg.Wait()
	for i, s := range status {
		if s != http.StatusCreated && s != http.StatusConflict {
			t.Fatalf("ask %d: status %d, want 201 or 409", i, s)
		}
	}
	s0, b0 := ask(servers[0])
	s1, b1 := ask(servers[1])
	if s0 != http.StatusCreated || s1 != http.StatusCreated || b0 != b1 {
		t.Fatalf("retries on each server: %d %s / %d %s, want the same 201", s0, b0, s1, b1)
	}
	for i, m := range engines {
		page, err := m.Questions.Search(ctx, 0, questions.SearchQuery{ItemID: item, Limit: 50})
		if err != nil || page.Total != 1 {
			t.Fatalf("engine %d: %d questions (%v), want 1", i, page.Total, err)
		}
	}
}
