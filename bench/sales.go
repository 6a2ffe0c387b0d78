package main

// The buy phase of the write benchmark: purchases against asks on one
// Badger server, in turns.
//
//   - buy: 64 clients POST /operator/orders (the operator's purchase: a
//     buyer buys one unit of an item, paid; 201), each as its own buyer on
//     the 8 items of one seller in turn (the ask phase's world, askMany),
//     with stock that never runs out;
//   - in turns with the same clients' POST /questions, by the same buyers
//     on the same items, on the same server and store, the two loads
//     alternating every buyTurn, so that what else the machine does, and
//     the store's growth, fall on both alike.
//
// The phase prints purchases/s, asks/s and their ratio, the CPU per
// request of each, and the transactions each ran again after a conflict.
// newBuyWorld (items of their own per client, over several sellers) is
// the -postgres-rtt routes' purchase world.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/badger"
)

// benchOperatorToken authorizes the operator's routes of the servers the
// buy phase starts.
const benchOperatorToken = "bench-operator-token"

// The buy world: buySellers sellers share the items, buyItemsPerClient
// items per client, each with buyStock units.
const (
	buySellers        = 8
	buyItemsPerClient = 4
	// buyStock outlasts any run: a client buys its items in turn, so an
	// item sells at most a quarter of its client's purchases, far under
	// a million even at 10,000 purchases/s for a minute.
	buyStock = 1_000_000
)

// buyTurn is how long one load runs before the other's turn. Each turn
// starts its clients and waits for their last requests: at 500 ms the
// ramp and the tail are a few percent of a turn at the rates of this
// phase, where 100 ms turns (the read benchmark's) would make them a
// large part.
const buyTurn = 500 * time.Millisecond

// buyWorld is what the purchase clients need: the items each client buys
// in turn and its buyer.
type buyWorld struct {
	items  [][]string // by client
	buyers []int64    // by client
}

// newBuyWorld creates buySellers warehouse_management sellers with a
// stock-location store each, clients*buyItemsPerClient items of buyStock
// units spread over them, and a buyer per client. Client c buys items of
// its own (no two clients race on one user product's stock, as in the
// PUT stock phase), from every seller in turn.
func newBuyWorld(ctx context.Context, m *marketplace.Marketplace, clients int) buyWorld {
	sellers := make([]sellerWorld, buySellers)
	for i := range sellers {
		var err error
		if sellers[i], err = newSeller(ctx, m, fmt.Sprintf("BENCH_SALES_SELLER_%d", i)); err != nil {
			fatalf("seller: %v", err)
		}
	}
	w := buyWorld{items: make([][]string, clients), buyers: make([]int64, clients)}
	err := parallel("items to buy", clients*buyItemsPerClient, func(i int) error {
		s := sellers[i%buySellers]
		p, err := m.Stock.PublishMultiOrigin(ctx, s.id, stock.NewItem{
			Title: fmt.Sprintf("Auriculares Sony WH-1000XM5 %d", i), CategoryID: "MLA1055", Price: money.FromInt(350000),
			ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
			StockLocations: []stock.StockLocation{{StoreID: s.store, Quantity: buyStock}},
		})
		if err != nil {
			return err
		}
		// Item i goes to client i % clients: the parallel workers fill
		// the slices in no order, so each client's are placed, not
		// appended.
		c := i % clients
		if w.items[c] == nil {
			w.items[c] = make([]string, buyItemsPerClient)
		}
		w.items[c][i/clients] = p.ID
		return nil
	})
	if err != nil {
		fatalf("buy world: %v", err)
	}
	for c := range clients {
		id, _, err := newBuyer(ctx, m, fmt.Sprintf("BENCH_SALES_BUYER_%d", c))
		if err != nil {
			fatalf("buyer: %v", err)
		}
		w.buyers[c] = id
	}
	return w
}

func buyRequest(url string, buyer int64, item string) *http.Request {
	body := fmt.Sprintf(`{"buyer_id":%d,"item_id":%q,"quantity":1}`, buyer, item)
	req, _ := http.NewRequest("POST", url+"/operator/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+benchOperatorToken)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// askTurns is the ask phase's load on url, for loads that take turns: the
// question numbers go on from one turn to the next.
func (b *writeBench) askTurns(url string, w askWorld) func(hc *http.Client, d time.Duration) result {
	n := make([]int, b.cfg.clients)
	return func(hc *http.Client, d time.Duration) result {
		return loadWith(hc, b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			item := w.Items[(c+n[c])%len(w.Items)]
			_, _, err := send(hc, askRequest(url, w.Tokens[c%len(w.Tokens)], item, n[c]), http.StatusCreated)
			return err
		})
	}
}

// turnLoad is a load that runs in turns with others, and what it measured.
type turnLoad struct {
	name      string
	run       func(hc *http.Client, d time.Duration) result
	hc        *http.Client
	sum       result
	conflicts uint64
}

// inTurns runs the loads in turns of slice until each has run for d,
// each through its own client keeping clients connections open between
// turns, and counts the conflicts of e's store during each load's turns.
func inTurns(e *engine, clients int, d, slice time.Duration, loads ...*turnLoad) {
	for _, l := range loads {
		l.hc = newLoadClient(clients)
		defer l.hc.CloseIdleConnections()
	}
	for spent := time.Duration(0); spent < d; spent += slice {
		for _, l := range loads {
			c0 := e.conflicts()
			l.sum = l.sum.plus(l.run(l.hc, min(slice, d-spent)))
			l.conflicts += e.conflicts() - c0
		}
	}
}

// startSalesBadger starts a server on a Badger folder that answers the
// operator's routes with benchOperatorToken.
func (b *writeBench) startSalesBadger(name string) *engine {
	st, err := badger.Open(b.folder(name), badger.Options{})
	if err != nil {
		fatalf("%v", err)
	}
	return b.startWith(st, marketplace.Options{}, func(*marketplace.Marketplace) httpapi.Config {
		return httpapi.Config{OperatorToken: benchOperatorToken}
	})
}

// buyBadger is the buy phase: purchases and asks in turns, by the same
// buyers on the same items (askMany's world). With one load in -buy-loads
// it prints that load's rate and CPU only, and returns no row.
func (b *writeBench) buyBadger() row {
	ctx := context.Background()
	e := b.startSalesBadger("buy")
	defer e.stop()
	w := askMany.world(ctx, e.m, b.cfg.clients, buyStock)
	// One purchase first, alone: a route that is missing or refuses the
	// world stops the run here rather than as 64 clients' failures.
	hc := &http.Client{Timeout: requestTimeout}
	if _, _, err := send(hc, buyRequest(e.srv.URL, w.buyers[0], w.Items[0]), http.StatusCreated); err != nil {
		fatalf("buy: %v", err)
	}
	hc.CloseIdleConnections()
	buy := &turnLoad{name: "buy, Badger", run: b.buyAsked(e.srv.URL, w)}
	if b.cfg.buyOwnItems {
		buy.name = "buy, Badger, items of its own per client"
		buy.run = b.buyOwn(e.srv.URL, newBuyWorld(ctx, e.m, b.cfg.clients))
	}
	ask := &turnLoad{name: "ask, Badger (in turns with buy)", run: b.askTurns(e.srv.URL, w)}
	var loads []*turnLoad
	for _, l := range strings.Split(b.cfg.buyLoads, ",") {
		switch strings.TrimSpace(l) {
		case "buy":
			loads = append(loads, buy)
		case "ask":
			loads = append(loads, ask)
		default:
			fatalf("-buy-loads: unknown load %q (buy, ask)", l)
		}
	}
	fmt.Printf("buy: %d clients each of %s on one Badger server (%s), in turns of %s, %s each\n",
		b.cfg.clients, b.cfg.buyLoads, askMany.label(b.cfg.clients), buyTurn, b.cfg.duration)
	inTurns(e, b.cfg.clients, b.cfg.duration, buyTurn, loads...)
	for _, l := range loads {
		checked(l.name, l.sum)
	}
	b.printStats("buy, Badger", e)
	if len(loads) < 2 {
		// One load alone, for its profile: there is no ratio.
		return row{}
	}
	name := "POST /operator/orders / POST /questions, same buyers and items (Badger)"
	if b.cfg.buyOwnItems {
		name = "POST /operator/orders on items of their own / POST /questions (Badger)"
	}
	return row{name: name, full: buy.sum.rate, base: ask.sum.rate, target: 0.60,
		conflicts: fmt.Sprintf("%s; asks %s", perRequest(buy.conflicts, buy.sum.ok), perRequest(ask.conflicts, ask.sum.ok)),
		note: fmt.Sprintf("CPU per purchase %s, per ask %s (%.2fx)",
			buy.sum.cpu.Round(time.Microsecond), ask.sum.cpu.Round(time.Microsecond), float64(buy.sum.cpu)/float64(ask.sum.cpu))}
}

// buyAsked returns the purchase load on the ask world w: client c buys one
// unit of w's items in turn as the buyer it asks as.
func (b *writeBench) buyAsked(url string, w askWorld) func(hc *http.Client, d time.Duration) result {
	n := make([]int, b.cfg.clients)
	return func(hc *http.Client, d time.Duration) result {
		return loadWith(hc, b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			item := w.Items[(c+n[c])%len(w.Items)]
			_, _, err := send(hc, buyRequest(url, w.buyers[c%len(w.buyers)], item), http.StatusCreated)
			return err
		})
	}
}

// buyOwn returns the purchase load on w, the world of items of their own
// per client (-buy-own-items): each client buys one unit of its items in
// turn, as its buyer.
func (b *writeBench) buyOwn(url string, w buyWorld) func(hc *http.Client, d time.Duration) result {
	n := make([]int, b.cfg.clients)
	return func(hc *http.Client, d time.Duration) result {
		return loadWith(hc, b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			items := w.items[c]
			_, _, err := send(hc, buyRequest(url, w.buyers[c], items[n[c]%len(items)]), http.StatusCreated)
			return err
		})
	}
}
