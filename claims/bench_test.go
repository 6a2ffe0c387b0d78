package claims_test

// Benchmarks of the claim search on Badger and on PostgreSQL.
//
//	go test -run '^$' -bench 'BenchmarkSearch' ./claims
//	MARKETPLACE_BENCH_CLAIMS=1000000 go test -run '^$' -bench 'BenchmarkSearch' -benchtime 2000x -timeout 1h ./claims
//
// BenchmarkSearch measures a seller's first page of 30 opened claims,
// newest first and oldest first, with 1,000 claims and, when
// MARKETPLACE_BENCH_CLAIMS names a larger number, with that many: a page
// should cost the same at both sizes, since its total is read from the
// counts kept beside the lists and its page from the list. The claims are
// written straight in the key layout (SeedClaims), without the orders
// behind them, so that a million of them take minutes, not hours.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

// benchClaimsVar names the larger number of claims of BenchmarkSearch.
const benchClaimsVar = "MARKETPLACE_BENCH_CLAIMS"

func benchSizes(b *testing.B) []int {
	sizes := []int{1000}
	raw := os.Getenv(benchClaimsVar)
	if raw == "" {
		return sizes
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of claims", benchClaimsVar, raw)
	}
	if n != sizes[0] {
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkSearch: a seller's first page of opened claims as respondent,
// at each size, on each backend. Every size's store is built first, and
// the sizes are then measured in turns, 3 times, so that the machine's
// other work and the stores' own (Badger's compactions after a large
// load) fall on every size alike. Beside the time, it reports what a page
// reads: gets/op (point reads) and keys/op (keys a range walk visited),
// which are the same at every size when the page reads only itself.
func BenchmarkSearch(b *testing.B) {
	for _, backend := range teststore.DurableBackends {
		b.Run(backend, func(b *testing.B) {
			type built struct {
				n      int
				search *claims.Service
				reads  *readCount
				seller int64
				trips  *teststore.RoundTrips
			}
			sizes := benchSizes(b)
			stores := make([]built, len(sizes))
			for i := len(sizes) - 1; i >= 0; i-- {
				st, trips := teststore.OpenDurable(b, backend, 4)
				e := newEnvOn(b, st)
				seller := e.mustUser("SELLER")
				buyers := make([]int64, 10)
				for j := range buyers {
					buyers[j] = e.mustUser("BUYER")
				}
				if err := e.claims.SeedClaims(ctx, seller, buyers, sizes[i], 5000000001, start.AddDate(0, -1, 0)); err != nil {
					b.Fatal(err)
				}
				rc := &readCount{}
				stores[i] = built{n: sizes[i], search: claims.New(countingStore{Store: st, n: rc}, e.clock, e.sales), reads: rc, seller: seller, trips: trips}
			}
			for range 3 {
				for _, st := range stores {
					for _, sort := range []string{"date_created:desc", "date_created:asc"} {
						b.Run(fmt.Sprintf("claims=%d/%s", st.n, sort), func(b *testing.B) {
							v, _ := urlValues(fmt.Sprintf("players.role=respondent&players.user_id=%d&status=opened&sort=%s", st.seller, sort))
							q, err := claims.ParseSearch(v)
							if err != nil {
								b.Fatal(err)
							}
							*st.reads = readCount{}
							n0, ops := st.trips.Load(), 0
							for b.Loop() {
								ops++
								res, err := st.search.Search(ctx, st.seller, q)
								if err != nil {
									b.Fatal(err)
								}
								if res.Paging.Total != st.n || len(res.Data) != 30 {
									b.Fatalf("total %d and %d claims, want %d and 30", res.Paging.Total, len(res.Data), st.n)
								}
							}
							b.ReportMetric(float64(st.reads.gets)/float64(ops), "gets/op")
							b.ReportMetric(float64(st.reads.keys)/float64(ops), "keys/op")
							st.trips.Report(b, n0, ops)
						})
					}
				}
			}
		})
	}
}

// readCount counts what the transactions of a store read.
type readCount struct{ gets, keys int64 }

// countingStore counts the point reads and the keys walked of its
// transactions.
type countingStore struct {
	storage.Store
	n *readCount
}

func (c countingStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	return c.Store.View(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, c.n}) })
}

func (c countingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return c.Store.Update(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, c.n}) })
}

type countingTx struct {
	storage.Tx
	n *readCount
}

func (t countingTx) Get(key []byte) ([]byte, error) {
	t.n.gets++
	return t.Tx.Get(key)
}

// Prefetch hands the keys to the store's own transaction: counting must
// not change what a page costs at network distance.
func (t countingTx) Prefetch(keys [][]byte) error { return storage.Prefetch(t.Tx, keys...) }

func (t countingTx) Iterate(r storage.Range) storage.Iterator {
	return countingIterator{t.Tx.Iterate(r), t.n}
}

type countingIterator struct {
	storage.Iterator
	n *readCount
}

func (it countingIterator) Valid() bool {
	ok := it.Iterator.Valid()
	if ok {
		it.n.keys++
	}
	return ok
}

// TestSearch_ASearchByTheRecordsExaminesAtMostTheBound: a filter only the
// records answer is refused, before reading a claim, when the caller's
// list holds more claims than the bound.
func TestSearch_ASearchByTheRecordsExaminesAtMostTheBound(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser("SELLER"), e.mustUser("BUYER")
	if err := e.claims.SeedClaims(ctx, seller, []int64{buyer}, 30, 5000000001, start.AddDate(0, -1, 0)); err != nil {
		t.Fatal(err)
	}
	defer claims.SetMaxExamined(20)()
	v, _ := urlValues("reason_id=PNR3430")
	q, _ := claims.ParseSearch(v)
	_, err := e.claims.Search(ctx, seller, q)
	wantErr(t, err, errs.Invalid, "", fmt.Sprintf("The search would examine more than 20 claims of user %d: narrow it with range=date_created:after:DATE,before:DATE", seller))
	v, _ = urlValues("status=opened")
	q, _ = claims.ParseSearch(v)
	if res, err := e.claims.Search(ctx, seller, q); err != nil || res.Paging.Total != 30 || len(res.Data) != 30 {
		t.Errorf("a search by the lists: %v, %+v", err, res.Paging)
	}
}
