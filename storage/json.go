package storage

import (
	"encoding/json"
	"errors"
	"fmt"
)

// GetJSON reads the value at key into v. It returns ErrNotFound (wrapped) for
// a missing key.
func GetJSON(tx Tx, key []byte, v any) error {
	b, err := tx.Get(key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %q: %w", key, err)
	}
	return nil
}

// SetJSON stores v, encoded as JSON, at key.
func SetJSON(tx Tx, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return tx.Set(key, b)
}

// NextSeq increments the counter at key and returns its new value; the first
// call returns start. Domain packages take ids from it inside the Update that
// writes the record, so an id is never handed out twice.
func NextSeq(tx Tx, key []byte, start uint64) (uint64, error) {
	b, err := tx.Get(key)
	var next uint64
	switch {
	case err == nil && len(b) == 8:
		next = beUint64(b) + 1
	case err == nil:
		return 0, fmt.Errorf("sequence %q: corrupt value", key)
	case errors.Is(err, ErrNotFound):
		next = start
	default:
		return 0, err
	}
	return next, tx.Set(key, NewKeyRaw().Uint(next))
}

// NewKeyRaw returns an empty key, for values built from key parts.
func NewKeyRaw() Key { return Key{} }

func beUint64(b []byte) uint64 {
	return ReadKey(b).Uint()
}
