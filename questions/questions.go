// Package questions holds buyers' questions and sellers' answers: asking
// (ask.go), the lifecycle that follows, answering, deleting, hiding,
// moderation and closing with the item (lifecycle.go), reads (view.go,
// search.go), the sellers' blacklists (blacklist.go) and the samples that
// package responsetime computes response times from (samples.go). Every
// write of a question goes through put (persist.go), which keeps the
// indexes (keys.go) in step.
package questions

import (
	"sync"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
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

// wrap keeps domain errors and turns storage failures into Internal ones.
func wrap(err error, op string) error {
	if err == nil || errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", op)
}
