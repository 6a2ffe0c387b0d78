package badger

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/marketplace/marketplace/storage"
)

// fakeDisk is a file system whose free space the test sets, counting the
// readings.
type fakeDisk struct {
	free  int64
	reads int
}

func (d *fakeDisk) guard(margin int64) *spaceGuard {
	g := &spaceGuard{dir: "/data", margin: margin, reserve: func() int64 { return 0 },
		free: func(string) (int64, error) { d.reads++; return d.free, nil }}
	g.read(time.Now())
	return g
}

func TestSpaceGuard_WritesBetweenReadingsAreCountedSoTheMarginIsNeverOverrun(t *testing.T) {
	disk := &fakeDisk{free: 100<<20 + 10<<20}
	g := disk.guard(100 << 20)
	for i := range 10 {
		if err := g.admit(1 << 20); err != nil {
			t.Fatalf("write %d of 1 MiB, with 10 MiB above the margin: %v", i, err)
		}
		g.done(1 << 20)
	}
	// The reading still says 110 MiB free, but 10 MiB went since.
	if err := g.admit(1); !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("write past the margin = %v, want ErrNoSpace", err)
	}
	if disk.reads != 1 {
		t.Fatalf("%d readings of the free space for 11 writes within %v, want 1", disk.reads, spaceRecheck)
	}
}

func TestSpaceGuard_WritesInFlightCountAgainstTheMargin(t *testing.T) {
	disk := &fakeDisk{free: 100<<20 + 3<<20}
	g := disk.guard(100 << 20)
	for range 3 {
		if err := g.admit(1 << 20); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.admit(1); !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("a fourth write beside three unfinished ones = %v, want ErrNoSpace", err)
	}
}

func TestSpaceGuard_FreedSpaceIsSeenWithinTheRecheckInterval(t *testing.T) {
	disk := &fakeDisk{free: 50 << 20}
	g := disk.guard(100 << 20)
	if err := g.admit(1); !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("write with 50 MiB free and a 100 MiB margin = %v, want ErrNoSpace", err)
	}
	disk.free = 1 << 30
	time.Sleep(spaceRecheck)
	if err := g.admit(1 << 20); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
}

func TestSpaceGuard_CompactionReserveIsKeptBesideTheMargin(t *testing.T) {
	disk := &fakeDisk{free: 150 << 20}
	g := disk.guard(100 << 20)
	g.reserve = func() int64 { return 60 << 20 }
	g.read(time.Now())
	if err := g.admit(1); !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("write with 150 MiB free, a 100 MiB margin and 60 MiB for compactions = %v, want ErrNoSpace", err)
	}
}

func TestCompactionReserve_CoversLevelZeroWithTheBaseLevelAndTheLargestDeeperMove(t *testing.T) {
	const mib = 1 << 20
	levels := []badgerdb.LevelInfo{
		{Level: 0, NumTables: 3, Size: 150 * mib},
		{Level: 1},
		{Level: 2},
		{Level: 3},
		{Level: 4, NumTables: 5, Size: 9 * mib, TargetFileSize: 2 * mib, IsBaseLevel: true},
		{Level: 5, NumTables: 20, Size: 90 * mib, TargetFileSize: 4 * mib},
		{Level: 6, NumTables: 100, Size: 900 * mib, TargetFileSize: 8 * mib},
	}
	// Level 0 into the base level: 150 + 9. Deeper: L4 -> L5 at most
	// 9 + 90 whole, estimated 11 × 2 + 2 × 4 = 30; L5 -> L6: 11 × 4 + 2 × 8
	// = 60, the largest.
	if got, want := compactionReserve(levels), int64(150+9+60)*mib; got != want {
		t.Fatalf("reserve = %d MiB, want %d MiB", got/mib, want/mib)
	}
	// A small store: everything below level 0 is in the last level, which
	// is the base level and moves nowhere.
	small := []badgerdb.LevelInfo{{Level: 0, NumTables: 1, Size: 40 * mib}, {Level: 1}, {Level: 2, NumTables: 4, Size: 7 * mib, IsBaseLevel: true}}
	if got := compactionReserve(small); got != 47*mib {
		t.Fatalf("reserve of a small store = %d MiB, want 47", got/mib)
	}
}

func TestTranslate_DiskFullFromBadgerIsErrNoSpace(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("while writing: %w", syscall.ENOSPC),
		// Badger formats some errors with %v.
		fmt.Errorf("while creating table: %v", syscall.ENOSPC),
	} {
		if got := translate(err); !errors.Is(got, storage.ErrNoSpace) {
			t.Errorf("translate(%v) = %v, want ErrNoSpace", err, got)
		}
	}
}

func TestOpen_AFreeSpaceMarginBelowWhatBadgerWritesAheadIsRefused(t *testing.T) {
	_, err := Open(t.TempDir(), Options{FreeSpaceMargin: 40 << 20})
	if err == nil {
		t.Fatal("a 40 MiB margin was accepted")
	}
	st, err := Open(t.TempDir(), Options{FreeSpaceMargin: DefaultFreeSpaceMargin + 1})
	if err != nil {
		t.Fatalf("a margin above the default: %v", err)
	}
	_ = st.Close()
}

func TestUpdate_RefusedForWantOfSpaceCommitsNothingAndViewsGoOn(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	key := []byte("k")
	if err := st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, []byte("before")) }); err != nil {
		t.Fatal(err)
	}
	disk := &fakeDisk{free: DefaultFreeSpaceMargin - 1}
	st.space = disk.guard(DefaultFreeSpaceMargin)

	err = st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, []byte("after")) })
	if !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("Update on a short disk = %v, want ErrNoSpace", err)
	}
	// An Update that writes nothing is no write.
	if err := st.Update(ctx, func(tx storage.Tx) error { _, err := tx.Get(key); return err }); err != nil {
		t.Fatalf("Update that only reads: %v", err)
	}
	var got []byte
	if err := st.View(ctx, func(tx storage.Tx) error { got, err = tx.Get(key); return err }); err != nil {
		t.Fatalf("View on a short disk: %v", err)
	}
	if string(got) != "before" {
		t.Fatalf("value = %q, want the one from before the refusal", got)
	}
}

func TestSequence_ALeaseRefusedForWantOfSpaceIsErrNoSpaceAndCloseStillSucceeds(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	disk := &fakeDisk{free: DefaultFreeSpaceMargin - 1}
	st.space = disk.guard(DefaultFreeSpaceMargin)
	q, err := st.Sequence("ids")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(t.Context()); !errors.Is(err, storage.ErrNoSpace) {
		t.Fatalf("Next needing a lease on a short disk = %v, want ErrNoSpace", err)
	}
	disk.free = 1 << 40
	time.Sleep(spaceRecheck)
	if _, err := q.Next(t.Context()); err != nil {
		t.Fatalf("Next once space returned: %v", err)
	}
	// The unused ids cannot be given back: a gap, not a failed Close.
	disk.free = 0
	time.Sleep(spaceRecheck)
	if err := st.Close(); err != nil {
		t.Fatalf("Close on a short disk: %v", err)
	}
}
