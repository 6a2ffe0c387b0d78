package questions_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/questions"
)

func TestDelete_OnlyTheSellerDeletesAndStatusBecomesDeleted(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	is.True(errs.Is(e.q.Delete(e.ctx, buyer, q.ID), errs.Forbidden)) // the asker may not
	is.NoErr(e.q.Delete(e.ctx, seller, q.ID))
	got, err := e.q.Question(e.ctx, seller, q.ID, false)
	is.NoErr(err)
	is.Equal(got.Status, questions.StatusDeleted)
	is.True(errs.Is(e.q.Delete(e.ctx, seller, q.ID), errs.Invalid)) // already deleted
	is.True(errs.Is(e.q.Delete(e.ctx, seller, 1), errs.NotFound))
}

func TestQuestion_AnonymousReadOfDeletedOrBannedIsNotFound(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	del := e.mustAsk(t, buyer, item, "one")
	ban := e.mustAsk(t, buyer, item, "two")
	is.NoErr(e.q.Delete(e.ctx, seller, del.ID))
	banned := questions.StatusBanned
	_, err := e.q.Moderate(e.ctx, ban.ID, questions.Moderation{Status: &banned})
	is.NoErr(err)
	for _, id := range []int64{del.ID, ban.ID} {
		_, err := e.q.Question(e.ctx, 0, id, false)
		is.True(errs.Is(err, errs.NotFound))
		_, err = e.q.Question(e.ctx, buyer, id, false)
		is.NoErr(err) // with a token it is found
	}
}

func TestHide_IsAllOrNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s1, s2, buyer := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	mine := e.mustAsk(t, buyer, e.mustItem(t, s1), "mine")
	theirs := e.mustAsk(t, buyer, e.mustItem(t, s2), "theirs")
	_, err := e.q.Hide(e.ctx, s1, questions.HideInput{QuestionIDs: []int64{mine.ID, theirs.ID}})
	is.True(errs.Is(err, errs.Forbidden))
	got, _ := e.q.Question(e.ctx, s1, mine.ID, false)
	is.Equal(got.DeletedFromListing, false) // nothing hidden when one id is refused

	hidden, err := e.q.Hide(e.ctx, s1, questions.HideInput{QuestionIDs: []int64{mine.ID}})
	is.NoErr(err)
	is.Equal(hidden, []int64{mine.ID})
	got, _ = e.q.Question(e.ctx, s1, mine.ID, false)
	is.Equal(got.DeletedFromListing, true)
}

func TestHide_RefusesEmptyTooManyAndNonPositiveIDs(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser(t)
	many := make([]int64, questions.MaxHide+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for name, ids := range map[string][]int64{"Empty": nil, "TooMany": many, "Zero": {0}} {
		t.Run(name, func(t *testing.T) {
			if _, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: ids}); !errs.Is(err, errs.Invalid) {
				t.Fatalf("err = %v, want Invalid", err)
			}
		})
	}
}

func TestModerate_BannedAnswerTextIsEmptiedAndStatusesSet(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	e.mustAnswer(t, seller, q.ID, "Yes")
	banned, review := questions.AnswerBanned, questions.StatusUnderReview
	got, err := e.q.Moderate(e.ctx, q.ID, questions.Moderation{Status: &review, AnswerStatus: &banned})
	is.NoErr(err)
	is.Equal(got.Status, questions.StatusUnderReview)
	is.Equal(*got.Answer, questions.Answer{Text: "", Status: questions.AnswerBanned, DateCreated: "2026-03-04T12:00:00.000-03:00"})
	is.Equal(*got.From.AnsweredQuestions, int64(0)) // leaving ANSWERED leaves the asker's count
}

func TestCloseItem_OnlyUnansweredQuestionsBecomeClosedUnanswered(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item, other := e.mustItem(t, seller), e.mustItem(t, seller)
	open := e.mustAsk(t, buyer, item, "open")
	done := e.mustAsk(t, buyer, item, "done")
	e.mustAnswer(t, seller, done.ID, "ok")
	elsewhere := e.mustAsk(t, buyer, other, "other item")
	e.closeItem(t, seller, item)
	for id, want := range map[int64]string{open.ID: questions.StatusClosedUnanswered, done.ID: questions.StatusAnswered, elsewhere.ID: questions.StatusUnanswered} {
		got, err := e.q.Question(e.ctx, seller, id, false)
		is.NoErr(err)
		is.Equal(got.Status, want)
	}
}

func TestBlacklist_BlockedUserMayAskAgainAfterUnblock(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller, buyer, other := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	added, err := e.q.Block(e.ctx, seller, seller, buyer)
	is.NoErr(err)
	is.True(added)
	added, err = e.q.Block(e.ctx, seller, seller, buyer)
	is.NoErr(err)
	is.True(!added) // blocking twice changes nothing
	_, err = e.q.Ask(e.ctx, buyer, questions.AskInput{Text: "hi", ItemID: item})
	is.True(errs.Is(err, errs.Forbidden))
	e.mustAsk(t, other, item, "others may ask")
	_, err = e.q.Block(e.ctx, other, seller, buyer)
	is.True(errs.Is(err, errs.Forbidden)) // only the seller manages its blacklist
	is.True(errs.Is(e.q.Unblock(e.ctx, other, seller, buyer), errs.Forbidden))
	is.NoErr(e.q.Unblock(e.ctx, seller, seller, buyer))
	is.True(errs.Is(e.q.Unblock(e.ctx, seller, seller, buyer), errs.NotFound))
	e.mustAsk(t, buyer, item, "hi again")
}

func TestBlacklist_PagesByUserID(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser(t)
	var users []int64
	for range 5 {
		u := e.mustUser(t)
		users = append(users, u)
		_, err := e.q.Block(e.ctx, seller, seller, u)
		is.NoErr(err)
	}
	page, total, err := e.q.Blacklist(e.ctx, seller, seller, 1, 2)
	is.NoErr(err)
	is.Equal(total, 5)
	is.Equal(page, []questions.BlacklistEntry{{UserID: users[1]}, {UserID: users[2]}})
}

func TestSearch_SellerIndexPagesMatchTheFullSort(t *testing.T) {
	e := newEnv(t)
	seller, b1, b2 := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	var all []int64
	for i := range 120 {
		buyer := b1
		if i%3 == 0 {
			buyer = b2
		}
		all = append(all, e.mustAsk(t, buyer, item, fmt.Sprintf("q%d", i)).ID)
		if i%2 == 0 {
			e.clock.Advance(time.Second) // some questions share an instant
		}
	}
	for _, tc := range []struct {
		name  string
		sorts []questions.Sort
	}{
		{"DefaultNewestFirst", nil},
		{"DateCreatedDESC", []questions.Sort{{Field: "date_created", Type: "DESC"}}},
		{"DateCreatedASC", []questions.Sort{{Field: "date_created", Type: "ASC"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, offset := range []int{0, 50, 100, 119, 120, 500} {
				idx, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, Sorts: tc.sorts, Offset: offset, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				scan, err := e.q.SearchByScan(e.ctx, seller, questions.SearchQuery{SellerID: seller, Sorts: tc.sorts, Offset: offset, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				if idx.Total != 120 || scan.Total != 120 || fmt.Sprint(ids(idx)) != fmt.Sprint(ids(scan)) {
					t.Fatalf("offset %d: index %v (total %d), scan %v (total %d)", offset, ids(idx), idx.Total, ids(scan), scan.Total)
				}
				if want := min(50, max(0, 120-offset)); len(idx.Questions) != want {
					t.Fatalf("offset %d: %d questions, want %d", offset, len(idx.Questions), want)
				}
			}
		})
	}
	asc, _ := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, Sorts: []questions.Sort{{Field: "date_created", Type: "ASC"}}, Limit: 1000})
	if fmt.Sprint(ids(asc)) != fmt.Sprint(all) {
		t.Fatalf("ASC order is not the asking order")
	}
}

func TestSearch_BySellerIsForTheSellerOnly(t *testing.T) {
	e := newEnv(t)
	seller, other := e.mustUser(t), e.mustUser(t)
	for _, caller := range []int64{0, other} {
		if _, err := e.q.Search(e.ctx, caller, questions.SearchQuery{SellerID: seller, Limit: 5}); !errs.Is(err, errs.Forbidden) {
			t.Fatalf("caller %d: err = %v, want Forbidden", caller, err)
		}
	}
}

func TestParseAnswer_ValidAttributesAndQuestionID(t *testing.T) {
	const badBody = "Invalid JSON. Valid attributes are: [question_id, text]."
	for _, tc := range []struct {
		name string
		body string
		code string
		msg  string
		want questions.AnswerInput
	}{
		{"OK", `{"question_id": 12, "text": "hi"}`, "", "", questions.AnswerInput{QuestionID: 12, Text: "hi"}},
		{"QuestionIDString", `{"question_id": "12", "text": "hi"}`, "invalid_question", "The question is invalid.", questions.AnswerInput{}},
		{"QuestionIDFraction", `{"question_id": 1.5, "text": "hi"}`, "invalid_question", "The question is invalid.", questions.AnswerInput{}},
		{"QuestionIDNull", `{"question_id": null, "text": "hi"}`, "invalid_question", "The question is invalid.", questions.AnswerInput{}},
		{"QuestionIDNegative", `{"question_id": -4, "text": "hi"}`, "invalid_question", "The question is invalid.", questions.AnswerInput{}},
		{"UnknownAttribute", `{"question_id": 1, "text": "hi", "x": 1}`, "invalid_post_body", badBody, questions.AnswerInput{}},
		{"MissingText", `{"question_id": 1}`, "invalid_post_body", badBody, questions.AnswerInput{}},
		{"WrongNames", `{"id": 1, "answer": "x"}`, "invalid_post_body", badBody, questions.AnswerInput{}},
		{"TextNotString", `{"question_id": 1, "text": 3}`, "bad_request", "Invalid JSON: the field [text] must be of type string", questions.AnswerInput{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.body), &fields); err != nil {
				t.Fatal(err)
			}
			got, err := questions.ParseAnswer(fields)
			if tc.code == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			de := errs.As(err)
			if de == nil || de.Kind != errs.Invalid || de.Code != tc.code || de.Message != tc.msg {
				t.Fatalf("err = %v, want %s %q", err, tc.code, tc.msg)
			}
		})
	}
}

func TestParseSorts_MatchesTypesToFieldsInOrder(t *testing.T) {
	is := is.New(t)
	got, err := questions.ParseSorts("item_id,date_created,from_id", "desc,ASC")
	is.NoErr(err)
	is.Equal(got, []questions.Sort{{Field: "item_id", Type: "DESC"}, {Field: "date_created", Type: "ASC"}, {Field: "from_id", Type: "ASC"}})
	none, err := questions.ParseSorts("", "")
	is.NoErr(err)
	is.Equal(len(none), 0)
	for _, bad := range [][2]string{{"text", ""}, {"item_id,item_id", ""}, {"item_id", "UP"}, {"", "ASC"}, {"item_id,", ""}} {
		_, err := questions.ParseSorts(bad[0], bad[1])
		is.True(errs.Is(err, errs.Invalid)) // bad sort
	}
}

func TestAnswer_ConcurrentAnswersOnlyOneWins(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	q := e.mustAsk(t, buyer, e.mustItem(t, seller), "Is it new?")
	const n = 8
	results := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: fmt.Sprintf("answer %d", i)})
			results <- err
		}()
	}
	ok := 0
	for range n {
		err := <-results
		switch {
		case err == nil:
			ok++
		case !errs.Is(err, errs.Invalid):
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers accepted, want 1", ok)
	}
	got, _ := e.q.Question(e.ctx, seller, q.ID, false)
	if *got.From.AnsweredQuestions != 1 {
		t.Fatalf("answered_questions = %d, want 1", *got.From.AnsweredQuestions)
	}
}

// TestBlacklist_BlockedUserIDMustBePositiveBeforeAnythingElse: the Go API
// refuses a non-positive user id to block or unblock with the message HTTP
// gives, whoever asks.
func TestBlacklist_BlockedUserIDMustBePositiveBeforeAnythingElse(t *testing.T) {
	e := newEnv(t)
	seller, other := e.mustUser(t), e.mustUser(t)
	for _, c := range []struct{ caller, user int64 }{{seller, 0}, {seller, -4}, {other, 0}} {
		want := fmt.Sprintf("Invalid user_id: %d. It must be a positive integer", c.user)
		_, err := e.q.Block(e.ctx, c.caller, seller, c.user)
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != want {
			t.Errorf("caller %d blocking %d: %v; want %q", c.caller, c.user, err, want)
		}
		err = e.q.Unblock(e.ctx, c.caller, seller, c.user)
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != want {
			t.Errorf("caller %d unblocking %d: %v; want %q", c.caller, c.user, err, want)
		}
	}
}
