package refimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/refimport"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

func zipRecords(prefix string, n int) []refimport.Record {
	out := make([]refimport.Record, n)
	for i := range out {
		out[i] = refimport.Record{Kind: "zip_code", Data: json.RawMessage(fmt.Sprintf(
			`{"zip_code": "%s%06d", "country_id": "AR", "state_id": "AR-C", "city_id": "TUxBQ0lUQ1BhbGVybW8"}`, prefix, i))}
	}
	return out
}

// referenceDocument is recs as the engine's import format.
func referenceDocument(recs []refimport.Record) marketplace.ReferenceDocument {
	doc := marketplace.ReferenceDocument{Records: make([]marketplace.ReferenceRecord, len(recs))}
	for i, r := range recs {
		doc.Records[i] = marketplace.ReferenceRecord(r)
	}
	return doc
}

// smallBatches makes every import of the test take the batched path with
// batches of a few records.
func smallBatches(t *testing.T) { refimport.SmallBatches(t, 300) }

// oneRecordBatches makes every import of the test take the batched path with
// one record per batch.
func oneRecordBatches(t *testing.T) { refimport.SmallBatches(t, 1) }

// importerOn returns an importer that writes through st, over the reference
// services of m0.
func importerOn(st storage.Store, m0 *marketplace.Marketplace) *refimport.Importer {
	return refimport.New(st, nil, m0.Geo, m0.Fees, m0.Catalog)
}

func newEngine(t *testing.T, st storage.Store) *marketplace.Marketplace {
	t.Helper()
	m, err := marketplace.New(st, marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// journalLeft reports the keys of the import journal still stored.
func journalLeft(t *testing.T, st storage.Store) int {
	t.Helper()
	n := 0
	err := st.View(context.Background(), func(tx storage.Tx) error {
		for _, p := range refimport.JournalPrefixes() {
			it := tx.Iterate(storage.Prefix(p))
			for ; it.Valid(); it.Next() {
				n++
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportReference_BatchedImportWritesEveryRecordAndLeavesNoJournal(t *testing.T) {
	smallBatches(t)
	st := memory.New()
	m := newEngine(t, st)
	ctx := context.Background()
	recs := []refimport.Record{
		{Kind: "state", Data: json.RawMessage(`{"id": "AR-ZZ", "name": "Test state", "country_id": "AR"}`)},
		{Kind: "city", Data: json.RawMessage(`{"id": "TESTCITY", "name": "Test city", "state_id": "AR-ZZ"}`)},
		{Kind: "zip_code", Data: json.RawMessage(`{"zip_code": "T0001", "country_id": "AR", "state_id": "AR-ZZ", "city_id": "TESTCITY"}`)},
	}
	recs = append(recs, zipRecords("Z", 20)...)
	res, err := m.ImportReference(ctx, referenceDocument(recs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 23 || res.Imported["zip_code"] != 21 || res.Imported["state"] != 1 || res.Imported["city"] != 1 {
		t.Fatalf("result %+v", res)
	}
	z, err := m.Geo.ZipCode(ctx, "AR", "T0001")
	if err != nil || z.City.Name != "Test city" {
		t.Fatalf("zip code of a later batch that refers to an earlier one: %+v %v", z, err)
	}
	if _, err := m.Geo.ZipCode(ctx, "AR", "Z000019"); err != nil {
		t.Fatalf("last record: %v", err)
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left after a completed import", n)
	}
}

func TestImportReference_FailedBatchedImportRestoresEveryValueItReplaced(t *testing.T) {
	smallBatches(t)
	st := memory.New()
	m := newEngine(t, st)
	ctx := context.Background()
	before, err := m.Geo.Currency(ctx, "ARS")
	if err != nil {
		t.Fatal(err)
	}
	recs := []refimport.Record{{Kind: "currency", Data: json.RawMessage(`{"id": "ARS", "description": "Changed", "symbol": "X", "decimal_places": 0}`)}}
	recs = append(recs, zipRecords("Z", 20)...)
	recs = append(recs, refimport.Record{Kind: "zip_code", Data: json.RawMessage(`{"zip_code": "bad!", "country_id": "AR", "state_id": "AR-C", "city_id": "TUxBQ0lUQ1BhbGVybW8"}`)})
	_, err = m.ImportReference(ctx, referenceDocument(recs))
	if !errs.Is(err, errs.Invalid) || !strings.HasPrefix(errs.As(err).Message, "Record 21 (zip_code): ") {
		t.Fatalf("err = %v; want the bad record named", err)
	}
	after, err := m.Geo.Currency(ctx, "ARS")
	if err != nil || after != before {
		t.Fatalf("ARS after a failed import = %+v %v; want %+v", after, err, before)
	}
	if _, err := m.Geo.ZipCode(ctx, "AR", "Z000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("zip code of a committed batch survived the failed import: %v", err)
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left after a rollback", n)
	}
	// A shipped record that the failed import touched is still the shipped
	// one: a later import marks it as imported again only when it succeeds.
	if _, err := m.ImportReference(ctx, referenceDocument(zipRecords("Y", 3))); err != nil {
		t.Fatalf("import after a rollback: %v", err)
	}
}

// crashingStore fails every Update after the first allowed ones, as a
// process that dies in the middle of an import.
type crashingStore struct {
	storage.Store
	allowed int
}

func (s *crashingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.allowed <= 0 {
		return errors.New("crashed")
	}
	s.allowed--
	return s.Store.Update(ctx, fn)
}

func TestImportReference_ImportInterruptedByACrashIsUndoneOnTheFirstOpenAfterItsLeaseRanOut(t *testing.T) {
	smallBatches(t)
	refimport.WithLease(t, 0)
	st := memory.New()
	m0 := newEngine(t, st)
	crashing := &crashingStore{Store: st}
	im := importerOn(crashing, m0)
	// The pending mark, the journal cleanup and three batches commit; then
	// the process dies.
	crashing.allowed = 5
	if _, err := im.Import(context.Background(), refimport.Document{Records: zipRecords("Z", 20)}); err == nil {
		t.Fatal("import through a crashing store succeeded")
	}
	if journalLeft(t, st) == 0 {
		t.Fatal("the crash left no journal: the test does not reproduce a crash")
	}
	reopened := newEngine(t, st)
	if _, err := reopened.Geo.ZipCode(context.Background(), "AR", "Z000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("zip code of the interrupted import is there after open: %v", err)
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left after recovery", n)
	}
}

// bigProduct returns a product record of about 450 KB, stored twice (record
// and rendered view), below Badger's value-log threshold so that it counts
// whole against the transaction limit: a few dozen exceed it.
func bigProduct(i int) refimport.Record {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id": "MLA9900%04d", "domain_id": "MLA-CELLPHONES", "name": "Big %d", "attributes": [`, i, i)
	long := strings.Repeat("x", 1000)
	for a := 0; a < 450; a++ {
		if a > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": "A%d", "name": "Attribute %d", "value_name": "%s"}`, a, a, long)
	}
	b.WriteString(`]}`)
	return refimport.Record{Kind: "product", Data: json.RawMessage(b.String())}
}

func TestImportReference_ImportLargerThanABadgerTransactionIsWrittenInBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("imports some 6 MB into Badger")
	}
	st, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := newEngine(t, st)
	ctx := context.Background()
	var recs []refimport.Record
	for i := 0; i < 14; i++ {
		recs = append(recs, bigProduct(i))
	}
	if err := refimport.ImportInOneTransaction(ctx, importerOn(st, m), recs); !errors.Is(err, storage.ErrTooBig) {
		t.Fatalf("one transaction of the whole document: %v; want ErrTooBig (the test needs a bigger document)", err)
	}
	res, err := m.ImportReference(ctx, referenceDocument(recs))
	if err != nil {
		t.Fatalf("import of %d big products: %v", len(recs), err)
	}
	if res.Total != 14 {
		t.Fatalf("result %+v", res)
	}
	if _, err := m.Catalog.Product(ctx, "MLA99000013"); err != nil {
		t.Fatalf("last product: %v", err)
	}

	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left", n)
	}
}

func TestImportReference_CrashUndoesOnlyThePendingImportNotAnEarlierCompletedOne(t *testing.T) {
	oneRecordBatches(t)
	refimport.WithLease(t, 0)
	st := memory.New()
	m0 := newEngine(t, st)
	crashing := &crashingStore{Store: st}
	im := importerOn(crashing, m0)
	ctx := context.Background()

	// Import A commits (pending mark, 5 batches, commit) and dies while
	// cleaning its journal up.
	crashing.allowed = 7
	if _, err := im.Import(ctx, refimport.Document{Records: zipRecords("A", 5)}); err != nil {
		t.Fatalf("import A: %v", err)
	}
	// Import B dies after two batches.
	crashing.allowed = 3
	if _, err := im.Import(ctx, refimport.Document{Records: zipRecords("B", 5)}); err == nil {
		t.Fatal("import B through a crashing store succeeded")
	}

	reopened := newEngine(t, st)
	if _, err := reopened.Geo.ZipCode(ctx, "AR", "A000004"); err != nil {
		t.Fatalf("completed import A was undone: %v", err)
	}
	if _, err := reopened.Geo.ZipCode(ctx, "AR", "B000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("interrupted import B is there: %v", err)
	}
	// The next batched import removes the journal A left.
	if _, err := reopened.ImportReference(ctx, referenceDocument(zipRecords("C", 2))); err != nil {
		t.Fatal(err)
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left", n)
	}
}

// pausingStore holds its n-th Update (counted from 1) until release is
// closed, and says so on paused: an importer in another process, caught
// between two batches.
type pausingStore struct {
	storage.Store
	n               int
	paused, release chan struct{}
	calls           int
}

func newPausingStore(st storage.Store, n int) *pausingStore {
	return &pausingStore{Store: st, n: n, paused: make(chan struct{}), release: make(chan struct{})}
}

func (s *pausingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	s.calls++
	if s.calls == s.n {
		close(s.paused)
		<-s.release
	}
	return s.Store.Update(ctx, fn)
}

// pauseImport starts a batched import of recs through a pausingStore on st
// that stops before its third batch, and waits for the pause. The import's
// outcome arrives on the returned channel once release is closed.
func pauseImport(t *testing.T, st storage.Store, m0 *marketplace.Marketplace, recs []refimport.Record) (*pausingStore, <-chan error) {
	t.Helper()
	// The pending mark, the journal cleanup, two batches, then the third.
	pausing := newPausingStore(st, 5)
	done := make(chan error, 1)
	go func() {
		_, err := importerOn(pausing, m0).Import(context.Background(), refimport.Document{Records: recs})
		done <- err
	}()
	select {
	case <-pausing.paused:
	case err := <-done:
		t.Fatalf("the import ended before its pause: %v", err)
	}
	return pausing, done
}

func TestImportReference_ImportUnderWayInAnotherProcessIsLeftAloneByAnEngineThatOpens(t *testing.T) {
	oneRecordBatches(t)
	st := memory.New()
	m0 := newEngine(t, st)
	ctx := context.Background()
	pausing, done := pauseImport(t, st, m0, zipRecords("L", 5))

	// A server that starts on the same database meanwhile.
	other := newEngine(t, st)
	if _, err := other.Geo.ZipCode(ctx, "AR", "L000001"); err != nil {
		t.Fatalf("the batches written so far were undone by an engine that opened: %v", err)
	}
	_, err := other.ImportReference(ctx, referenceDocument(zipRecords("M", 2)))
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("a second batched import during the first: %v; want a conflict", err)
	}

	close(pausing.release)
	if err := <-done; err != nil {
		t.Fatalf("the import under way: %v", err)
	}
	for i := range 5 {
		if _, err := other.Geo.ZipCode(ctx, "AR", fmt.Sprintf("L%06d", i)); err != nil {
			t.Fatalf("record %d of the finished import: %v", i, err)
		}
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left", n)
	}
}

func TestImportReference_ImporterStalledPastItsLeaseIsUndoneByAnotherEngineAndFails(t *testing.T) {
	oneRecordBatches(t)
	refimport.WithLease(t, 50*time.Millisecond)
	st := memory.New()
	m0 := newEngine(t, st)
	ctx := context.Background()
	pausing, done := pauseImport(t, st, m0, zipRecords("S", 5))

	time.Sleep(2 * refimport.Lease())
	other := newEngine(t, st)
	if _, err := other.Geo.ZipCode(ctx, "AR", "S000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("the stalled import's first batch is still there: %v", err)
	}

	close(pausing.release)
	if err := <-done; !errors.Is(err, refimport.ErrLeaseLost) {
		t.Fatalf("the stalled importer went on: %v; want ErrLeaseLost", err)
	}
	for i := range 5 {
		if _, err := other.Geo.ZipCode(ctx, "AR", fmt.Sprintf("S%06d", i)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("record %d of the undone import: %v", i, err)
		}
	}
	if n := journalLeft(t, st); n != 0 {
		t.Fatalf("%d journal keys left", n)
	}
}

func TestStart_UndoesAnImportCutShortByACrashOnceItsLeaseRunsOut(t *testing.T) {
	smallBatches(t)
	refimport.WithLease(t, 200*time.Millisecond)
	st := memory.New()
	m0 := newEngine(t, st)
	crashing := &crashingStore{Store: st, allowed: 5}
	if _, err := importerOn(crashing, m0).Import(context.Background(), refimport.Document{Records: zipRecords("W", 20)}); err == nil {
		t.Fatal("import through a crashing store succeeded")
	}

	// A restart at once: the lease still runs, so this could be another
	// process's import, and the engine leaves it.
	m := newEngine(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := m.Geo.ZipCode(ctx, "AR", "W000000"); err != nil {
		t.Fatalf("undone before its lease ran out: %v", err)
	}
	started := make(chan error, 1)
	go func() { started <- m.Start(ctx) }()
	for deadline := time.Now().Add(10 * refimport.Lease()); journalLeft(t, st) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background work did not undo the import after its lease ran out")
		}
	}
	if _, err := m.Geo.ZipCode(ctx, "AR", "W000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("zip code of the interrupted import: %v", err)
	}
	cancel()
	<-started
}
