package sales

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// saleMemoSize bounds the sales SaleOfRead keeps decoded.
const saleMemoSize = 1024

// saleMemo keeps the sales SaleOfRead decoded lately with the bytes of
// the records they were decoded from: an order and a shipment read again
// unchanged are not decoded again. The bytes are read in the caller's
// transaction every time, so what is returned is always that
// transaction's; only the decoding is saved. Records of any store may
// meet here: equal bytes decode to equal sales.
var saleMemo = struct {
	sync.Mutex
	m map[int64]memoSale
}{m: map[int64]memoSale{}}

type memoSale struct {
	order, shipment []byte
	sale            Sale
}

// SaleOfRead is SaleOf for callers that read the same sales again and
// again (every message of a conversation reads its order and its
// shipment): the records are read in tx as SaleOf reads them, and decoded
// only when their bytes differ from the last read's. The Sale returned
// may share its slices with other callers': it must not be changed.
// Errors: as SaleOf.
func (s *Service) SaleOfRead(tx storage.Tx, id int64) (Sale, error) {
	ob, err := tx.Get(orderKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return Sale{}, errOrderNotFound()
	}
	if err != nil {
		return Sale{}, errs.Internalf(err, "read order %d", id)
	}
	saleMemo.Lock()
	memo, ok := saleMemo.m[id]
	saleMemo.Unlock()
	if ok && bytes.Equal(memo.order, ob) {
		if memo.sale.Order.Shipping.ID == nil {
			return memo.sale, nil
		}
		sb, err := tx.Get(shipmentKey(*memo.sale.Order.Shipping.ID))
		if err != nil {
			return Sale{}, errs.Internalf(err, "read shipment %d", *memo.sale.Order.Shipping.ID)
		}
		if bytes.Equal(memo.shipment, sb) {
			return memo.sale, nil
		}
	}
	r, err := decodeOrderRecord(ob)
	if err != nil {
		return Sale{}, errs.Internalf(err, "decode order %d", id)
	}
	out := Sale{Order: r.Order, Created: time.UnixMilli(r.CreatedMs)}
	var sb []byte
	if r.Order.Shipping.ID != nil {
		if sb, err = tx.Get(shipmentKey(*r.Order.Shipping.ID)); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return Sale{}, errs.WithCode(errs.NotFound, "shipment_not_found", "Shipment does not exist")
			}
			return Sale{}, errs.Internalf(err, "read shipment %d", *r.Order.Shipping.ID)
		}
		var sh shipmentRecord
		if err := json.Unmarshal(sb, &sh); err != nil {
			return Sale{}, errs.Internalf(err, "decode shipment %d", *r.Order.Shipping.ID)
		}
		out.Shipment = sh.Shipment
	}
	saleMemo.Lock()
	if len(saleMemo.m) >= saleMemoSize {
		for k := range saleMemo.m {
			delete(saleMemo.m, k)
			if len(saleMemo.m) < saleMemoSize/2 {
				break
			}
		}
	}
	saleMemo.m[id] = memoSale{order: ob, shipment: sb, sale: out}
	saleMemo.Unlock()
	return out, nil
}
