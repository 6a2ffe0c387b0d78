package questions

import (
	"context"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

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
		number := s.eventNumber(ctx, tx)
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
		if err := s.appendNumberedEvent(ctx, tx, r, ActionAnswered, now, number); err != nil {
			return err
		}
		out, err = s.detailView(tx, r, false)
		return err
	})
	return out, wrap(err, "answer question")
}

// DeleteMessage is the text of the deletion confirmation.
const DeleteMessage = "Question deleted."

// Delete deletes a question: its status becomes DELETED. Only the item's
// seller may. Errors: NotFound, Forbidden, Invalid (already deleted).
func (s *Service) Delete(ctx context.Context, caller, id int64) error {
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		number := s.eventNumber(ctx, tx)
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
		return s.appendNumberedEvent(ctx, tx, r, ActionDeleted, now, number)
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
		// Every question, and its event's number, in the first round trip.
		ctx := notify.DrawEventNumbers(ctx, tx, len(ids))
		keys := make([][]byte, len(ids))
		for i, id := range ids {
			keys[i] = questionKey(id)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
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
		number := s.eventNumber(ctx, tx)
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
		if err := s.appendNumberedEvent(ctx, tx, r, ActionModerated, now, number); err != nil {
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
	for _, hidden := range []bool{false, true} {
		base := itemByDate.classPrefix(partition{item: after.ID}, classCode(StatusUnanswered, hidden))
		func() {
			it := tx.Iterate(storage.Prefix(base))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				ids = append(ids, readTrailingID(it.Key()))
			}
		}()
	}
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
