package proptest

import (
	"fmt"
	"slices"
)

// StockModel is the reference model of the stock of user products: a
// version and the quantity of each store, per user product. It is written
// from the specification's rules, not from the engine:
//
//   - "Stock version": each user product stock has an integer version,
//     returned in x-version by the stock read; a replacement must send the
//     version it read, and a mismatch is rejected with 409 (Errors, "Stock
//     and item operations": 409 Version mismatch).
//   - "Versioning" 2: optimistic concurrency; a stale value is refused
//     with 409, and a refused write changes nothing (docs/spec-decisions.md,
//     errors change nothing).
//   - "Multi-origin items and stock" rule 5: the sent quantity is assigned
//     to the store (also when it holds 0).
//
// Where the specification is open, the model follows the choices of
// docs/stock.md ("Stock rules"): a store left out of a PUT keeps its
// quantity, a listed store the user product did not have is added, a
// publication starts at version 1, and every accepted PUT moves the
// version by exactly one, also when no quantity changes.
type StockModel struct {
	products map[string]*productStock
}

type productStock struct {
	version int64
	stores  []string // in the order first stocked
	qty     map[string]int64
}

// NewStockModel returns an empty model.
func NewStockModel() *StockModel { return &StockModel{products: map[string]*productStock{}} }

// Publish records a user product published with quantity[i] units in
// stores[i], at version 1.
func (m *StockModel) Publish(userProduct string, stores []string, quantity []int64) {
	p := &productStock{version: 1, qty: map[string]int64{}}
	p.set(stores, quantity)
	m.products[userProduct] = p
}

func (p *productStock) set(stores []string, quantity []int64) {
	for i, s := range stores {
		if _, ok := p.qty[s]; !ok {
			p.stores = append(p.stores, s)
		}
		p.qty[s] = quantity[i]
	}
}

// Version returns the current version of a user product (0 when unknown).
func (m *StockModel) Version(userProduct string) int64 {
	if p := m.products[userProduct]; p != nil {
		return p.version
	}
	return 0
}

// Quantities returns the quantity of each store of a user product, by
// store id.
func (m *StockModel) Quantities(userProduct string) map[string]int64 {
	p := m.products[userProduct]
	if p == nil {
		return nil
	}
	out := make(map[string]int64, len(p.qty))
	for k, v := range p.qty {
		out[k] = v
	}
	return out
}

// Stores returns the stores of a user product, in the order they were
// first stocked.
func (m *StockModel) Stores(userProduct string) []string {
	if p := m.products[userProduct]; p != nil {
		return slices.Clone(p.stores)
	}
	return nil
}

// StockOutcome is what the model expects of a stock PUT.
type StockOutcome struct {
	// Status is 200 or 409.
	Status int
	// Message is the specification's message of a refusal ("Version
	// mismatch"), "" on success.
	Message string
	// Version is the version after the write: the new one on 200, the
	// unchanged current one on 409.
	Version int64
}

// Put applies a stock PUT of a known user product that sends version and
// sets quantity[i] units in stores[i] (stores of the seller that are stock
// locations: the model checks the version rules, not the store rules).
func (m *StockModel) Put(userProduct string, version int64, stores []string, quantity []int64) StockOutcome {
	p := m.products[userProduct]
	if p == nil || version != p.version {
		cur := int64(0)
		if p != nil {
			cur = p.version
		}
		return StockOutcome{Status: 409, Message: "Version mismatch", Version: cur}
	}
	p.set(stores, quantity)
	p.version++
	return StockOutcome{Status: 200, Version: p.version}
}

// Check compares what the engine answers for a user product's stock (its
// version and the quantity of each store, by store id) with the model,
// and describes the first difference.
func (m *StockModel) Check(userProduct string, version int64, quantities map[string]int64) error {
	if want := m.Version(userProduct); version != want {
		return fmt.Errorf("stock of %s: version %d, want %d", userProduct, version, want)
	}
	want := m.Quantities(userProduct)
	same := len(quantities) == len(want)
	for s, q := range want {
		if got, ok := quantities[s]; !ok || got != q {
			same = false
		}
	}
	if !same {
		return fmt.Errorf("stock of %s: %v, want %v", userProduct, quantities, want)
	}
	return nil
}

// quantity is the units of a user product in all its stores.
func (p *productStock) quantity() int64 {
	var n int64
	for _, q := range p.qty {
		n += q
	}
	return n
}

// move adds delta units (negative: taken) to a store of a known user
// product, as a sale and its cancellation do: the version moves by one.
func (m *StockModel) move(userProduct, store string, delta int64) {
	p := m.products[userProduct]
	if _, ok := p.qty[store]; !ok {
		p.stores = append(p.stores, store)
	}
	p.qty[store] += delta
	p.version++
}
