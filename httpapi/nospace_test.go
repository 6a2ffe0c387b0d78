package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// fullDiskStore is a store whose disk can be made full: while full is set,
// every Update and every new id is refused with storage.ErrNoSpace, as the
// Badger backend does when free space falls below its margin. Views go on.
type fullDiskStore struct {
	storage.Store
	full atomic.Bool
}

func (s *fullDiskStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.full.Load() {
		return storage.ErrNoSpace
	}
	return s.Store.Update(ctx, fn)
}

func (s *fullDiskStore) Sequence(name string) (storage.Sequence, error) {
	q, err := s.Store.Sequence(name)
	if err != nil {
		return nil, err
	}
	return &fullDiskSequence{Sequence: q, store: s}, nil
}

type fullDiskSequence struct {
	storage.Sequence
	store *fullDiskStore
}

func (q *fullDiskSequence) Next(ctx context.Context) (uint64, error) {
	if q.store.full.Load() {
		return 0, storage.ErrNoSpace
	}
	return q.Sequence.Next(ctx)
}

// faultWorld is a server on a store that a test makes fail, with a question
// asked and a multi-origin item published while it still works.
type faultWorld struct {
	ts     *testServer
	w      *qWorld
	log    *errorLog
	asked  int64
	seller user
	stores []string
	up     string
}

func newFaultWorld(t *testing.T, st storage.Store) faultWorld {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	log := &errorLog{}
	ts := &testServer{t: t, m: m, clock: clk, handler: httpapi.New(m, checked(t, httpapi.Config{
		OperatorToken: testOperatorToken, ManualClock: clk, Logger: slog.New(log)}))}
	w := &qWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA")}
	w.item = w.mustItem(w.seller.ID)
	f := faultWorld{ts: ts, w: w, log: log, asked: w.mustAsk(w.buyer, w.item, "Does it come with a case?")}
	f.seller, f.stores = ts.mustSeller(1)
	_, f.up = ts.mustMultiItem(f.seller.Token, f.stores[0], 2)
	return f
}

// noSpaceBody is the whole answer to a write refused for want of disk space.
const noSpaceBody = `{"message":"Not enough disk space to store the change","error":"insufficient_storage","status":507,"cause":[]}` + "\n"

func TestWriteError_WriteRefusedForDiskSpaceIs507WithTheExactBodyAndReadsGoOn(t *testing.T) {
	is := is.New(t)
	st := &fullDiskStore{Store: memory.New()}
	f := newFaultWorld(t, st)
	ts, w, log, asked, seller, stores, up := f.ts, f.w, f.log, f.asked, f.seller, f.stores, f.up

	st.full.Store(true)
	for _, c := range []struct {
		name, method, path, token string
		body                      any
		headers                   []string
	}{
		// The domain wraps the storage error (an Update, or a new id).
		{"Ask", "POST", "/questions", w.buyer.Token, map[string]any{"text": "And a strap?", "item_id": w.item}, nil},
		{"Answer", "POST", "/answers", w.seller.Token, map[string]any{"question_id": asked, "text": "Yes"}, nil},
		{"PutStock", "PUT", "/user-products/" + up + "/stock/type/seller_warehouse", seller.Token,
			map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": 7}}}, []string{"x-version", "1"}},
		{"CreateUser", "POST", "/operator/users", testOperatorToken, map[string]any{
			"nickname": "FULL_DISK", "site_id": "MLA", "first_name": "A", "last_name": "B", "tags": []string{}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			res := ts.do(c.method, c.path, c.token, c.body, c.headers...)
			is.Equal(res.Status, http.StatusInsufficientStorage) // a refused write is a 507
			is.Equal(string(res.Raw), noSpaceBody)               // the exact body
		})
	}
	is.Equal(log.take(), []string(nil)) // a full disk is not logged as an internal error

	res := ts.do("GET", fmt.Sprintf("/questions/%d", asked), w.buyer.Token, nil)
	is.Equal(res.Status, http.StatusOK) // reads are served while the disk is full
	res = ts.do("GET", "/users/me", seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)

	st.full.Store(false)
	w.mustAsk(w.buyer, w.item, "And a strap?") // writes are taken again once space returns
}
