package questions

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// checkText applies the text rules shared by questions and answers; the
// characters a text may hold are the rule of every text people read
// (textcheck), with its lines.
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
	if err := textcheck.Lines("text", t); err != nil {
		return "", err
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
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		// The question's number and its event's are drawn with the
		// item's read, where the store can (storage.DrawLater): on
		// PostgreSQL, one round trip for the three. An ask refused
		// afterwards, or run again after a conflict, leaves a gap in
		// the ids.
		numbers := storage.DrawLater(ctx, s.store, tx, questionSequence, notify.OutboxSequence)
		// Its status, seller and site; its stock plays no part in an ask.
		item, err := stock.GetItemWithoutStock(tx, in.ItemID)
		if err != nil {
			return err
		}
		drawn, err := numbers()
		if err != nil {
			return err
		}
		id, eventSeq := firstQuestionID-1+int64(drawn[0]), drawn[1]
		if item.Status != stock.StatusActive {
			return errs.Invalidf("Item %s is not active: questions cannot be asked", item.ID)
		}
		if item.SellerID == buyer {
			return errs.Forbiddenf("A seller cannot ask questions on its own item %s", item.ID)
		}
		r := record{ID: id, SellerID: item.SellerID, BuyerID: buyer, ItemID: item.ID, SiteID: item.SiteID,
			Text: text, Status: StatusUnanswered, Created: now, Updated: now}
		// With the id known, so is every key the rest reads: one round
		// trip reads them all where the store can (storage.Prefetch).
		if err := storage.Prefetch(tx, append(writtenKeys(r), blacklistKey(item.SellerID, buyer))...); err != nil {
			return err
		}
		if _, err := tx.Get(blacklistKey(item.SellerID, buyer)); err == nil {
			return errs.Forbiddenf("User %d is blocked from asking questions to seller %d", buyer, item.SellerID)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err := put(tx, nil, r); err != nil {
			return err
		}
		if err := s.appendDrawnEvent(ctx, tx, r, ActionCreated, now, eventSeq); err != nil {
			return err
		}
		out, err = s.detailView(tx, r, false)
		return err
	})
	return out, wrap(err, "ask question")
}
