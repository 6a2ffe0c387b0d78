package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/badger"
)

// benchClients is how many clients write at once in
// BenchmarkMessagesAgainstAsks.
const benchClients = 64

// BenchmarkMessagesAgainstAsks posts buyers' messages, each of 64 clients
// in its own conversation, and asks, 64 buyers over 8 items, through the
// whole HTTP stack on Badger with every commit synced, in one run:
// compare their ns/op (a message costs about what an ask does; the
// target is messages at 0.8 of the asks' rate or better).
func BenchmarkMessagesAgainstAsks(b *testing.B) {
	st, err := badger.Open(b.TempDir(), badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = m.Close()
		_ = st.Close()
	})
	ts := &testServer{t: b, m: m, clock: clk, handler: httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken})}
	seller := ts.mustUser("MLA")
	var items []string
	for i := range 8 {
		items = append(items, ts.mustPlainItem(seller.Token, fmt.Sprintf("Mate %d", i), 900, 1000))
	}
	buyers := make([]user, benchClients)
	packs := make([]string, benchClients)
	for i := range buyers {
		buyers[i] = ts.mustUser("MLA")
		packs[i] = ts.mustSale(map[string]any{"buyer_id": buyers[i].ID, "item_id": items[i%len(items)], "quantity": 1}).pack
	}
	run := func(req func(client int) *http.Request, want int) func(b *testing.B) {
		return func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				client := int(next.Add(1)-1) % benchClients
				for pb.Next() {
					rec := httptest.NewRecorder()
					ts.handler.ServeHTTP(rec, req(client))
					if rec.Code != want {
						b.Errorf("status %d: %s", rec.Code, rec.Body.Bytes())
						return
					}
				}
			})
		}
	}
	b.Run("asks", run(func(c int) *http.Request {
		return jsonRequest("POST", "/questions", buyers[c].Token, map[string]any{"text": "¿Viene con bombilla?", "item_id": items[c%len(items)]})
	}, http.StatusCreated))
	b.Run("messages", run(func(c int) *http.Request {
		return jsonRequest("POST", fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale", packs[c], seller.ID), buyers[c].Token,
			map[string]any{"from": map[string]any{"user_id": buyers[c].ID}, "to": map[string]any{"user_id": seller.ID}, "text": "¿Cuándo llega?"})
	}, http.StatusCreated))
}
