package stock

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// LocationTypeSellerWarehouse is the only stock location type of the spec.
const LocationTypeSellerWarehouse = "seller_warehouse"

// StockLocation is one store's entry of a user product's stock.
type StockLocation struct {
	Type          string `json:"type,omitempty"`
	StoreID       string `json:"store_id"`
	NetworkNodeID string `json:"network_node_id"`
	Quantity      int64  `json:"quantity"`

	// noQuantity marks an entry decoded from JSON without a quantity (or
	// with a null one). The spec makes only network_node_id optional when
	// writing; taking an absent quantity as 0 would silently empty a store.
	noQuantity bool
}

// UnmarshalJSON decodes an entry and records whether it carried a quantity.
func (l *StockLocation) UnmarshalJSON(b []byte) error {
	// The fields are spelled out rather than embedded, so that a decoding
	// error names the field as the client wrote it (store_id), not with the
	// embedded type's name in its path.
	var aux struct {
		Type          string `json:"type"`
		StoreID       string `json:"store_id"`
		NetworkNodeID string `json:"network_node_id"`
		Quantity      *int64 `json:"quantity"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*l = StockLocation{Type: aux.Type, StoreID: aux.StoreID, NetworkNodeID: aux.NetworkNodeID}
	if aux.Quantity == nil {
		l.noQuantity = true
	} else {
		l.Quantity = *aux.Quantity
	}
	return nil
}

// checkLocations validates stock entries: at least one, each with a store,
// no store twice, quantities in range. missing is the error for an empty
// list, which differs between publication and the stock PUT.
func checkLocations(locs []StockLocation, missing error) error {
	if len(locs) == 0 {
		return missing
	}
	seen := make(map[string]bool, len(locs))
	for _, l := range locs {
		if strings.TrimSpace(l.StoreID) == "" {
			return errs.Invalidf("Store cannot be null or empty")
		}
		if seen[l.StoreID] {
			return errs.Invalidf("Store listed more than once: %s", l.StoreID)
		}
		seen[l.StoreID] = true
		if l.noQuantity {
			return errs.Invalidf("Quantity is required for store %s", l.StoreID)
		}
		if l.Quantity < 0 || l.Quantity > MaxQuantity {
			return errs.Invalidf("Invalid quantity for store %s: %d. It must be between 0 and %d", l.StoreID, l.Quantity, MaxQuantity)
		}
	}
	return nil
}

// checkStore applies the spec's store rules for seller in tx and returns the
// store.
func checkStore(tx storage.Tx, sellerID int64, storeID string) (accounts.Store, error) {
	st, err := accounts.GetStore(tx, storeID)
	if errs.Is(err, errs.NotFound) {
		return accounts.Store{}, errs.Invalidf("Store not found: %s", storeID)
	}
	if err != nil {
		return accounts.Store{}, err
	}
	if st.OwnerID() != sellerID {
		return accounts.Store{}, errs.Invalidf("Store does not belong to seller: %s", storeID)
	}
	if !st.IsStockLocation() {
		return accounts.Store{}, errs.Invalidf("Store is not configured to be a stock location")
	}
	return st, nil
}

// applyLocations writes the sent quantities into up: a listed store gets the
// sent quantity, a store left out keeps its own, a new store is added. An
// empty network_node_id keeps the known one, or takes the store's.
func applyLocations(tx storage.Tx, up *UserProduct, sellerID int64, locs []StockLocation) error {
	for _, l := range locs {
		st, err := checkStore(tx, sellerID, l.StoreID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(up.Locations, func(x StockLocation) bool { return x.StoreID == l.StoreID })
		if i < 0 {
			up.Locations = append(up.Locations, StockLocation{Type: LocationTypeSellerWarehouse, StoreID: l.StoreID, NetworkNodeID: st.NetworkNodeID})
			i = len(up.Locations) - 1
		}
		if l.NetworkNodeID != "" {
			up.Locations[i].NetworkNodeID = l.NetworkNodeID
		}
		up.Locations[i].Quantity = l.Quantity
	}
	return nil
}
