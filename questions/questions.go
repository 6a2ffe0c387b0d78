// Package questions holds buyers' questions and sellers' answers: asking,
// answering, deleting, hiding, moderation, the sellers' blacklists, search,
// and the seller response-time statistics.
package questions

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"marketplace/accounts"
	"marketplace/clock"
	"marketplace/errs"
	"marketplace/geo"
	"marketplace/notify"
	"marketplace/stock"
	"marketplace/storage"
)

// Question statuses (the spec's seven values).
const (
	StatusUnanswered       = "UNANSWERED"
	StatusAnswered         = "ANSWERED"
	StatusClosedUnanswered = "CLOSED_UNANSWERED"
	StatusUnderReview      = "UNDER_REVIEW"
	StatusBanned           = "BANNED"
	StatusDeleted          = "DELETED"
	StatusDisabled         = "DISABLED"
)

// Statuses lists every question status, in the order of the search's status
// filter values.
var Statuses = []string{StatusAnswered, StatusBanned, StatusClosedUnanswered, StatusDeleted,
	StatusDisabled, StatusUnanswered, StatusUnderReview}

// Answer statuses.
const (
	AnswerActive   = "ACTIVE"
	AnswerDisabled = "DISABLED"
	AnswerBanned   = "BANNED"
)

// MaxTextLength is the longest question or answer text, in characters.
const MaxTextLength = 2000

// TimeLayout is how question dates are written: ISO 8601 with milliseconds
// and the offset of the seller's site.
const TimeLayout = "2006-01-02T15:04:05.000-07:00"

// Event actions written to the notification outbox.
const (
	ActionCreated   = "created"
	ActionAnswered  = "answered"
	ActionDeleted   = "deleted"
	ActionModerated = "moderated"
	// ActionHidden and ActionClosed tell the seller's application that a
	// question left the public listings or was closed with its item: both
	// change what GET /questions/{id} answers, and the questions topic
	// notifies on changes to a question, not only on new ones.
	ActionHidden = "hidden"
	ActionClosed = "closed"
)

// record is what is stored for a question.
type record struct {
	ID                 int64         `json:"id"`
	SellerID           int64         `json:"seller_id"`
	BuyerID            int64         `json:"buyer_id"`
	ItemID             string        `json:"item_id"`
	SiteID             string        `json:"site_id"`
	Text               string        `json:"text"`
	Status             string        `json:"status"`
	Created            time.Time     `json:"created"`
	Updated            time.Time     `json:"updated"`
	DeletedFromListing bool          `json:"deleted_from_listing"`
	Hold               bool          `json:"hold"`
	SuspectedSpam      bool          `json:"suspected_spam"`
	Answer             *answerRecord `json:"answer,omitempty"`
}

type answerRecord struct {
	Text    string    `json:"text"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
}

// Answer is a question's answer as answered to callers.
type Answer struct {
	Text        string `json:"text"`
	Status      string `json:"status"`
	DateCreated string `json:"date_created"`
}

// From is the asker of a question. AnsweredQuestions is set in the by-id and
// detail forms only. No personal data is ever included: the spec allows it
// for vehicle listings only, which this marketplace does not have.
type From struct {
	ID                int64  `json:"id"`
	AnsweredQuestions *int64 `json:"answered_questions,omitempty"`
}

// Details are the fields of the by-id form that the search form lacks: the
// spec's Question table says the by-id lookup returns them, with or without
// api_version=4 (only suspected_spam is tied to version 4).
type Details struct {
	BuyerID     int64  `json:"buyer_id"`
	LastUpdated string `json:"last_updated"`
	// AppID is null: tokens are not bound to applications.
	AppID *int64 `json:"app_id"`
}

// Question is a question as answered to callers. The text of a BANNED
// question and of a BANNED answer is empty, as the public API does.
type Question struct {
	ID                 int64   `json:"id"`
	SellerID           int64   `json:"seller_id"`
	ItemID             string  `json:"item_id"`
	Text               string  `json:"text"`
	Status             string  `json:"status"`
	DateCreated        string  `json:"date_created"`
	DeletedFromListing bool    `json:"deleted_from_listing"`
	Hold               bool    `json:"hold"`
	SuspectedSpam      *bool   `json:"suspected_spam,omitempty"`
	Answer             *Answer `json:"answer"`
	From               From    `json:"from"`
	*Details
}

// Service manages questions and answers.
type Service struct {
	store    storage.Store
	clock    clock.Clock
	accounts *accounts.Service
	stock    *stock.Service

	zones sync.Map // site id -> *time.Location
}

// New returns the questions service. It registers a hook on stock so that
// item changes (closing) reach the item's questions in the same transaction.
func New(store storage.Store, clk clock.Clock, acc *accounts.Service, st *stock.Service) *Service {
	s := &Service{store: store, clock: clk, accounts: acc, stock: st}
	if st != nil {
		st.OnItemChange(s.onItemChange)
	}
	return s
}

// zone returns the time zone of a site, UTC when unknown. It reads the site
// inside the caller's tx, which may be an Update: a View of its own would
// need a second connection while the Update holds one.
func (s *Service) zone(tx storage.Tx, siteID string) *time.Location {
	if z, ok := s.zones.Load(siteID); ok {
		return z.(*time.Location)
	}
	loc := time.UTC
	if site, err := geo.GetSite(tx, siteID); err == nil {
		if l, err := time.LoadLocation(site.TimeZone); err == nil {
			loc = l
		}
	}
	s.zones.Store(siteID, loc)
	return loc
}

func (s *Service) format(tx storage.Tx, r record, t time.Time) string {
	return t.In(s.zone(tx, r.SiteID)).Format(TimeLayout)
}

// view renders r. answered is the asker's answered-question count, or nil
// for the search form.
func (s *Service) view(tx storage.Tx, r record, answered *int64) Question {
	q := Question{
		ID: r.ID, SellerID: r.SellerID, ItemID: r.ItemID, Text: r.Text, Status: r.Status,
		DateCreated: s.format(tx, r, r.Created), DeletedFromListing: r.DeletedFromListing, Hold: r.Hold,
		From: From{ID: r.BuyerID, AnsweredQuestions: answered},
	}
	if r.Status == StatusBanned {
		q.Text = ""
	}
	if r.Answer != nil {
		a := &Answer{Text: r.Answer.Text, Status: r.Answer.Status, DateCreated: s.format(tx, r, r.Answer.Created)}
		if a.Status == AnswerBanned {
			a.Text = ""
		}
		q.Answer = a
	}
	return q
}

// detailView is the by-id form: from carries answered_questions, the
// details are set, and api_version 4 adds suspected_spam.
func (s *Service) detailView(tx storage.Tx, r record, v4 bool) (Question, error) {
	answered, err := answeredCounter(r.BuyerID).Read(tx)
	if err != nil {
		return Question{}, err
	}
	q := s.view(tx, r, &answered)
	if v4 {
		spam := r.SuspectedSpam
		q.SuspectedSpam = &spam
	}
	q.Details = &Details{BuyerID: r.BuyerID, LastUpdated: s.format(tx, r, r.Updated)}
	return q, nil
}

func getRecord(tx storage.Tx, id int64) (record, error) {
	b, err := tx.Get(questionKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return record{}, errNotFound(id)
	}
	if err != nil {
		return record{}, errs.Internalf(err, "read question %d", id)
	}
	r, err := decodeRecord(b)
	if err != nil {
		return record{}, errs.Internalf(err, "decode question %d", id)
	}
	return r, nil
}

func errNotFound(id int64) error {
	return errs.NotFoundf("Question with id %d not found", id)
}

// put writes r and keeps every index and counter in step with the change
// from before (nil for a new question). It is the one place that writes a
// question, so the indexes cannot drift from the records.
func put(tx storage.Tx, before *record, r record) error {
	if before == nil {
		if err := tx.Set(sellerDateKey(r.SellerID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(itemDateKey(r.ItemID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerItemKey(r.SellerID, r.ItemID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerFromKey(r.SellerID, r.BuyerID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(dateKey(r.Created, r.ID), storage.NewKeyRaw().Int(r.SellerID)); err != nil {
			return err
		}
		if err := sellerCounter(r.SellerID).AddAt(tx, 1, uint64(r.ID)); err != nil {
			return err
		}
	}
	if before == nil || before.Status != r.Status {
		if before != nil {
			if err := tx.Delete(sellerStatusKey(r.SellerID, before.Status, r.Created, r.ID)); err != nil {
				return err
			}
			if err := tx.Delete(sellerStatusItemKey(r.SellerID, before.Status, r.ItemID, r.Created, r.ID)); err != nil {
				return err
			}
			if err := tx.Delete(sellerStatusFromKey(r.SellerID, before.Status, r.BuyerID, r.Created, r.ID)); err != nil {
				return err
			}
			if err := sellerStatusCounter(r.SellerID, before.Status).AddAt(tx, -1, uint64(r.ID)); err != nil {
				return err
			}
			if before.Status == StatusAnswered {
				if err := answeredCounter(r.BuyerID).AddAt(tx, -1, uint64(r.ID)); err != nil {
					return err
				}
			}
		}
		if err := tx.Set(sellerStatusKey(r.SellerID, r.Status, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerStatusItemKey(r.SellerID, r.Status, r.ItemID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerStatusFromKey(r.SellerID, r.Status, r.BuyerID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := sellerStatusCounter(r.SellerID, r.Status).AddAt(tx, 1, uint64(r.ID)); err != nil {
			return err
		}
		if r.Status == StatusAnswered {
			if err := answeredCounter(r.BuyerID).AddAt(tx, 1, uint64(r.ID)); err != nil {
				return err
			}
		}
	}
	return tx.Set(questionKey(r.ID), encodeRecord(r))
}

func (s *Service) appendEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Topic: notify.TopicQuestions, UserID: r.SellerID,
		Resource: "/questions/" + strconv.FormatInt(r.ID, 10), Action: action, Received: now})
	return err
}

// checkText applies the text rules shared by questions and answers.
func checkText(what, text string) (string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", errs.Invalidf("The %s text cannot be empty", what)
	}
	if n := utf8.RuneCountInString(text); n > MaxTextLength {
		return "", errs.Invalidf("The %s text has %d characters; the maximum is %d", what, n, MaxTextLength)
	}
	if !utf8.ValidString(text) {
		return "", errs.Invalidf("The %s text is not valid UTF-8", what)
	}
	return t, nil
}

// checkItemID refuses item ids that no item can have; they would also break
// the key encoding (a 0x00 inside a key part).
func checkItemID(id string) error {
	if len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return errs.Invalidf("Invalid item id: %q", id)
	}
	return nil
}

// wrap keeps domain errors and turns storage failures into Internal ones.
func wrap(err error, op string) error {
	if err == nil || errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", op)
}

// AskInput is the input of Ask.
type AskInput struct {
	Text   string `json:"text"`
	ItemID string `json:"item_id"`
}

// Ask creates a question by buyer on an item. The item must exist and be
// active; its seller may not ask, nor may a user on the seller's questions
// blacklist. Returns the question in the by-id form. Errors: Invalid (text,
// item not active), NotFound (item), Forbidden (own item, blacklisted).
func (s *Service) Ask(ctx context.Context, buyer int64, in AskInput) (Question, error) {
	text, err := checkText("question", in.Text)
	if err != nil {
		return Question{}, err
	}
	if strings.TrimSpace(in.ItemID) == "" {
		return Question{}, errs.Invalidf("The fields [item_id] are required for requested call")
	}
	if err := checkItemID(in.ItemID); err != nil {
		return Question{}, err
	}
	now := s.clock.Now()
	var out Question
	questionNumber := storage.NewOnceID(s.store, questionSequence)
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		item, err := stock.GetItem(tx, in.ItemID)
		if err != nil {
			return err
		}
		if item.Status != stock.StatusActive {
			return errs.Invalidf("Item %s is not active: questions cannot be asked", item.ID)
		}
		if item.SellerID == buyer {
			return errs.Forbiddenf("A seller cannot ask questions on its own item %s", item.ID)
		}
		// The number is drawn before the blacklist is read so that every
		// key the rest reads is known: one round trip reads them all
		// where the store can (storage.Prefetch). A refused ask leaves a
		// gap in the ids, as a retried one may.
		n, err := questionNumber.Get(ctx)
		if err != nil {
			return err
		}
		id := firstQuestionID - 1 + int64(n)
		if err := storage.Prefetch(tx, blacklistKey(item.SellerID, buyer), answeredCounter(buyer).ShardKey(0),
			sellerCounter(item.SellerID).ShardKey(uint64(id)), sellerStatusCounter(item.SellerID, StatusUnanswered).ShardKey(uint64(id))); err != nil {
			return err
		}
		if _, err := tx.Get(blacklistKey(item.SellerID, buyer)); err == nil {
			return errs.Forbiddenf("User %d is blocked from asking questions to seller %d", buyer, item.SellerID)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		r := record{ID: id, SellerID: item.SellerID, BuyerID: buyer, ItemID: item.ID, SiteID: item.SiteID,
			Text: text, Status: StatusUnanswered, Created: now, Updated: now}
		if err := put(tx, nil, r); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, tx, r, ActionCreated, now); err != nil {
			return err
		}
		out, err = s.detailView(tx, r, false)
		return err
	})
	return out, wrap(err, "ask question")
}

// AnswerInput is the input of Answer.
type AnswerInput struct {
	QuestionID int64  `json:"question_id"`
	Text       string `json:"text"`
}

// Answer answers an UNANSWERED question; only the item's seller may. Returns
// the whole question, now ANSWERED. Errors: Invalid (text, already answered
// or not answerable), NotFound, Forbidden (not the seller).
func (s *Service) Answer(ctx context.Context, seller int64, in AnswerInput) (Question, error) {
	text, err := checkText("answer", in.Text)
	if err != nil {
		return Question{}, err
	}
	now := s.clock.Now()
	var out Question
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, in.QuestionID)
		if err != nil {
			return err
		}
		if r.SellerID != seller {
			return errs.Forbiddenf("Only the seller of item %s can answer question %d", r.ItemID, r.ID)
		}
		if r.Answer != nil {
			return errs.Invalidf("Question %d is already answered", r.ID)
		}
		if r.Status != StatusUnanswered {
			return errs.Invalidf("Question %d cannot be answered: its status is %s", r.ID, r.Status)
		}
		before := r
		r.Status = StatusAnswered
		r.Answer = &answerRecord{Text: text, Status: AnswerActive, Created: now}
		r.Updated = now
		if err := put(tx, &before, r); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, tx, r, ActionAnswered, now); err != nil {
			return err
		}
		out, err = s.detailView(tx, r, false)
		return err
	})
	return out, wrap(err, "answer question")
}

// Question returns one question in the by-id form; v4 adds the api_version 4
// fields. Without a caller (caller 0), a DELETED or BANNED question is not
// found. Errors: NotFound.
func (s *Service) Question(ctx context.Context, caller, id int64, v4 bool) (Question, error) {
	var out Question
	err := s.store.View(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if caller == 0 && (r.Status == StatusDeleted || r.Status == StatusBanned) {
			return errNotFound(id)
		}
		out, err = s.detailView(tx, r, v4)
		return err
	})
	return out, wrap(err, "read question")
}

// DeleteMessage is the text of the deletion confirmation.
const DeleteMessage = "Question deleted."

// Delete deletes a question: its status becomes DELETED. Only the item's
// seller may. Errors: NotFound, Forbidden, Invalid (already deleted).
func (s *Service) Delete(ctx context.Context, caller, id int64) error {
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if r.SellerID != caller {
			return errs.Forbiddenf("Only the seller of item %s can delete question %d", r.ItemID, r.ID)
		}
		if r.Status == StatusDeleted {
			return errs.Invalidf("Question %d is already deleted", r.ID)
		}
		before := r
		r.Status = StatusDeleted
		r.Updated = now
		if err := put(tx, &before, r); err != nil {
			return err
		}
		return s.appendEvent(ctx, tx, r, ActionDeleted, now)
	})
	return wrap(err, "delete question")
}

// MaxHide is the most question ids one hide request may carry.
const MaxHide = 100

// HideInput is the payload of POST /my/questions/hidden.
type HideInput struct {
	QuestionIDs []int64 `json:"question_ids"`
}

// Hide hides questions of the caller's items from the public listings: they
// get deleted_from_listing true and keep their status. All or nothing: every
// id must be a question on one of the caller's items. Returns the ids hidden,
// without repeats, in the order given. Errors: Invalid, NotFound, Forbidden.
func (s *Service) Hide(ctx context.Context, caller int64, in HideInput) ([]int64, error) {
	if len(in.QuestionIDs) == 0 {
		return nil, errs.Invalidf("The fields [question_ids] are required for requested call")
	}
	if len(in.QuestionIDs) > MaxHide {
		return nil, errs.Invalidf("At most %d question ids can be hidden at once", MaxHide)
	}
	ids := make([]int64, 0, len(in.QuestionIDs))
	seen := map[int64]bool{}
	for _, id := range in.QuestionIDs {
		if id <= 0 {
			return nil, errs.WithCode(errs.Invalid, CodeInvalidQuestion, MsgInvalidQuestion)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		for _, id := range ids {
			r, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			if r.SellerID != caller {
				return errs.Forbiddenf("Only the seller of item %s can hide question %d", r.ItemID, r.ID)
			}
			if r.DeletedFromListing {
				continue
			}
			before := r
			r.DeletedFromListing = true
			r.Updated = now
			if err := put(tx, &before, r); err != nil {
				return err
			}
			if err := s.appendEvent(ctx, tx, r, ActionHidden, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "hide questions")
	}
	return ids, nil
}

// Moderation is the input of Moderate; nil fields are left as they are.
type Moderation struct {
	Status       *string `json:"status"`
	AnswerStatus *string `json:"answer_status"`
}

// Moderate sets a question's status (BANNED, UNDER_REVIEW or DISABLED) and/or
// its answer's status (ACTIVE, BANNED or DISABLED), for the operator.
// Errors: Invalid, NotFound.
func (s *Service) Moderate(ctx context.Context, id int64, in Moderation) (Question, error) {
	if in.Status == nil && in.AnswerStatus == nil {
		return Question{}, errs.Invalidf("The fields [status] or [answer_status] are required for requested call")
	}
	if in.Status != nil {
		switch *in.Status {
		case StatusBanned, StatusUnderReview, StatusDisabled:
		default:
			return Question{}, errs.Invalidf("Invalid status: %s. Valid values are: [BANNED, UNDER_REVIEW, DISABLED]", *in.Status)
		}
	}
	if in.AnswerStatus != nil {
		switch *in.AnswerStatus {
		case AnswerActive, AnswerBanned, AnswerDisabled:
		default:
			return Question{}, errs.Invalidf("Invalid answer_status: %s. Valid values are: [ACTIVE, BANNED, DISABLED]", *in.AnswerStatus)
		}
	}
	now := s.clock.Now()
	var out Question
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		before := r
		if in.AnswerStatus != nil {
			if r.Answer == nil {
				return errs.Invalidf("Question %d has no answer to moderate", id)
			}
			a := *r.Answer
			a.Status = *in.AnswerStatus
			r.Answer = &a
		}
		if in.Status != nil {
			r.Status = *in.Status
		}
		r.Updated = now
		if err := put(tx, &before, r); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, tx, r, ActionModerated, now); err != nil {
			return err
		}
		out, err = s.detailView(tx, r, true)
		return err
	})
	return out, wrap(err, "moderate question")
}

// onItemChange closes the UNANSWERED questions of an item that is closed.
func (s *Service) onItemChange(ctx context.Context, tx storage.Tx, before, after stock.Item) error {
	if after.Status != stock.StatusClosed || before.Status == stock.StatusClosed || before.ID == "" {
		return nil
	}
	var ids []int64
	func() {
		it := tx.Iterate(storage.Prefix(itemDatePrefix(after.ID)))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			ids = append(ids, readTrailingID(it.Key()))
		}
	}()
	now := s.clock.Now()
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if r.Status != StatusUnanswered {
			continue
		}
		prev := r
		r.Status = StatusClosedUnanswered
		r.Updated = now
		if err := put(tx, &prev, r); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, tx, r, ActionClosed, now); err != nil {
			return err
		}
	}
	return nil
}
