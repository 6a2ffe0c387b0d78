package schema_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/schema"
)

// backend opens fresh stores of one kind; reopen, for a durable backend,
// opens the data of a closed store again.
type backend struct {
	name   string
	open   func(t *testing.T) storage.Store
	reopen func(t *testing.T, closed storage.Store) storage.Store
}

func openBadger(t *testing.T, dir string) storage.Store {
	t.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var backends = []backend{
	{name: "memory", open: func(t *testing.T) storage.Store {
		st := memory.New()
		t.Cleanup(func() { _ = st.Close() })
		return st
	}},
	{name: "badger",
		open: func(t *testing.T) storage.Store { return openBadger(t, t.TempDir()) },
		reopen: func(t *testing.T, closed storage.Store) storage.Store {
			return openBadger(t, closed.(*badger.Store).Dir())
		}},
}

// everyBackend runs test once per backend, as a subtest named after it.
func everyBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

var ctx = context.Background()

func mustUpdate(t *testing.T, st storage.Store, fn func(storage.Tx) error) {
	t.Helper()
	if err := st.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

// fill writes n records "rec/NNNN" = "v1:N" and n legacy keys "old/NNNN",
// the way an older binary would have left them.
func fill(t *testing.T, st storage.Store, n int) {
	t.Helper()
	mustUpdate(t, st, func(tx storage.Tx) error {
		for i := range n {
			if err := tx.Set(fmt.Appendf(nil, "rec/%04d", i), fmt.Appendf(nil, "v1:%d", i)); err != nil {
				return err
			}
			if err := tx.Set(fmt.Appendf(nil, "old/%04d", i), nil); err != nil {
				return err
			}
		}
		return tx.Set([]byte("marker"), nil)
	})
}

// dump returns every key and value of st outside "sys/", the runner's own.
func dump(t *testing.T, st storage.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if strings.HasPrefix(string(it.Key()), "sys/") {
				continue
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			out[string(it.Key())] = string(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fixture is a list of two migrations over the records of fill: the first
// rewrites every record as "v2:N" and indexes it under "ix/", the second
// deletes the legacy keys and the marker. failAt, when set, makes the first
// migration fail on that record (once per call of arm).
type fixture struct {
	failAt  atomic.Value // string
	started atomic.Int32
}

func (f *fixture) list() []schema.Migration {
	return []schema.Migration{
		{
			Name:  "records in v2 with an index",
			Start: func(context.Context, storage.Store) error { f.started.Add(1); return nil },
			Chunk: schema.Phases(schema.Phase{
				Range: storage.Prefix([]byte("rec/")),
				Each: func(tx storage.Tx, key, value []byte) error {
					if fail, _ := f.failAt.Load().(string); fail == string(key) {
						f.failAt.Store("")
						return errors.New("injected failure")
					}
					n, ok := strings.CutPrefix(string(value), "v1:")
					if !ok {
						return fmt.Errorf("not a v1 record: %q", value)
					}
					if err := tx.Set(key, []byte("v2:"+n)); err != nil {
						return err
					}
					return tx.Set([]byte("ix/"+n), key)
				},
			}),
		},
		{
			Name: "legacy keys deleted",
			Chunk: schema.Phases(
				schema.Phase{
					Range: storage.Prefix([]byte("old/")),
					// The marker is deleted by the next phase only.
					When: func(tx storage.Tx) (bool, error) {
						_, err := tx.Get([]byte("marker"))
						return err == nil, nil
					},
					Each: func(tx storage.Tx, key, _ []byte) error { return tx.Delete(key) },
				},
				schema.Phase{
					Range: schema.KeyRange([]byte("marker")),
					Each:  func(tx storage.Tx, key, _ []byte) error { return tx.Delete(key) },
				},
			),
		},
	}
}

func version(t *testing.T, st storage.Store) (int, bool) {
	t.Helper()
	v, ok, err := schema.Version(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

// migrated is what the fixture's migrations make of fill(n).
func migrated(n int) map[string]string {
	want := map[string]string{}
	for i := range n {
		want[fmt.Sprintf("rec/%04d", i)] = fmt.Sprintf("v2:%d", i)
		want[fmt.Sprintf("ix/%d", i)] = fmt.Sprintf("rec/%04d", i)
	}
	return want
}

func TestMigrate_NewEmptyStoreIsStampedWithTheBinaryVersion(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		var f fixture
		rep, err := schema.Migrate(ctx, st, f.list(), schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Stamped || len(rep.Steps) != 0 || f.started.Load() != 0 {
			t.Fatalf("report %+v, started %d; want stamped without running anything", rep, f.started.Load())
		}
		if v, ok := version(t, st); !ok || v != 2 {
			t.Fatalf("version %d (set %v); want 2", v, ok)
		}
	})
}

func TestMigrate_StoreWithoutVersionRunsEveryMigrationInOrder(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 1234)
		var f fixture
		rep, err := schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if rep.From != 0 || rep.To != 2 || rep.Stamped || len(rep.Steps) != 2 {
			t.Fatalf("report %+v", rep)
		}
		if s := rep.Steps[0]; s.Written != 2*1234 || s.Deleted != 0 || s.Chunks != 13 {
			t.Fatalf("first step %+v; want 2468 keys written in 13 chunks of at most 100 records", s)
		}
		if s := rep.Steps[1]; s.Written != 0 || s.Deleted != 1235 {
			t.Fatalf("second step %+v; want 1235 keys deleted", s)
		}
		if got := dump(t, st); !maps.Equal(got, migrated(1234)) {
			t.Fatalf("store after migration differs from the expected one (%d keys)", len(got))
		}
		if v, _ := version(t, st); v != 2 {
			t.Fatalf("version %d; want 2", v)
		}
		again, err := schema.Migrate(ctx, st, f.list(), schema.Options{})
		if err != nil || len(again.Steps) != 0 || again.From != 2 {
			t.Fatalf("second Migrate: %+v, %v; want nothing to do", again, err)
		}
	})
}

func TestMigrate_StoreNewerThanBinaryIsRefused(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 10)
		var f fixture
		if _, err := schema.Migrate(ctx, st, f.list(), schema.Options{}); err != nil {
			t.Fatal(err)
		}
		before := dump(t, st)
		older := f.list()[:1] // a binary that knows only the first migration
		for _, run := range []func() (schema.Report, error){
			func() (schema.Report, error) { return schema.Migrate(ctx, st, older, schema.Options{}) },
			func() (schema.Report, error) { return schema.Plan(ctx, st, older, schema.Options{}) },
		} {
			_, err := run()
			var tooNew *schema.TooNewError
			if !errors.As(err, &tooNew) || tooNew.Store != 2 || tooNew.Binary != 1 {
				t.Fatalf("err = %v; want a TooNewError for store 2, binary 1", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "version 2") || !strings.Contains(msg, "version 1") {
				t.Fatalf("message %q does not name both versions", msg)
			}
		}
		if v, _ := version(t, st); v != 2 || !maps.Equal(dump(t, st), before) {
			t.Fatal("a refused store was changed")
		}
	})
}

func TestMigrate_FailedChunkResumesAndEqualsAnUninterruptedRun(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 500)
		var f fixture
		f.failAt.Store("rec/0321")
		rep, err := schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 50})
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("err = %v; want the injected failure", err)
		}
		if s := rep.Steps[0]; s.Chunks != 6 {
			t.Fatalf("%d chunks committed before the failure; want 6", s.Chunks)
		}
		if v, _ := version(t, st); v != 0 {
			t.Fatalf("version %d after a failed first migration; want 0", v)
		}
		// The six committed chunks are there, the failed one is not.
		mid := dump(t, st)
		if mid["rec/0299"] != "v2:299" || mid["rec/0300"] != "v1:300" || mid["ix/300"] != "" {
			t.Fatalf("after the failure: rec/0299=%q rec/0300=%q ix/300=%q", mid["rec/0299"], mid["rec/0300"], mid["ix/300"])
		}
		rep, err = schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Steps[0].Resumed || rep.Steps[0].Chunks != 4 || f.started.Load() != 2 {
			t.Fatalf("resumed run %+v, Start called %d times; want a resume of 4 chunks after Start again", rep.Steps[0], f.started.Load())
		}
		if !maps.Equal(dump(t, st), migrated(500)) {
			t.Fatal("a resumed migration differs from an uninterrupted one")
		}
	})
}

// cancellingStore ends a context once commits Updates have committed; its
// backend ignores contexts, as an outside backend may, so that only the
// runner's own checks can stop the migration.
type cancellingStore struct {
	storage.Store
	commits atomic.Int32
	cancel  context.CancelFunc
}

func (s *cancellingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	err := s.Store.Update(context.WithoutCancel(ctx), fn)
	if s.commits.Add(-1) == 0 {
		s.cancel()
	}
	return err
}

func TestMigrate_CancelledContextStopsBetweenChunksAndTheNextRunResumes(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 500)
		var f fixture
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cs := &cancellingStore{Store: st, cancel: cancel}
		cs.commits.Store(5) // the stamp check and four chunks
		rep, err := schema.Migrate(cctx, cs, f.list(), schema.Options{ChunkSize: 50})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want context.Canceled", err)
		}
		if s := rep.Steps[0]; s.Chunks != 4 {
			t.Fatalf("%d chunks committed before ctx ended; want 4", s.Chunks)
		}
		if v, _ := version(t, st); v != 0 {
			t.Fatalf("version %d after a cancelled first migration; want 0", v)
		}
		mid := dump(t, st)
		if mid["rec/0199"] != "v2:199" || mid["rec/0200"] != "v1:200" {
			t.Fatalf("after the cancel: rec/0199=%q rec/0200=%q", mid["rec/0199"], mid["rec/0200"])
		}
		rep, err = schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Steps[0].Resumed || rep.Steps[0].Chunks != 6 {
			t.Fatalf("resumed run %+v; want a resume of the last 6 of 10 chunks", rep.Steps[0])
		}
		if !maps.Equal(dump(t, st), migrated(500)) {
			t.Fatal("a migration resumed after a cancel differs from an uninterrupted one")
		}
	})
}

// closingStore closes the store it wraps once after commits Updates
// have committed: a process that stops in the middle of a migration.
type closingStore struct {
	storage.Store
	commits atomic.Int32
}

func (s *closingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.commits.Add(-1) < 0 {
		_ = s.Store.Close()
	}
	return s.Store.Update(ctx, fn)
}

func TestMigrate_StoreClosedAfterSomeChunksResumesOnReopen(t *testing.T) {
	for _, b := range backends {
		if b.reopen == nil {
			continue // nothing of a memory store outlives its Close
		}
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			fill(t, st, 300)
			var f fixture
			cs := &closingStore{Store: st}
			cs.commits.Store(5) // the stamp check and four chunks
			_, err := schema.Migrate(ctx, cs, f.list(), schema.Options{ChunkSize: 40})
			if !errors.Is(err, storage.ErrClosed) {
				t.Fatalf("err = %v; want the store closed", err)
			}
			st = b.reopen(t, st)
			rep, err := schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 40})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Steps[0].Resumed || rep.Steps[0].Chunks != 4 {
				t.Fatalf("after reopening: %+v; want a resume of the last 4 of 8 chunks", rep.Steps[0])
			}
			if !maps.Equal(dump(t, st), migrated(300)) {
				t.Fatal("a migration resumed after a close differs from an uninterrupted one")
			}
		})
	}
}

func TestPlan_ChangesNothingAndCountsWhatMigrateDoes(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 321)
		var f fixture
		before := dump(t, st)
		plan, err := schema.Plan(ctx, st, f.list(), schema.Options{ChunkSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(dump(t, st), before) || f.started.Load() != 0 {
			t.Fatal("the dry run changed the store or ran a Start")
		}
		if v, ok := version(t, st); ok || v != 0 {
			t.Fatalf("the dry run stamped version %d", v)
		}
		rep, err := schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rep.Steps {
			p, r := plan.Steps[i], rep.Steps[i]
			if p.Written != r.Written || p.Deleted != r.Deleted || p.Chunks != r.Chunks {
				t.Fatalf("migration %d: planned %+v, ran %+v", i+1, p, r)
			}
		}
	})
}

func TestPlan_NewStoreWouldBeStampedAndIsNot(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		var f fixture
		rep, err := schema.Plan(ctx, st, f.list(), schema.Options{})
		if err != nil || !rep.Stamped || len(rep.Steps) != 0 {
			t.Fatalf("plan %+v, %v; want a stamp only", rep, err)
		}
		if _, ok := version(t, st); ok {
			t.Fatal("the dry run stamped the store")
		}
	})
}

func TestPlan_MigrationUnderWayIsCountedFromItsCursor(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		fill(t, st, 200)
		var f fixture
		f.failAt.Store("rec/0150")
		if _, err := schema.Migrate(ctx, st, f.list(), schema.Options{ChunkSize: 50}); err == nil {
			t.Fatal("the injected failure did not stop the migration")
		}
		plan, err := schema.Plan(ctx, st, f.list(), schema.Options{ChunkSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		if s := plan.Steps[0]; !s.Resumed || s.Written != 2*50 {
			t.Fatalf("plan of the migration under way: %+v; want the last 50 records", s)
		}
	})
}

func TestCarryCounters_NextIDFollowsTheLastOldIDAndTheCounterIsGone(t *testing.T) {
	everyBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		counters := []schema.LegacyCounter{
			{Key: []byte("seq/questions"), Sequence: "questions", First: 12000000001},
			{Key: []byte("seq/outbox"), Sequence: "outbox", First: 1},
			{Key: []byte("seq/unused"), Sequence: "unused", First: 1000001},
		}
		mustUpdate(t, st, func(tx storage.Tx) error {
			if err := tx.Set(counters[0].Key, keycodec.Raw().Uint(12000000042)); err != nil {
				return err
			}
			return tx.Set(counters[1].Key, keycodec.Raw().Uint(7))
		})
		list := []schema.Migration{schema.CarryCounters("counters", counters)}
		if _, err := schema.Migrate(ctx, st, list, schema.Options{}); err != nil {
			t.Fatal(err)
		}
		if b.reopen != nil {
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st = b.reopen(t, st)
		}
		for _, want := range []struct {
			seq  string
			next uint64
		}{{"questions", 42 + 1}, {"outbox", 8}, {"unused", 1}} {
			q, err := st.Sequence(want.seq)
			if err != nil {
				t.Fatal(err)
			}
			n, err := q.Next(ctx)
			if err != nil || n != want.next {
				t.Fatalf("sequence %s: next %d, %v; want %d", want.seq, n, err, want.next)
			}
		}
		if got := dump(t, st); len(got) != 0 {
			t.Fatalf("counters left behind: %v", got)
		}
	})
}
