package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// downStore is a store whose backend can be made unreachable: while down is
// set, every View, Update and new id fails with storage.ErrUnavailable,
// wrapped with a cause as storage/postgres does when its server is down.
type downStore struct {
	storage.Store
	down atomic.Bool
}

var errConnRefused = fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", storage.ErrUnavailable)

func (s *downStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.down.Load() {
		return errConnRefused
	}
	return s.Store.View(ctx, fn)
}

func (s *downStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.down.Load() {
		return errConnRefused
	}
	return s.Store.Update(ctx, fn)
}

func (s *downStore) Sequence(name string) (storage.Sequence, error) {
	q, err := s.Store.Sequence(name)
	if err != nil {
		return nil, err
	}
	return &downSequence{Sequence: q, store: s}, nil
}

type downSequence struct {
	storage.Sequence
	store *downStore
}

func (q *downSequence) Next(ctx context.Context) (uint64, error) {
	if q.store.down.Load() {
		return 0, errConnRefused
	}
	return q.Sequence.Next(ctx)
}

// unavailableBody is the whole answer to a request that the store could not
// serve because it cannot be reached.
const unavailableBody = `{"message":"The service is temporarily unavailable, try again later","error":"service_unavailable","status":503,"cause":[]}` + "\n"

func TestWriteError_UnreachableStoreIs503WithTheExactBodyAndServesAgainOnceBack(t *testing.T) {
	is := is.New(t)
	st := &downStore{Store: memory.New()}
	f := newFaultWorld(t, st)
	ts, w, log, asked, seller, stores, up := f.ts, f.w, f.log, f.asked, f.seller, f.stores, f.up

	st.down.Store(true)
	for _, c := range []struct {
		name, method, path, token string
		body                      any
		headers                   []string
	}{
		// Writes (an Update, or a new id) and reads (a View), the token
		// check included: a token that cannot be looked up is not a 401.
		{"Ask", "POST", "/questions", w.buyer.Token, map[string]any{"text": "And a strap?", "item_id": w.item}, nil},
		{"Answer", "POST", "/answers", w.seller.Token, map[string]any{"question_id": asked, "text": "Yes"}, nil},
		{"PutStock", "PUT", "/user-products/" + up + "/stock/type/seller_warehouse", seller.Token,
			map[string]any{"locations": []any{map[string]any{"store_id": stores[0], "quantity": 7}}}, []string{"x-version", "1"}},
		{"CreateUser", "POST", "/operator/users", testOperatorToken, map[string]any{
			"nickname": "NO_DATABASE", "site_id": "MLA", "first_name": "A", "last_name": "B", "tags": []string{}}, nil},
		{"GetQuestion", "GET", fmt.Sprintf("/questions/%d", asked), w.buyer.Token, nil, nil},
		{"Me", "GET", "/users/me", seller.Token, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			res := ts.do(c.method, c.path, c.token, c.body, c.headers...)
			is.Equal(res.Status, http.StatusServiceUnavailable) // an unreachable store is a 503
			is.Equal(string(res.Raw), unavailableBody)          // the exact body
		})
	}
	is.Equal(log.take(), []string(nil)) // an outage is not logged as an internal error

	st.down.Store(false)
	w.mustAsk(w.buyer, w.item, "And a strap?") // served again once the store is back
	res := ts.do("GET", "/users/me", seller.Token, nil)
	is.Equal(res.Status, http.StatusOK)
}
