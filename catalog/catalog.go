// Package catalog holds domains and catalog products: the shared product
// sheets (attributes, pictures, pickers, main features) that listings can
// point to.
package catalog

import "marketplace/storage"

// Service answers domain and product lookups.
type Service struct {
	store storage.Store
}

// New returns the catalog service.
func New(store storage.Store) *Service {
	return &Service{store: store}
}
