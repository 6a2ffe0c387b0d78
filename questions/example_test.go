package questions_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/memory"
)

// Example has a buyer ask about a seller's item, the seller answer, and
// shows that a buyer on the seller's blacklist can no longer ask.
func Example() {
	ctx := context.Background()
	clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	seller, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "ACME", SiteID: "MLA", Tags: []string{"normal"}})
	if err != nil {
		panic(err)
	}
	buyer, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "BUYER", SiteID: "MLA", Tags: []string{"normal"}})
	if err != nil {
		panic(err)
	}
	qty := int64(4)
	item, err := m.Stock.Publish(ctx, seller.ID, stock.NewItem{Title: "Auriculares Sony WH-1000XM5",
		CategoryID: "MLA1055", Price: money.MustParse("350000"), ListingTypeID: "gold_special",
		AvailableQuantity: &qty})
	if err != nil {
		panic(err)
	}

	q, err := m.Questions.Ask(ctx, buyer.ID, questions.AskInput{Text: "¿Tienen stock en color negro?", ItemID: item.ID})
	if err != nil {
		panic(err)
	}
	fmt.Println(q.ID, q.Status)

	if err := clk.Advance(10 * time.Minute); err != nil {
		panic(err)
	}
	q, err = m.Questions.Answer(ctx, seller.ID, questions.AnswerInput{QuestionID: q.ID, Text: "Sí, en negro y plateado."})
	if err != nil {
		panic(err)
	}
	fmt.Println(q.Status, q.Answer.Text, q.Answer.DateCreated)

	if _, err := m.Questions.Block(ctx, seller.ID, seller.ID, buyer.ID); err != nil {
		panic(err)
	}
	_, err = m.Questions.Ask(ctx, buyer.ID, questions.AskInput{Text: "¿Y en azul?", ItemID: item.ID})
	var e *marketplace.Error
	if errors.As(err, &e) {
		fmt.Println(e.Kind == marketplace.KindForbidden, e.Message)
	}
	// Output:
	// 12000000001 UNANSWERED
	// ANSWERED Sí, en negro y plateado. 2026-03-04T12:10:00.000-03:00
	// true User 100000002 is blocked from asking questions to seller 100000001
}
