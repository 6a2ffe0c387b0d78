package faults

import (
	"context"
	"errors"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Create validates in and stores it as a new rule, first among none: rules
// are tried oldest first. Errors: Invalid (the field at fault is named),
// Internal.
func (s *Service) Create(ctx context.Context, in NewRule) (Rule, error) {
	r, err := validate(in)
	if err != nil {
		return Rule{}, err
	}
	seq, err := s.store.Sequence(RuleSequence)
	if err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	id, err := seq.Next(ctx)
	if err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	r.ID = int64(id)
	r.Created = s.clock.Now().UTC()
	if err := s.store.Update(ctx, func(tx storage.Tx) error {
		storage.Announce(tx, ChangesTopic)
		return kv.SetJSON(tx, ruleKey(r.ID), r)
	}); err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	s.cache.Store(nil)
	return r, nil
}

// List returns the rules in the order they are tried, with the times each
// has left. Errors: Internal.
func (s *Service) List(ctx context.Context) ([]Rule, error) {
	rules, err := s.read(ctx)
	if err != nil {
		return nil, wrapInternal(err, "list fault rules")
	}
	return rules, nil
}

// Rule returns the rule with id. Errors: NotFound, Internal.
func (s *Service) Rule(ctx context.Context, id int64) (Rule, error) {
	var r Rule
	err := s.store.View(ctx, func(tx storage.Tx) error { return kv.GetJSON(tx, ruleKey(id), &r) })
	if errors.Is(err, storage.ErrNotFound) {
		return Rule{}, errNotFound(id)
	}
	if err != nil {
		return Rule{}, wrapInternal(err, "read fault rule")
	}
	return r, nil
}

// Delete removes the rule with id and its rate windows. Errors: NotFound,
// Internal.
func (s *Service) Delete(ctx context.Context, id int64) error {
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(ruleKey(id)); err != nil {
			return err
		}
		storage.Announce(tx, ChangesTopic)
		return deleteRule(tx, id)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound(id)
	}
	if err != nil {
		return wrapInternal(err, "delete fault rule")
	}
	s.cache.Store(nil)
	return nil
}

// DeleteAll removes every rule and returns how many there were. Errors:
// Internal.
func (s *Service) DeleteAll(ctx context.Context) (int, error) {
	rules, err := s.read(ctx)
	if err != nil {
		return 0, wrapInternal(err, "delete fault rules")
	}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		storage.Announce(tx, ChangesTopic)
		for _, r := range rules {
			if err := deleteRule(tx, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, wrapInternal(err, "delete fault rules")
	}
	s.cache.Store(nil)
	return len(rules), nil
}

func deleteRule(tx storage.Tx, id int64) error {
	if err := tx.Delete(ruleKey(id)); err != nil {
		return err
	}
	var windows [][]byte
	it := tx.Iterate(storage.Prefix(ratePrefix(id)))
	for ; it.Valid(); it.Next() {
		windows = append(windows, append([]byte(nil), it.Key()...))
	}
	it.Close()
	for _, k := range windows {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
