package stock_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
)

// stockModel is the plain model of one user product: its version and the
// quantity of each store, in the order stores were first given.
type stockModel struct {
	item    string
	version int64
	stores  []string
	qty     map[string]int64
}

// stockMachine drives publication, stock reads and stock PUTs (fresh, stale
// and missing versions, foreign, unknown and untagged stores) against
// stockModel.
type stockMachine struct {
	e        *env
	seller   int64
	stores   []string
	untagged string
	foreign  string
	ups      map[string]*stockModel
	upIDs    []string
}

func newStockMachine(t *rapid.T, e *env) *stockMachine {
	seller, stores := e.mustSeller(3)
	_, otherStores := e.mustSeller(1)
	return &stockMachine{e: e, seller: seller, stores: stores, untagged: e.mustStore(seller),
		foreign: otherStores[0], ups: map[string]*stockModel{}}
}

// drawLocations draws 1..3 distinct stores of the seller with quantities.
func (m *stockMachine) drawLocations(t *rapid.T) []stock.StockLocation {
	picked := rapid.SliceOfNDistinct(rapid.SampledFrom(m.stores), 1, len(m.stores), rapid.ID[string]).Draw(t, "stores")
	locs := make([]stock.StockLocation, len(picked))
	for i, s := range picked {
		locs[i] = loc(s, rapid.Int64Range(0, 1000).Draw(t, fmt.Sprintf("qty%d", i)))
	}
	return locs
}

func (m *stockMachine) pick(t *rapid.T) (string, *stockModel) {
	if len(m.upIDs) == 0 {
		t.Skip("no user product yet")
	}
	id := rapid.SampledFrom(m.upIDs).Draw(t, "user_product")
	return id, m.ups[id]
}

func apply(md *stockModel, locs []stock.StockLocation) {
	for _, l := range locs {
		if _, ok := md.qty[l.StoreID]; !ok {
			md.stores = append(md.stores, l.StoreID)
		}
		md.qty[l.StoreID] = l.Quantity
	}
}

func (m *stockMachine) Create(t *rapid.T) {
	locs := m.drawLocations(t)
	p, err := m.e.svc.PublishMultiOrigin(ctx, m.seller, multiItem("Producto", "10", locs...))
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	md := &stockModel{item: p.ID, version: 1, qty: map[string]int64{}}
	apply(md, locs)
	m.ups[p.UserProductID] = md
	m.upIDs = append(m.upIDs, p.UserProductID)
}

func (m *stockMachine) Read(t *rapid.T) {
	id, md := m.pick(t)
	m.compare(t, id, md)
}

func (m *stockMachine) PutFresh(t *rapid.T) {
	id, md := m.pick(t)
	locs := m.drawLocations(t)
	out, err := m.e.putStock(m.seller, id, ver(md.version), locs)
	if err != nil {
		t.Fatalf("fresh put: %v", err)
	}
	md.version++
	apply(md, locs)
	if out.Version != md.version {
		t.Fatalf("put answered version %d, model %d", out.Version, md.version)
	}
}

func (m *stockMachine) PutStale(t *rapid.T) {
	id, md := m.pick(t)
	delta := rapid.Int64Range(1, 3).Draw(t, "delta")
	if rapid.Bool().Draw(t, "ahead") {
		delta = -delta
	}
	_, err := m.e.putStock(m.seller, id, ver(md.version-delta), m.drawLocations(t))
	wantErr(t, err, errs.Conflict, "Version mismatch")
}

func (m *stockMachine) PutMissingVersion(t *rapid.T) {
	id, _ := m.pick(t)
	_, err := m.e.putStock(m.seller, id, "", m.drawLocations(t))
	wantErr(t, err, errs.Invalid, "Missing X-Version header")
}

// putWithBadStore inserts bad among valid entries; the whole PUT is refused.
func (m *stockMachine) putWithBadStore(t *rapid.T, bad, msg string) {
	id, md := m.pick(t)
	locs := m.drawLocations(t)
	at := rapid.IntRange(0, len(locs)).Draw(t, "at")
	locs = slices.Insert(locs, at, loc(bad, 1))
	_, err := m.e.putStock(m.seller, id, ver(md.version), locs)
	wantErr(t, err, errs.Invalid, msg)
}

func (m *stockMachine) PutForeignStore(t *rapid.T) {
	m.putWithBadStore(t, m.foreign, "Store does not belong to seller: "+m.foreign)
}

func (m *stockMachine) PutUnknownStore(t *rapid.T) {
	m.putWithBadStore(t, "99999999", "Store not found: 99999999")
}

func (m *stockMachine) PutUntaggedStore(t *rapid.T) {
	m.putWithBadStore(t, m.untagged, "Store is not configured to be a stock location")
}

func (m *stockMachine) compare(t *rapid.T, id string, md *stockModel) {
	st, err := m.e.svc.Stock(ctx, m.seller, id)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	if st.Version != md.version {
		t.Fatalf("%s version = %d, model %d", id, st.Version, md.version)
	}
	if len(st.Locations) != len(md.stores) {
		t.Fatalf("%s has %d locations, model %d", id, len(st.Locations), len(md.stores))
	}
	var sum int64
	for i, l := range st.Locations {
		if l.StoreID != md.stores[i] || l.Quantity != md.qty[l.StoreID] || l.Type != stock.LocationTypeSellerWarehouse {
			t.Fatalf("%s location %d = %+v, model %s:%d", id, i, l, md.stores[i], md.qty[md.stores[i]])
		}
		sum += l.Quantity
	}
	it, err := m.e.svc.Item(ctx, md.item)
	if err != nil || it.AvailableQuantity != sum {
		t.Fatalf("item %s available_quantity = %d (%v), model %d", md.item, it.AvailableQuantity, err, sum)
	}
}

func (m *stockMachine) Check(t *rapid.T) {
	for _, id := range m.upIDs {
		m.compare(t, id, m.ups[id])
	}
}

func wantErr(t *rapid.T, err error, kind errs.Kind, msg string) {
	t.Helper()
	de := errs.As(err)
	if de == nil || de.Kind != kind || de.Message != msg {
		t.Fatalf("err = %v, want %v %q", err, kind, msg)
	}
}

func TestStockStateMachine_QuantitiesAndVersionsFollowTheModel(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		t.Repeat(rapid.StateMachineActions(newStockMachine(t, e)))
	})
}
