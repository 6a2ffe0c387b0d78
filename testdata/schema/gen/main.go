// Command gen writes the golden stores of testdata/schema. It is run once,
// inside a tree of this repository checked out at an older commit (see
// README.md beside this file), never by the tests and never with today's
// code: the records it writes are the older binaries' own bytes.
//
//	go run ./gen -stage first  -out A.dump              # at 48e1fd1
//	go run ./gen -stage later  -in A.dump -out C.dump   # at 5e40b6e, continuing A
//	go run ./gen -stage first  -out B.dump              # at 5e40b6e, a new store
//	go run ./gen -stage first  -unicode -out D.dump     # at 79e8a45, titles that need Unicode folding
//	go run ./gen -stage first  -sales -out E.dump       # at df9028b, orders as JSON, in the state and a snapshot
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// Reference data is loaded by every binary from its own embedded datasets,
// so the dumps leave it out.
var skip = []string{"geo/", "fees/", "cat/", "ref/data", "ref/version"}

func main() {
	stage := flag.String("stage", "first", "first (a new store) or later (continue -in)")
	in := flag.String("in", "", "dump to start from")
	out := flag.String("out", "", "dump to write")
	unicodeTitles := flag.Bool("unicode", false, "also publish items whose titles need Unicode folding to be found")
	withSales := flag.Bool("sales", false, "also place orders (paid, payment_required, cancelled) and take a snapshot")
	flag.Parse()
	ctx := context.Background()
	st := memory.New()
	if *in != "" {
		load(st, *in)
	}
	clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	if *stage == "later" {
		clk = clock.NewManual(time.Date(2026, 3, 9, 15, 0, 0, 0, time.UTC))
	}
	m, err := marketplace.New(st, marketplace.Options{Clock: clk,
		Notifications: notify.Options{AllowPrivateCallbacks: true}})
	must(err)
	step := func() { clk.Set(clk.Now().Add(7 * time.Minute)) }
	prefix := "A"
	if *stage == "later" {
		prefix = "C"
	}
	user := func(nick string, tags ...string) accounts.User {
		u, err := m.Accounts.CreateUser(ctx, accounts.NewUser{Nickname: nick, SiteID: "MLA", FirstName: "F" + nick, LastName: "L" + nick, Tags: tags})
		must(err)
		must(m.Accounts.AddToken(ctx, u.ID, "APP_USR-golden-"+strings.ToLower(nick)+"-token"))
		step()
		return u
	}
	seller := user(prefix + "SELLER")
	buyer1 := user(prefix + "BUYER1")
	buyer2 := user(prefix + "BUYER2")
	wh := user(prefix+"WAREHOUSE", "normal", accounts.TagWarehouseManagement)
	store, err := m.Accounts.CreateStore(ctx, wh.ID, accounts.NewStore{Description: "golden warehouse", Tags: []string{accounts.TagStockLocation}})
	must(err)
	_, err = m.Notify.CreateApplication(ctx, notify.NewApplication{Name: prefix + " app", OwnerUserID: seller.ID,
		CallbackURL: "http://127.0.0.1:9/hook", Topics: []string{notify.TopicQuestions}})
	must(err)

	publish := func(title, price string, qty int64) stock.Published {
		p, err := m.Stock.Publish(ctx, seller.ID, stock.NewItem{Title: title, CategoryID: "MLA1055", Price: money.MustParse(price),
			ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty})
		must(err)
		step()
		return p
	}
	items := []stock.Published{
		publish(prefix+" Bicicleta rodado 29 aluminio", "150000", 3),
		publish(prefix+" Bicicleta plegable", "99999.5", 1),
		publish(prefix+" Casco de bicicleta", "25000", 10),
		publish(prefix+" Inflador de pie", "8000.25", 0),
	}
	if *unicodeTitles {
		// A decomposed ñ, a caron, full-width letters and ß: what the index
		// built by accented-letter table split or kept unfolded.
		publish(prefix+" Škoda Fabia espejo", "43000", 2)
		publish(prefix+" Mochila nin\u0303o escolar", "18000", 4)
		publish(prefix+" Ｃａｍｉｓｅｔａ deportiva", "9000", 6)
		publish(prefix+" Straße mapa plegado", "3000", 1)
	}
	paused := "paused"
	_, err = m.Stock.UpdateItem(ctx, seller.ID, items[3].ID, stock.ItemUpdate{Status: &paused})
	must(err)
	_, err = m.Stock.PublishMultiOrigin(ctx, wh.ID, stock.NewItem{Title: prefix + " Bicicleta de montaña", CategoryID: "MLA1055",
		Price: money.FromInt(210000), ListingTypeID: "gold_special", CurrencyID: "ARS",
		StockLocations: []stock.StockLocation{{StoreID: store.ID, Quantity: 5}}})
	must(err)
	step()

	ask := func(buyer accounts.User, item stock.Published, text string) questions.Question {
		q, err := m.Questions.Ask(ctx, buyer.ID, questions.AskInput{ItemID: item.ID, Text: text})
		must(err)
		step()
		return q
	}
	q1 := ask(buyer1, items[0], "¿Tiene cambios?")
	ask(buyer2, items[0], "¿Hacen envíos?")
	q3 := ask(buyer1, items[1], "¿Cuánto pesa?")
	ask(buyer2, items[2], "¿Qué talle es?")
	q5 := ask(buyer2, items[1], "¿Viene con garantía?")
	_, err = m.Questions.Answer(ctx, seller.ID, questions.AnswerInput{QuestionID: q1.ID, Text: "Sí, 30 días."})
	must(err)
	step()
	_, err = m.Questions.Answer(ctx, seller.ID, questions.AnswerInput{QuestionID: q3.ID, Text: "12 kg."})
	must(err)
	step()
	must(m.Questions.Delete(ctx, seller.ID, q5.ID))
	step()

	if *withSales {
		order := func(buyer accounts.User, item stock.Published, qty int64, status string) sales.Order {
			o, err := m.Sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer.ID, ItemID: item.ID, Quantity: qty, Status: status})
			must(err)
			step()
			return o
		}
		order(buyer1, items[0], 1, sales.StatusPaid)
		order(buyer2, items[2], 2, sales.StatusPaymentRequired)
		cancelled := order(buyer2, items[2], 3, sales.StatusPaid)
		_, err = m.Sales.Cancel(ctx, cancelled.ID)
		must(err)
		step()
		_, err = m.CreateSnapshot(ctx, prefix+" golden snapshot")
		must(err)
		step()
		order(buyer1, items[1], 1, sales.StatusPaid) // after the snapshot: a restore takes it away
	}

	if *stage == "later" {
		// The store began under an older binary: answer one of its questions
		// and retitle one of its items, so that both forms are present.
		older := questionsOf(st, "A")
		if len(older) > 0 {
			_, err = m.Questions.Answer(ctx, older[0].seller, questions.AnswerInput{QuestionID: older[0].id, Text: "Respondida después."})
			must(err)
			step()
		}
	}
	must(m.Close())
	dump(st, *out)
}

type oldQuestion struct{ id, seller int64 }

// questionsOf finds the unanswered questions the seller whose nickname
// starts with nick received, through the service-independent index.
func questionsOf(st storage.Store, nick string) []oldQuestion {
	var out []oldQuestion
	ctx := context.Background()
	must(st.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(keycodec.New("q/ssd")))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			r := keycodec.Read(it.Key()[len(keycodec.New("q/ssd")):])
			seller := r.Int()
			status := r.Str()
			r.Int()
			id := r.Int()
			if status == "UNANSWERED" {
				out = append(out, oldQuestion{id: id, seller: seller})
			}
		}
		return nil
	}))
	_ = nick
	return out
}

func dump(st storage.Store, path string) {
	f, err := os.Create(path)
	must(err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# key-hex value-hex, one key a line, in key order")
	must(st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			k := string(it.Key())
			if skipped(k) {
				continue
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s %s\n", hex.EncodeToString(it.Key()), hex.EncodeToString(v))
		}
		return nil
	}))
	must(w.Flush())
	must(f.Close())
}

func skipped(k string) bool {
	for _, p := range skip {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func load(st storage.Store, path string) {
	b, err := os.ReadFile(path)
	must(err)
	must(st.Update(context.Background(), func(tx storage.Tx) error {
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			kh, vh, _ := strings.Cut(line, " ")
			k, err := hex.DecodeString(kh)
			must(err)
			v, err := hex.DecodeString(vh)
			must(err)
			if err := tx.Set(k, v); err != nil {
				return err
			}
		}
		return nil
	}))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
