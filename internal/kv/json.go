package kv

import (
	"encoding/json"
	"fmt"

	"github.com/marketplace/marketplace/storage"
)

// GetJSON reads the value at key into v. It returns storage.ErrNotFound
// (wrapped) for a missing key.
func GetJSON(tx storage.Tx, key []byte, v any) error {
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
func SetJSON(tx storage.Tx, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return tx.Set(key, b)
}
