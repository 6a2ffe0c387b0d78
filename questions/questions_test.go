package questions_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
)

func TestAsk_CreatesUnansweredQuestionWithSellerAndDate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	q := e.mustAsk(t, buyer, item, "  Does it come in red?  ")
	is.True(q.ID > 0)
	is.Equal(q.SellerID, seller)
	is.Equal(q.ItemID, item)
	is.Equal(q.Text, "Does it come in red?") // surrounding spaces trimmed
	is.Equal(q.Status, questions.StatusUnanswered)
	is.Equal(q.DateCreated, "2026-03-04T12:00:00.000-03:00") // seller site's zone
	is.True(q.Answer == nil)
	is.Equal(q.From.ID, buyer)
}

func TestAsk_TextRules(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	for name, tc := range map[string]struct {
		text string
		ok   bool
	}{
		"Empty":                  {"", false},
		"Blank":                  {" \n\t ", false},
		"Exactly2000Characters":  {strings.Repeat("ñ", 2000), true},
		"2001CharactersRejected": {strings.Repeat("a", 2001), false},
		"InvalidUTF8":            {"bad \xff text", false},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.q.Ask(e.ctx, buyer, questions.AskInput{Text: tc.text, ItemID: item})
			if tc.ok && err != nil {
				t.Fatalf("ask: %v", err)
			}
			if !tc.ok && !errs.Is(err, errs.Invalid) {
				t.Fatalf("err = %v, want Invalid", err)
			}
		})
	}
}

func TestAsk_Refusals(t *testing.T) {
	e := newEnv(t)
	seller, buyer, blocked := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	closedItem := e.mustItem(t, seller)
	e.closeItem(t, seller, closedItem)
	if _, err := e.q.Block(e.ctx, seller, seller, blocked); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		buyer int64
		item  string
		kind  errs.Kind
	}{
		{"UnknownItemIsNotFound", buyer, "MLA999", errs.NotFound},
		{"ClosedItemIsInvalid", buyer, closedItem, errs.Invalid},
		{"SellerOnOwnItemIsForbidden", seller, item, errs.Forbidden},
		{"BlacklistedUserIsForbidden", blocked, item, errs.Forbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.q.Ask(e.ctx, tc.buyer, questions.AskInput{Text: "hello?", ItemID: tc.item})
			if !errs.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
	if got := countQuestions(t, e, seller); got != 0 {
		t.Fatalf("refused asks stored %d questions", got)
	}
}

func countQuestions(t *testing.T, e *env, seller int64) int {
	t.Helper()
	res, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, Limit: 0})
	if err != nil {
		t.Fatal(err)
	}
	return res.Total
}

func TestAnswer_SellerAnswersOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	q := e.mustAsk(t, buyer, item, "Is it new?")
	e.clock.Advance(90 * time.Minute)
	a := e.mustAnswer(t, seller, q.ID, "Yes, brand new.")
	is.Equal(a.Status, questions.StatusAnswered)
	is.Equal(*a.Answer, questions.Answer{Text: "Yes, brand new.", Status: questions.AnswerActive, DateCreated: "2026-03-04T13:30:00.000-03:00"})
	is.Equal(*a.From.AnsweredQuestions, int64(1)) // the asker now has one answered question

	_, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: "again"})
	is.True(errs.Is(err, errs.Invalid)) // answering twice
}

func TestAnswer_OnlyTheItemsSellerMayAnswer(t *testing.T) {
	e := newEnv(t)
	seller, buyer, other := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	for _, caller := range []int64{buyer, other} {
		_, err := e.q.Answer(e.ctx, caller, questions.AnswerInput{QuestionID: q.ID, Text: "yes"})
		if !errs.Is(err, errs.Forbidden) {
			t.Fatalf("caller %d: err = %v, want Forbidden", caller, err)
		}
	}
}

func TestAnswer_TextOver2000CharactersIsInvalid(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	_, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: strings.Repeat("é", 2001)})
	if !errs.Is(err, errs.Invalid) {
		t.Fatalf("err = %v, want Invalid", err)
	}
	got, _ := e.q.Question(e.ctx, seller, q.ID, false)
	if got.Status != questions.StatusUnanswered {
		t.Fatalf("status = %s after a refused answer", got.Status)
	}
}

func TestAnswer_UnknownQuestionIsNotFound(t *testing.T) {
	e := newEnv(t)
	_, err := e.q.Answer(e.ctx, e.mustUser(t), questions.AnswerInput{QuestionID: 42, Text: "x"})
	if !errs.Is(err, errs.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
}

func TestSampleSource_ListsSellersAndSamplesSince(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s1, s2, buyer := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	i1, i2 := e.mustItem(t, s1), e.mustItem(t, s2)
	old := e.mustAsk(t, buyer, i1, "old one")
	e.clock.Advance(24 * time.Hour)
	since := e.clock.Now()
	q1 := e.mustAsk(t, buyer, i1, "first")
	e.clock.Advance(time.Hour)
	e.mustAnswer(t, s1, q1.ID, "answer")
	q2 := e.mustAsk(t, buyer, i1, "second")
	e.clock.Advance(time.Hour)
	e.mustAsk(t, buyer, i2, "other seller")
	_ = old

	sellers, err := e.q.SellersWithQuestionsSince(e.ctx, since)
	is.NoErr(err)
	is.Equal(sellers, []int64{s1, s2})
	later, err := e.q.SellersWithQuestionsSince(e.ctx, e.clock.Now())
	is.NoErr(err)
	is.Equal(later, []int64{s2})

	samples, err := e.q.SellerSamplesSince(e.ctx, s1, since)
	is.NoErr(err)
	is.Equal(len(samples), 2) // the old question is before since
	is.Equal(samples[0], questions.Sample{QuestionID: q1.ID, SellerID: s1, BuyerID: buyer, ItemID: i1,
		Status: questions.StatusAnswered, Asked: since, Answered: since.Add(time.Hour)})
	is.Equal(samples[1].QuestionID, q2.ID)
	is.True(samples[1].Answered.IsZero())
	is.Equal(samples[1].Status, questions.StatusUnanswered)
}

func TestEvents_AskAnswerDeleteModerateWriteOutboxEvents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	e.mustAnswer(t, seller, q.ID, "yes")
	is.NoErr(e.q.Delete(e.ctx, seller, q.ID))
	ban := questions.StatusBanned
	_, err := e.q.Moderate(e.ctx, q.ID, questions.Moderation{Status: &ban})
	is.NoErr(err)
	// A refused operation writes no event.
	_, err = e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: "x"})
	is.True(err != nil)

	got := outbox(t, e)
	is.Equal(len(got), 4)
	for i, action := range []string{questions.ActionCreated, questions.ActionAnswered, questions.ActionDeleted, questions.ActionModerated} {
		is.Equal(got[i].Action, action)
		is.Equal(got[i].Topic, notify.TopicQuestions)
		is.Equal(got[i].UserID, seller)
		is.Equal(got[i].Resource, "/questions/"+itoa(q.ID))
	}
}

func TestEvents_HidingAndClosingAnItemWriteQuestionEvents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	hidden := e.mustAsk(t, buyer, item, "Is it new?")
	open := e.mustAsk(t, buyer, item, "Is it blue?")
	answered := e.mustAsk(t, buyer, item, "Is it big?")
	e.mustAnswer(t, seller, answered.ID, "yes")
	_, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{hidden.ID}})
	is.NoErr(err)
	// Hiding again changes nothing and writes nothing.
	_, err = e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{hidden.ID}})
	is.NoErr(err)
	e.closeItem(t, seller, item)

	got := outbox(t, e)
	is.Equal(len(got), 7) // 3 asked, 1 answered, 1 hidden, 2 closed
	is.Equal(got[4].Action, questions.ActionHidden)
	is.Equal(got[4].Resource, "/questions/"+itoa(hidden.ID))
	// Only the UNANSWERED questions are closed; the answered one is not.
	closed := []string{got[5].Resource, got[6].Resource}
	slices.Sort(closed)
	want := []string{"/questions/" + itoa(hidden.ID), "/questions/" + itoa(open.ID)}
	slices.Sort(want)
	is.Equal(closed, want)
	for _, ev := range got[5:] {
		is.Equal(ev.Action, questions.ActionClosed)
		is.Equal(ev.UserID, seller)
		is.Equal(ev.Topic, notify.TopicQuestions)
	}
}

// outbox reads every event of the notification outbox, oldest first.
// outbox returns the question events in the outbox, in order.
func outbox(t *testing.T, e *env) []notify.Event {
	t.Helper()
	var got []notify.Event
	err := e.store.View(e.ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(v)
			if err != nil {
				return err
			}
			// The item's own events (topic items) are stock's.
			if ev.Topic == notify.TopicQuestions {
				got = append(got, ev)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// textRefusals are the characters no text people read may hold, each with
// the message and cause code that refuse it (internal/textcheck).
var textRefusals = []struct {
	name, text, message, code string
}{
	{"ControlCharacter", "Is it\x07 new?", "The field [text] must not contain control characters", "text.control_character"},
	{"CarriageReturn", "Is it new?\r\nThanks", "The field [text] must not contain control characters", "text.control_character"},
	{"C1Control", "Is it \u009bnew?", "The field [text] must not contain control characters", "text.control_character"},
	{"BidiOverride", "Call \u202e1234", "The field [text] must not contain bidirectional control characters", "text.bidi_control"},
	{"BidiIsolate", "Call \u20671234\u2069", "The field [text] must not contain bidirectional control characters", "text.bidi_control"},
	{"OnlyZeroWidthSpaces", "\u200b\u200b", "The field [text] must have visible characters", "text.invisible_only"},
	{"OnlyJoinersAndBOM", " \u200d\u200c\u2060\ufeff ", "The field [text] must have visible characters", "text.invisible_only"},
}

func wantTextRefusal(t *testing.T, err error, message, code string) {
	t.Helper()
	e := errs.As(err)
	if e == nil || e.Kind != errs.Invalid || e.Message != message || len(e.Causes) != 1 || e.Causes[0].Code != code {
		t.Fatalf("err = %#v, want Invalid %q with cause %s", err, message, code)
	}
}

func TestAsk_TextWithControlBidiOrOnlyInvisibleCharactersIsRefusedAndStoresNothing(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	for _, tc := range textRefusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.q.Ask(e.ctx, buyer, questions.AskInput{Text: tc.text, ItemID: item})
			wantTextRefusal(t, err, tc.message, tc.code)
		})
	}
	if got := countQuestions(t, e, seller); got != 0 {
		t.Fatalf("refused asks stored %d questions", got)
	}
	// Lines and tabs are text; invisible characters beside visible ones stay.
	q := e.mustAsk(t, buyer, item, "Hola:\n\t¿viene en caja?\u200b 👩\u200d💻")
	if q.Text != "Hola:\n\t¿viene en caja?\u200b 👩\u200d💻" {
		t.Fatalf("text = %q", q.Text)
	}
}

func TestAnswer_TextWithControlBidiOrOnlyInvisibleCharactersIsRefusedAndLeavesTheQuestionUnanswered(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	for _, tc := range textRefusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: tc.text})
			wantTextRefusal(t, err, tc.message, tc.code)
			got, err := e.q.Question(e.ctx, seller, q.ID, false)
			if err != nil || got.Status != questions.StatusUnanswered || got.Answer != nil {
				t.Fatalf("after a refused answer: %+v, %v", got, err)
			}
		})
	}
	a := e.mustAnswer(t, seller, q.ID, "Sí.\nNuevo, en caja.")
	if a.Answer.Text != "Sí.\nNuevo, en caja." {
		t.Fatalf("answer text = %q", a.Answer.Text)
	}
}
