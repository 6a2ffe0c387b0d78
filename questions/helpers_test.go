package questions_test

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// start is the tests' clock start: a Wednesday, 12:00 in Buenos Aires.
var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// fataler is what the helpers need of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

type env struct {
	ctx   context.Context
	store storage.Store
	clock *clock.Manual
	acc   *accounts.Service
	stock *stock.Service
	q     *questions.Service
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	return newEnvOn(teststore.New(tb))
}

// newPropertyEnv is newEnv for one iteration of a property test: the
// iteration closes it with the returned function before it ends.
func newPropertyEnv(t *rapid.T, owner testing.TB) (*env, func()) {
	st, done := teststore.Open(t, owner)
	return newEnvOn(st), done
}

func newEnvOn(st storage.Store) *env {
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	acc := accounts.New(st, clk, g)
	sk := stock.New(st, clk, g)
	return &env{ctx: context.Background(), store: st, clock: clk, acc: acc, stock: sk,
		q: questions.New(st, clk, acc, sk)}
}

func (e *env) mustUser(tb fataler) int64 {
	tb.Helper()
	u, err := e.acc.CreateUser(e.ctx, accounts.NewUser{Nickname: "USER", SiteID: "MLA"})
	if err != nil {
		tb.Fatalf("create user: %v", err)
	}
	return u.ID
}

// mustItem publishes a complete, valid plain item of seller.
func (e *env) mustItem(tb fataler, seller int64) string {
	tb.Helper()
	qty := int64(10)
	p, err := e.stock.Publish(e.ctx, seller, stock.NewItem{
		Title: "Item for questions", CategoryID: "MLA1055", Price: money.FromInt(1500),
		ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new",
		Channels: []string{"marketplace"}, AvailableQuantity: &qty,
	})
	if err != nil {
		tb.Fatalf("publish: %v", err)
	}
	return p.ID
}

func (e *env) mustAsk(tb fataler, buyer int64, item, text string) questions.Question {
	tb.Helper()
	q, err := e.q.Ask(e.ctx, buyer, questions.AskInput{Text: text, ItemID: item})
	if err != nil {
		tb.Fatalf("ask: %v", err)
	}
	return q
}

func (e *env) mustAnswer(tb fataler, seller, id int64, text string) questions.Question {
	tb.Helper()
	q, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: id, Text: text})
	if err != nil {
		tb.Fatalf("answer: %v", err)
	}
	return q
}

func (e *env) closeItem(tb fataler, seller int64, item string) {
	tb.Helper()
	closed := stock.StatusClosed
	if _, err := e.stock.UpdateItem(e.ctx, seller, item, stock.ItemUpdate{Status: &closed}); err != nil {
		tb.Fatalf("close item: %v", err)
	}
}
