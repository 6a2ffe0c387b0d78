package geo

import (
	"context"
	"encoding/json"

	"marketplace/storage"
)

// LoadBuiltin loads the reference data embedded in the engine into storage,
// once per dataset version.
func (s *Service) LoadBuiltin(ctx context.Context) error { return nil }

// UpsertRecord writes one imported reference record of kind inside tx. It
// returns false when kind is not one of this package's kinds.
func (s *Service) UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error) {
	return false, nil
}
