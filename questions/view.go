package questions

import (
	"context"
	"time"

	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/storage"
)

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
