// Package notes holds the seller's private notes on an order or a pack:
// written, changed and deleted by the seller of the sale only, never shown
// to the buyer (docs/post-sale.md).
package notes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// MaxLength is the most characters a note holds.
const MaxLength = 300

// MaxPerSale is the most notes one order or one pack holds: the list of a
// sale's notes is read whole, so it is bounded.
const MaxPerSale = 100

// TimeLayout is how notes write their dates (2025-05-07T18:56:33Z).
const TimeLayout = "2006-01-02T15:04:05Z"

// On is what a note is written on.
type On string

// What notes are written on.
const (
	OnOrder On = "order"
	OnPack  On = "pack"
)

// Note is a note in the public API's shape. Order notes carry the same
// fields as pack notes.
type Note struct {
	ID              string  `json:"id"`
	Note            string  `json:"note"`
	DateCreated     string  `json:"date_created"`
	DateLastUpdated string  `json:"date_last_updated"`
	SourceBU        *string `json:"source_bu"`
	SellerID        int64   `json:"seller_id"`
	OperatorID      *int64  `json:"operator_id"`
}

// Service holds the notes.
type Service struct {
	store storage.Store
	clock clock.Clock
	sales *sales.Service
}

// New returns the notes over store, on the sales of s.
func New(store storage.Store, clk clock.Clock, s *sales.Service) *Service {
	return &Service{store: store, clock: clk, sales: s}
}

// sourceIntegrator is the business unit of a note written through the
// API: an integration's.
var sourceIntegrator = "integrator"

// Create writes a note of the seller caller on the order or pack id.
// Errors: Invalid (empty or too long, too many notes), NotFound (no such
// order or pack), Forbidden (caller is not its seller).
func (s *Service) Create(ctx context.Context, caller int64, on On, id int64, text string) (Note, error) {
	if err := checkText(text); err != nil {
		return Note{}, err
	}
	// Drawn before the transaction, which then waits for nothing but
	// its reads; a refused note leaves a gap in the sequence.
	no, err := kv.NewOnceID(s.store, noteSequence).Get(ctx)
	if err != nil {
		return Note{}, err
	}
	now := s.clock.Now()
	var out Note
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		if err := s.authorize(tx, caller, on, id, countKey(on, id)); err != nil {
			return err
		}
		n, err := kv.NewCounter(countKey(on, id), 1).Read(tx)
		if err != nil {
			return err
		}
		if n >= MaxPerSale {
			return errs.WithCode(errs.Invalid, "bad_request", fmt.Sprintf("The %s has reached the limit of %d notes", on, MaxPerSale))
		}
		stamp := now.UTC().Format(TimeLayout)
		src := sourceIntegrator
		out = Note{ID: fmt.Sprintf("%08x%016x", uint32(now.Unix()), no), Note: text, DateCreated: stamp,
			DateLastUpdated: stamp, SourceBU: &src, SellerID: caller}
		if err := kv.SetJSON(tx, noteKey(on, id, out.ID), out); err != nil {
			return err
		}
		return kv.NewCounter(countKey(on, id), 1).Add(tx, 1)
	})
	return out, err
}

// List returns the notes on the order or pack id, oldest first, to its
// seller. Errors: NotFound, Forbidden.
func (s *Service) List(ctx context.Context, caller int64, on On, id int64) ([]Note, error) {
	out := []Note{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out = out[:0]
		if err := s.authorize(tx, caller, on, id); err != nil {
			return err
		}
		it := tx.Iterate(storage.Range{Start: listPrefix(on, id), End: storage.PrefixEnd(listPrefix(on, id))})
		defer it.Close()
		for ; it.Valid() && len(out) < MaxPerSale; it.Next() {
			b, err := it.Value()
			if err != nil {
				return err
			}
			var n Note
			if err := json.Unmarshal(b, &n); err != nil {
				return errs.Internalf(err, "decode note %q", it.Key())
			}
			out = append(out, n)
		}
		return nil
	})
	return out, err
}

// Get returns one note on the order or pack id to its seller. Errors:
// NotFound, Forbidden.
func (s *Service) Get(ctx context.Context, caller int64, on On, id int64, noteID string) (Note, error) {
	if err := checkNoteID(noteID); err != nil {
		return Note{}, err
	}
	var out Note
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := s.authorize(tx, caller, on, id, noteKey(on, id, noteID)); err != nil {
			return err
		}
		var err error
		out, err = getNote(tx, on, id, noteID)
		return err
	})
	return out, err
}

// Update replaces the text of a note. Errors: Invalid, NotFound,
// Forbidden.
func (s *Service) Update(ctx context.Context, caller int64, on On, id int64, noteID, text string) (Note, error) {
	if err := checkNoteID(noteID); err != nil {
		return Note{}, err
	}
	if err := checkText(text); err != nil {
		return Note{}, err
	}
	now := s.clock.Now()
	var out Note
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if err := s.authorize(tx, caller, on, id, noteKey(on, id, noteID)); err != nil {
			return err
		}
		n, err := getNote(tx, on, id, noteID)
		if err != nil {
			return err
		}
		n.Note, n.DateLastUpdated = text, now.UTC().Format(TimeLayout)
		out = n
		return kv.SetJSON(tx, noteKey(on, id, noteID), n)
	})
	return out, err
}

// Delete removes a note for good. Errors: NotFound, Forbidden.
func (s *Service) Delete(ctx context.Context, caller int64, on On, id int64, noteID string) error {
	if err := checkNoteID(noteID); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx storage.Tx) error {
		if err := s.authorize(tx, caller, on, id, noteKey(on, id, noteID), countKey(on, id)); err != nil {
			return err
		}
		if _, err := getNote(tx, on, id, noteID); err != nil {
			return err
		}
		if err := tx.Delete(noteKey(on, id, noteID)); err != nil {
			return err
		}
		return kv.NewCounter(countKey(on, id), 1).Add(tx, -1)
	})
}

// authorize lets the seller of the sale through. extra are keys the
// caller reads next, fetched with the sale's in one round trip.
func (s *Service) authorize(tx storage.Tx, caller int64, on On, id int64, extra ...[]byte) error {
	orderID := id
	if on == OnPack {
		if err := storage.Prefetch(tx, append(sales.PackKeys(id)[:1], extra...)...); err != nil {
			return err
		}
		o, err := s.sales.PackOrder(tx, id)
		if err != nil {
			return errNotFound("Pack %d not found", id)
		}
		orderID = o
	} else if err := storage.Prefetch(tx, append(sales.OrderKeys(id), extra...)...); err != nil {
		return err
	}
	sale, err := s.sales.OrderOf(tx, orderID)
	if errs.Is(err, errs.NotFound) {
		return errNotFound("Order %d not found", id)
	}
	if err != nil {
		return err
	}
	if caller != sale.Order.Seller.ID && caller != sales.Operator {
		return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf("The user %d is not the seller of the %s %d", caller, on, id))
	}
	return nil
}

// checkNoteID refuses an id that no note can have, before anything is
// read: the answer to a malformed id must not depend on who asks, and
// quotes none of it.
func checkNoteID(noteID string) error {
	if len(noteID) != 24 || strings.Trim(noteID, "0123456789abcdef") != "" {
		return errNotFound("Note not found: a note id is 24 hexadecimal digits")
	}
	return nil
}

func getNote(tx storage.Tx, on On, id int64, noteID string) (Note, error) {
	var n Note
	err := kv.GetJSON(tx, noteKey(on, id, noteID), &n)
	if errors.Is(err, storage.ErrNotFound) {
		return n, errNotFound("Note %s not found", noteID)
	}
	if err != nil {
		return n, errs.Internalf(err, "read note %s", noteID)
	}
	return n, nil
}

func errNotFound(format string, args ...any) error {
	return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf(format, args...))
}

// checkText: the public API's notes hold 1 to 300 characters; its message
// for both ends is the one it documents for the upper.
func checkText(text string) error {
	if n := utf8.RuneCountInString(text); n == 0 || n > MaxLength {
		return errs.WithCode(errs.Invalid, "bad_request", "Note exceeds 300 characters")
	}
	return nil
}
