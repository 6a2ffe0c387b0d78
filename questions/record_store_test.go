package questions_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// TestRecord_QuestionStoredAsJSONIsMigratedThenServedAndUpdatedUnchanged
// rewrites a question in the JSON form records had before the binary one,
// migrates the store, then reads, searches and answers it.
func TestRecord_QuestionStoredAsJSONIsMigratedThenServedAndUpdatedUnchanged(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	asked := e.mustAsk(t, buyer, item, "Is it new?")
	want, err := e.q.Question(e.ctx, seller, asked.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`{"id":%d,"seller_id":%d,"buyer_id":%d,"item_id":%q,"site_id":"MLA","text":"Is it new?",`+
		`"status":"UNANSWERED","created":%q,"updated":%q,"deleted_from_listing":false,"hold":false,"suspected_spam":false}`,
		asked.ID, seller, buyer, item, start.Format("2006-01-02T15:04:05Z07:00"), start.Format("2006-01-02T15:04:05Z07:00"))
	err = e.store.Update(e.ctx, func(tx storage.Tx) error {
		return tx.Set(keycodec.New("q/q").Int(asked.ID), []byte(old))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.q.Question(e.ctx, seller, asked.ID, true); !errs.Is(err, errs.Internal) {
		t.Fatalf("a JSON record read without its migration: %v", err)
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.RecordsMigration()}, schema.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := e.q.Question(e.ctx, seller, asked.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("old record served as %+v, want %+v", got, want)
	}
	res, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || len(res.Questions) != 1 || res.Questions[0].ID != asked.ID || res.Questions[0].Text != "Is it new?" {
		t.Fatalf("search over the old record: %+v", res)
	}
	answered := e.mustAnswer(t, seller, asked.ID, "Yes")
	if answered.Status != questions.StatusAnswered || answered.Answer == nil || answered.Answer.Text != "Yes" {
		t.Fatalf("answer of the old record: %+v", answered)
	}
	var raw []byte
	err = e.store.View(e.ctx, func(tx storage.Tx) error {
		raw, err = tx.Get(keycodec.New("q/q").Int(asked.ID))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if json.Valid(raw) {
		t.Fatalf("an updated record stays JSON: %s", raw)
	}
	again, err := e.q.Question(e.ctx, seller, asked.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != questions.StatusAnswered || again.Answer == nil || again.Answer.Text != "Yes" || again.Text != "Is it new?" {
		t.Fatalf("rewritten record reads as %+v", again)
	}
}
