package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
	"github.com/marketplace/marketplace/storage/storagetest"
)

// exec runs sql on a connection of its own to the database at url, and
// returns the first column of the first row, if any, as text.
func exec(tb testing.TB, url, sql string, args ...any) string {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var first string
	if rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		if len(vals) > 0 {
			first = fmt.Sprint(vals[0])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return first
}

func mustUpdate(tb testing.TB, st storage.Store, fn func(storage.Tx) error) {
	tb.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

func mustGet(tb testing.TB, st storage.Store, key string) string {
	tb.Helper()
	var v []byte
	err := st.View(context.Background(), func(tx storage.Tx) (err error) {
		v, err = tx.Get([]byte(key))
		return err
	})
	if err != nil {
		tb.Fatalf("Get(%q): %v", key, err)
	}
	return string(v)
}

func TestOpen_StoresOpeningTogetherCreateTheTablesOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const n = 8
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(context.Background(), url, postgres.Options{})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d of %d started together: %v", i, n, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	if got := exec(t, url, "SELECT count(*) FROM kv_meta"); got != "1" {
		t.Fatalf("kv_meta holds %s rows; want the one layout version", got)
	}
	mustUpdate(t, stores[0], func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
	if got := mustGet(t, stores[n-1], "k"); got != "v" {
		t.Fatalf("another store read %q; want v", got)
	}

	// The same holds for a sequence that several stores use first at once.
	ids := make(chan uint64, n)
	for _, st := range stores {
		wg.Go(func() {
			q, err := st.Sequence("new")
			if err == nil {
				var id uint64
				id, err = q.Next(context.Background())
				ids <- id
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(ids)
	got := slices.Sorted(func(yield func(uint64) bool) {
		for id := range ids {
			yield(id)
		}
	})
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("first ids of a sequence created by %d stores at once: %v; want %v", n, got, want)
	}
}

func TestOpen_ANewerLayoutIsRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	_ = open(t, url)
	exec(t, url, "UPDATE kv_meta SET value = value + 1 WHERE name = 'layout'")
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err == nil {
		st.Close()
		t.Fatal("Open accepted a database with a newer layout")
	}
	if !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("Open: %v; want it to say the layout is newer", err)
	}
}

func TestOpen_ALayoutOneDatabaseGainsThePointIndexAndKeepsItsKeys(t *testing.T) {
	url := pgtest.NewDatabase(t)
	// The tables as the first layout made them.
	exec(t, url, "CREATE TABLE kv_meta (name text PRIMARY KEY, value bigint NOT NULL)")
	exec(t, url, "CREATE TABLE kv (k bytea PRIMARY KEY, v bytea NOT NULL)")
	exec(t, url, "INSERT INTO kv_meta VALUES ('layout', 1)")
	exec(t, url, "INSERT INTO kv VALUES ('old'::bytea, 'kept'::bytea)")

	st := open(t, url)
	if got := mustGet(t, st, "old"); got != "kept" {
		t.Fatalf("a key written before the upgrade reads %q; want kept", got)
	}
	if got := exec(t, url, "SELECT value FROM kv_meta WHERE name = 'layout'"); got != "2" {
		t.Fatalf("layout version after Open: %s; want 2", got)
	}
	if got := exec(t, url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'kv_k_hash'"); !strings.Contains(got, "USING hash (k)") {
		t.Fatalf("kv_k_hash after the upgrade: %q; want a hash index on k", got)
	}
	// A second Open finds the layout current and changes nothing.
	_ = open(t, url)
	if got := exec(t, url, "SELECT count(*) FROM pg_indexes WHERE tablename = 'kv'"); got != "2" {
		t.Fatalf("indexes on kv after two opens: %s; want the primary key and kv_k_hash", got)
	}
}

// Every Update here reads a key that does not exist, right beside the keys
// that the others append, and writes one key of its own: the pattern of an
// ask (a blacklist entry that is not there, an index that grows at its
// end). None of them depends on another, so none should have to run again.
func TestUpdate_ReadingAMissingKeyDoesNotConflictWithWritersOfItsNeighbours(t *testing.T) {
	testNeighbourWriters(t, func(tx storage.Tx, last int64, writer int) error {
		if _, err := tx.Get(fmt.Appendf(nil, "log/%08d/missing/%d", last, writer)); !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("missing key: %v", err)
		}
		return nil
	})
}

// A prefetch of many keys is one statement (selectValues): its lookups
// must go through the point index as single reads do.
func TestUpdate_PrefetchingMissingKeysDoesNotConflictWithWritersOfTheirNeighbours(t *testing.T) {
	testNeighbourWriters(t, func(tx storage.Tx, last int64, writer int) error {
		var keys [][]byte
		for i := range 8 {
			keys = append(keys, fmt.Appendf(nil, "log/%08d/missing/%d/%d", last, writer, i))
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.Get(k); !errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("missing key %s: %v", k, err)
			}
		}
		return nil
	})
}

// testNeighbourWriters runs Updates that each read with read around the
// end of a log that every one of them appends to, and checks that almost
// none of them conflicted.
func testNeighbourWriters(t *testing.T, read func(tx storage.Tx, last int64, writer int) error) {
	st := open(t, pgtest.NewDatabase(t))
	mustUpdate(t, st, func(tx storage.Tx) error {
		for i := range 2000 {
			if err := tx.Set(fmt.Appendf(nil, "log/%08d", i), []byte("x")); err != nil {
				return err
			}
		}
		return nil
	})
	const writers, rounds = 4, 25
	var next atomic.Int64
	next.Store(2000)
	var wg sync.WaitGroup
	before := st.Conflicts()
	for w := range writers {
		wg.Go(func() {
			for range rounds {
				err := st.Update(context.Background(), func(tx storage.Tx) error {
					if err := read(tx, next.Load(), w); err != nil {
						return err
					}
					return tx.Set(fmt.Appendf(nil, "log/%08d", next.Add(1)), []byte("x"))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// A few may still share a hash bucket by chance; on the btree alone
	// most of them conflicted.
	if got := st.Conflicts() - before; got > writers*rounds/10 {
		t.Fatalf("%d of %d Updates ran again; want almost none", got, writers*rounds)
	}
}

func TestUpdate_SerializationFailureIsRunAgainAndLosesNothing(t *testing.T) {
	st := open(t, pgtest.NewDatabase(t))
	counter := []byte("counter")
	// Both Updates read the counter before either writes it: one of them
	// cannot serialize and must run again.
	var read sync.WaitGroup
	read.Add(2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			first := true
			err := st.Update(context.Background(), func(tx storage.Tx) error {
				_, err := storagetest.Increment(tx, counter)
				if first {
					first = false
					read.Done()
					read.Wait()
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var n uint64
	if err := st.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get(counter)
		n = keycodec.Read(v).Uint()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("counter = %d after two increments; want 2", n)
	}
	if st.Conflicts() == 0 {
		t.Fatal("Conflicts() = 0; want the retried attempt counted")
	}
}

func TestUpdate_ConflictOutlastingTheRetriesIsErrConflictWithItsSQLSTATE(t *testing.T) {
	st := open(t, pgtest.NewDatabase(t))
	key := []byte("hot")
	attempts := 0
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		attempts++
		if _, err := storagetest.Increment(tx, key); err != nil {
			return err
		}
		// Another writer commits the key between this one's read and its
		// commit, every time.
		return st.Update(context.Background(), func(tx storage.Tx) error {
			_, err := storagetest.Increment(tx, key)
			return err
		})
	})
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Update = %v; want ErrConflict", err)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || (pe.Code != "40001" && pe.Code != "40P01") {
		t.Fatalf("Update = %v; want the SQLSTATE reachable with errors.As", err)
	}
	if attempts < 2 || uint64(attempts) > st.Conflicts() {
		t.Fatalf("%d attempts, %d conflicts counted; want several attempts, each counted", attempts, st.Conflicts())
	}
}

// TestKeyOverTheCap_SetIsRefusedWhileGetAndDeleteFindNothing: a key longer
// than MaxKeySize cannot be stored, so Set refuses it with an error that
// names the cap, and a read of one (an id no one created, sent by a
// client) is a miss like any other, never an error that becomes a 500.
func TestKeyOverTheCap_SetIsRefusedWhileGetAndDeleteFindNothing(t *testing.T) {
	st := open(t, pgtest.NewDatabase(t))
	// Random bytes do not compress, so the index entry is as long as the
	// key.
	longest := make([]byte, postgres.MaxKeySize)
	for i := range longest {
		longest[i] = byte(rand.Uint32())
	}
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set(longest, []byte("v")) })
	if got := mustGet(t, st, string(longest)); got != "v" {
		t.Fatalf("a key of %d bytes read back as %q", len(longest), got)
	}

	tooLong := append(bytes.Clone(longest), 'x')
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		if err := tx.Set([]byte("before"), []byte("v")); err != nil {
			return err
		}
		if _, err := tx.Get(tooLong); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get of a key over the cap: %v; want ErrNotFound", err)
		}
		if err := storage.Prefetch(tx, tooLong, []byte("before")); err != nil {
			t.Errorf("Prefetch of a key over the cap: %v", err)
		}
		if _, err := tx.Get(tooLong); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get of a key over the cap after its Prefetch: %v; want ErrNotFound", err)
		}
		if err := tx.Delete(tooLong); err != nil {
			t.Errorf("Delete of a key over the cap: %v; want nil, as for any missing key", err)
		}
		return tx.Set(tooLong, []byte("v"))
	})
	if !errors.Is(err, postgres.ErrKeyTooLong) {
		t.Fatalf("Set of a key of %d bytes: %v; want ErrKeyTooLong", len(tooLong), err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(postgres.MaxKeySize)) {
		t.Errorf("the error %q does not say what the cap is", err)
	}
	if got := exec(t, urlOf(t, st), "SELECT count(*) FROM kv"); got != "1" {
		t.Fatalf("%s keys stored; want only the first one (the refused Update committed nothing)", got)
	}
	for _, n := range []int{postgres.MaxKeySize + 1, 60000, 1 << 20} {
		key := bytes.Repeat([]byte("9"), n)
		if _, err := st.GetOne(context.Background(), key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("GetOne of a key of %d bytes: %v; want ErrNotFound", n, err)
		}
	}
}

// urlOf returns the database URL a store of the tests was opened on.
func urlOf(tb testing.TB, st *postgres.Store) string {
	tb.Helper()
	url, ok := urls.Load(st)
	if !ok {
		tb.Fatal("store not opened by open")
	}
	return url.(string)
}

func TestOutage_UnavailableWhileTheServerIsDownAndBackOnceItStarts(t *testing.T) {
	srv := pgtest.Start(t)
	st := open(t, srv.NewDatabase(t))
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("before")) })
	q, err := st.Sequence("ids")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(context.Background()); err != nil {
		t.Fatal(err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Update", func() error {
			return st.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("during")) })
		}},
		{"View", func() error {
			return st.View(ctx, func(tx storage.Tx) error { _, err := tx.Get([]byte("k")); return err })
		}},
		{"Next", func() error { _, err := q.Next(ctx); return err }},
		{"GetOne", func() error { _, err := storage.GetOne(ctx, st, []byte("k")); return err }},
	} {
		start := time.Now()
		err := c.call()
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s while the server is down: %v; want ErrUnavailable", c.name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v to fail; want it to fail fast", c.name, d)
		}
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// The pool reconnects by itself.
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("after")) })
	if got := mustGet(t, st, "k"); got != "after" {
		t.Fatalf("k = %q after the restart; want after", got)
	}
	if got, err := storage.GetOne(ctx, st, []byte("k")); err != nil || string(got) != "after" {
		t.Fatalf("GetOne(k) after the restart = %q, %v; want after", got, err)
	}
	if id, err := q.Next(ctx); err != nil || id <= 1 {
		t.Fatalf("Next after the restart = %d, %v; want more than 1", id, err)
	}
}

func TestUpdate_CanceledContextCancelsTheStatementInTheDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st := open(t, url)
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("old")) })

	// Another session holds the row, so the Update's commit waits in the
	// database until it is canceled.
	bg := context.Background()
	holder, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(bg)
	lock, err := holder.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(bg, "UPDATE kv SET v = 'held' WHERE k = 'k'"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		done <- st.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("new")) })
	}()
	waiting := func() string {
		return exec(t, url, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
	}
	deadline := time.Now().Add(10 * time.Second)
	for waiting() != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the Update never waited for the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Update = %v; want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Update still running 5s after its context was canceled")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Update returned %v after the cancel; want promptly", d)
	}
	// The statement stopped in the database, not only in the client.
	if got := waiting(); got != "0" {
		t.Fatalf("%s sessions still wait for the lock after the cancel", got)
	}
	if err := lock.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, st, "k"); got != "held" {
		t.Fatalf("k = %q; want the holder's value, the canceled Update having committed nothing", got)
	}
}

// cutProxy forwards connections to a server until it is armed: the next
// message from the client then reaches the server, but no answer comes
// back, and the connection is cut.
type cutProxy struct {
	l      net.Listener
	target string
	armed  atomic.Bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l, target: target}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(client)
		}
	}()
	return p
}

func (p *cutProxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	var cut atomic.Bool
	go func() {
		// The server hung up (as it does after a cancel request): so does
		// the proxy.
		defer client.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 && !cut.Load() {
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 && p.armed.CompareAndSwap(true, false) {
			cut.Store(true)
			_, _ = server.Write(buf[:n])
			// Let the server act on it, then cut both sides.
			time.Sleep(300 * time.Millisecond)
			client.Close()
			server.Close()
			return
		}
		if n > 0 {
			if _, err := server.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	client.Close()
	server.Close()
}

func TestUpdate_CommitWhoseAnswerIsLostIsUnavailableAndUnknown(t *testing.T) {
	url := pgtest.NewDatabase(t)
	_, rest, _ := strings.Cut(url, "@")
	host, dbAndQuery, _ := strings.Cut(rest, "/")
	p := newCutProxy(t, host)
	viaProxy := "postgres://postgres@" + p.l.Addr().String() + "/" + dbAndQuery
	// One connection, so that the statements of the Update below are
	// already prepared and its commit goes out as one message.
	st, err := postgres.Open(context.Background(), viaProxy, postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	write := func(v string) func(storage.Tx) error {
		return func(tx storage.Tx) error {
			if _, err := tx.Get([]byte("k")); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if v == "lost" {
				p.armed.Store(true)
			}
			return tx.Set([]byte("k"), []byte(v))
		}
	}
	mustUpdate(t, st, write("first"))

	err = st.Update(context.Background(), write("lost"))
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, postgres.ErrCommitUnknown) {
		t.Fatalf("Update whose commit answer was lost = %v; want ErrUnavailable and ErrCommitUnknown", err)
	}
	// Here the commit went through: only reading tells.
	if got := exec(t, url, "SELECT convert_from(v, 'UTF8') FROM kv WHERE k = 'k'"); got != "lost" {
		t.Fatalf("k = %q in the database; want lost (the commit reached it)", got)
	}
}

func TestSequence_UniqueAcrossTwoStoresOnOneDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	const workers, each = 8, 200
	ids := make(chan uint64, 2*workers*each)
	var wg sync.WaitGroup
	for _, st := range []*postgres.Store{a, b} {
		for range workers {
			wg.Go(func() {
				q, err := st.Sequence("shared")
				if err != nil {
					t.Error(err)
					return
				}
				last := uint64(0)
				for range each {
					id, err := q.Next(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					if id <= last {
						t.Errorf("id %d after %d in one goroutine", id, last)
					}
					last = id
					ids <- id
				}
			})
		}
	}
	wg.Wait()
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 2*workers*each {
		t.Fatalf("%d ids; want %d", len(seen), 2*workers*each)
	}

	// An Advance through one store holds for the other.
	qa, _ := a.Sequence("shared")
	qb, _ := b.Sequence("shared")
	if err := qa.Advance(context.Background(), 1_000_000); err != nil {
		t.Fatal(err)
	}
	if id, err := qb.Next(context.Background()); err != nil || id <= 1_000_000 {
		t.Fatalf("Next on the other store after Advance(1000000) = %d, %v", id, err)
	}
}

func TestURL_OpensTheDatabaseAndTheStoreIsSharedByProcesses(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st, err := postgres.URL(url).Open(context.Background())
	if err != nil {
		t.Fatalf("URL.Open: %v", err)
	}
	defer st.Close()
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
	if got := mustGet(t, st, "k"); got != "v" {
		t.Fatalf("Get = %q, want v", got)
	}
	if !storage.IsShared(st) {
		t.Error("a PostgreSQL store does not declare itself shared; engines on it would not poll for other servers' writes")
	}
}

func TestReads_HoldingEveryReadConnectionLeaveUpdatesTheirOwn(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 2, ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("v")) })

	// More readers than read connections, each holding its connection
	// until released: long reads, as a busy search would be.
	release := make(chan struct{})
	holding := make(chan struct{}, 4)
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_ = st.View(context.Background(), func(tx storage.Tx) error {
				if _, err := tx.Get([]byte("k")); err != nil {
					return err
				}
				holding <- struct{}{}
				<-release
				return nil
			})
		}()
	}
	<-holding
	<-holding
	defer func() { close(release); readers.Wait() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 4 {
		err := st.Update(ctx, func(tx storage.Tx) error { return tx.Set(fmt.Appendf(nil, "w%d", i), []byte("v")) })
		if err != nil {
			t.Fatalf("Update %d while every read connection is held: %v; want it committed on a connection of its own", i, err)
		}
	}
}

func TestRead_StoppedByTheServersStatementTimeoutIsADeadline(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st, err := postgres.Open(context.Background(), url, postgres.Options{ReadTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("v")) })

	// Another session locks the table: a read of it waits for the lock
	// until the server's statement_timeout stops it.
	bg := context.Background()
	holder, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(bg)
	lock, err := holder.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(bg) }()
	if _, err := lock.Exec(bg, "LOCK TABLE kv IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	err = st.View(ctx, func(tx storage.Tx) error {
		_, err := tx.Get([]byte("k"))
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "statement timeout of 200ms") {
		t.Fatalf("View of a locked table = %v; want the statement timeout, as context.DeadlineExceeded", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the caller's own deadline ran out: the server's bound did not stop the read")
	}
	_, err = st.GetOne(ctx, []byte("k"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetOne of a locked table = %v; want context.DeadlineExceeded", err)
	}
}
