package main

// The msg phase of the write benchmark: post-sale messages against asks
// on one Badger server, in turns.
//
//   - msg: 64 clients POST /messages/packs/{pack_id}/sellers/{seller_id}
//     ?tag=post_sale (201), each as its own buyer in the conversation of
//     the purchase it made before the phase (askMany's world: one seller,
//     8 items);
//   - in turns with the same clients' POST /questions, by the same buyers
//     on the same server and store, alternating every buyTurn, as the buy
//     phase does.
//
// Every message is a durable write of its own: the message, the
// conversation's counts, the unread counts and a messages notification.
// The phase prints messages/s, asks/s and their ratio, and the CPU per
// request of each.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/marketplace/marketplace/sales"
)

// msgWorld is what the message clients need: the conversation of each
// client's purchase, and the buyer and token it writes as.
type msgWorld struct {
	ask    askWorld
	packs  []int64 // by client
	seller int64
}

// newMsgWorld buys, as each client's buyer, one unit of one of w's items,
// paid: each client then writes in the conversation of its own pack.
func newMsgWorld(ctx context.Context, e *engine, w askWorld, clients int) msgWorld {
	mw := msgWorld{ask: w, packs: make([]int64, clients)}
	var mu sync.Mutex
	err := parallel("purchases to write about", clients, func(c int) error {
		o, err := e.m.Sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: w.buyers[c%len(w.buyers)], ItemID: w.Items[c%len(w.Items)], Quantity: 1})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		mw.packs[c], mw.seller = o.PackID, o.Seller.ID
		return nil
	})
	if err != nil {
		fatalf("msg world: %v", err)
	}
	return mw
}

func msgRequest(url string, w msgWorld, c, n int) *http.Request {
	buyer := w.ask.buyers[c%len(w.ask.buyers)]
	body := fmt.Sprintf(`{"from":{"user_id":%d},"to":{"user_id":%d},"text":"¿Cuándo llega mi compra? Consulta %d"}`, buyer, w.seller, n)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/messages/packs/%d/sellers/%d?tag=post_sale", url, w.packs[c], w.seller),
		strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+w.ask.Tokens[c%len(w.ask.Tokens)])
	req.Header.Set("Content-Type", "application/json")
	return req
}

// msgTurns is the message load on url, for loads that take turns.
func (b *writeBench) msgTurns(url string, w msgWorld) func(hc *http.Client, d time.Duration) result {
	n := make([]int, b.cfg.clients)
	return func(hc *http.Client, d time.Duration) result {
		return loadWith(hc, b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			_, _, err := send(hc, msgRequest(url, w, c, n[c]), http.StatusCreated)
			return err
		})
	}
}

// msgBadger is the msg phase: messages and asks in turns, by the same
// buyers, on one Badger server.
func (b *writeBench) msgBadger() row {
	ctx := context.Background()
	e := b.startSalesBadger("msg")
	defer e.stop()
	w := askMany.world(ctx, e.m, b.cfg.clients, buyStock)
	mw := newMsgWorld(ctx, e, w, b.cfg.clients)
	// One message first, alone: a route that refuses the world stops the
	// run here rather than as 64 clients' failures.
	hc := &http.Client{Timeout: requestTimeout}
	if _, _, err := send(hc, msgRequest(e.srv.URL, mw, 0, 0), http.StatusCreated); err != nil {
		fatalf("msg: %v", err)
	}
	hc.CloseIdleConnections()
	msg := &turnLoad{name: "msg, Badger", run: b.msgTurns(e.srv.URL, mw)}
	ask := &turnLoad{name: "ask, Badger (in turns with msg)", run: b.askTurns(e.srv.URL, w)}
	fmt.Printf("msg: %d clients each of msg and ask on one Badger server (%s), in turns of %s, %s each\n",
		b.cfg.clients, askMany.label(b.cfg.clients), buyTurn, b.cfg.duration)
	inTurns(e, b.cfg.clients, b.cfg.duration, buyTurn, msg, ask)
	checked(msg.name, msg.sum)
	checked(ask.name, ask.sum)
	b.printStats("msg, Badger", e)
	return row{name: "POST /messages/packs/.../sellers/... / POST /questions, same buyers (Badger)", full: msg.sum.rate, base: ask.sum.rate,
		target: 0.80, conflicts: fmt.Sprintf("%s; asks %s", perRequest(msg.conflicts, msg.sum.ok), perRequest(ask.conflicts, ask.sum.ok)),
		note: fmt.Sprintf("CPU per message %s, per ask %s (%.2fx)",
			msg.sum.cpu.Round(time.Microsecond), ask.sum.cpu.Round(time.Microsecond), float64(msg.sum.cpu)/float64(ask.sum.cpu))}
}
