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
	// Each kind of request has a store of its own, made before either
	// runs, so that neither pays for the other's compactions.
	asks, msgs := newBenchWorld(b), newBenchWorld(b)
	b.Run("asks", asks.run(func(c int) *http.Request {
		return jsonRequest("POST", "/questions", asks.buyers[c].Token, map[string]any{"text": "¿Viene con bombilla?", "item_id": asks.items[c%len(asks.items)]})
	}))
	b.Run("messages", msgs.run(func(c int) *http.Request {
		return jsonRequest("POST", fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale", msgs.packs[c], msgs.seller.ID), msgs.buyers[c].Token,
			map[string]any{"from": map[string]any{"user_id": msgs.buyers[c].ID}, "to": map[string]any{"user_id": msgs.seller.ID}, "text": "¿Cuándo llega?"})
	}))
}

// benchWorld is a server on Badger with every commit synced: a seller
// with 8 items, and 64 buyers who each bought one of them.
type benchWorld struct {
	*testServer
	seller user
	items  []string
	buyers []user
	packs  []string
}

func newBenchWorld(b *testing.B) *benchWorld {
	b.Helper()
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
	w := &benchWorld{testServer: &testServer{t: b, m: m, clock: clk, handler: httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken})}}
	w.seller = w.mustUser("MLA")
	for i := range 8 {
		w.items = append(w.items, w.mustPlainItem(w.seller.Token, fmt.Sprintf("Mate %d", i), 900, 1000))
	}
	for i := range benchClients {
		w.buyers = append(w.buyers, w.mustUser("MLA"))
		w.packs = append(w.packs, w.mustSale(map[string]any{"buyer_id": w.buyers[i].ID, "item_id": w.items[i%len(w.items)], "quantity": 1}).pack)
	}
	return w
}

// run sends req(client) from benchClients clients at once, each its own
// requests, and wants 201 for each.
func (w *benchWorld) run(req func(client int) *http.Request) func(b *testing.B) {
	return func(b *testing.B) {
		var next atomic.Int64
		b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			client := int(next.Add(1)-1) % benchClients
			for pb.Next() {
				rec := httptest.NewRecorder()
				w.handler.ServeHTTP(rec, req(client))
				if rec.Code != http.StatusCreated {
					b.Errorf("status %d: %s", rec.Code, rec.Body.Bytes())
					return
				}
			}
		})
	}
}
