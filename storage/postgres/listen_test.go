package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/pgproxy"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

// eventually fails the test unless cond holds within a generous deadline:
// the deadline catches a change that never arrives, and says nothing of
// how fast one arrives.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// received reports whether ch holds a value, taking it.
func received(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// listening subscribes to topic on st and waits until its listener
// listens, taking the wake-up that follows a LISTEN made after the
// subscription.
func listening(tb testing.TB, st *postgres.Store, topic string) <-chan struct{} {
	tb.Helper()
	ch, cancel := st.Subscribe(topic)
	tb.Cleanup(cancel)
	eventually(tb, "the listener's first LISTEN", func() bool { return postgres.Listens(st) > 0 })
	received(ch)
	return ch
}

func announce(tb testing.TB, st storage.Store, key string, topics ...string) {
	tb.Helper()
	mustUpdate(tb, st, func(tx storage.Tx) error {
		for _, topic := range topics {
			storage.Announce(tx, topic)
		}
		if key == "" {
			return nil
		}
		return tx.Set([]byte(key), []byte("v"))
	})
}

func TestChanges_ACommitThatAnnouncesATopicWakesItsSubscribersInEveryStoreOnTheDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	onB := listening(t, b, "stubs")
	otherOnB := listening(t, b, "faults")
	onA := listening(t, a, "stubs")

	announce(t, a, "k", "stubs")
	eventually(t, "the announcement on the other store", func() bool { return received(onB) })
	eventually(t, "the announcement on the announcing store", func() bool { return received(onA) })
	if received(otherOnB) {
		t.Fatal("a subscriber of another topic was woken")
	}
	if got := mustGet(t, b, "k"); got != "v" {
		t.Fatalf("the write of the announcing Update: %q", got)
	}
}

func TestChanges_AnUpdateThatDoesNotCommitAnnouncesNothing(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	failed, later := listening(t, b, "failed"), listening(t, b, "later")

	refused := errors.New("refused")
	err := a.Update(context.Background(), func(tx storage.Tx) error {
		storage.Announce(tx, "failed")
		if err := tx.Set([]byte("k"), []byte("v")); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Update: %v", err)
	}
	// Notifications arrive in commit order: once the later one is in,
	// the failed one would have been too.
	announce(t, a, "", "later")
	eventually(t, "the later announcement", func() bool { return received(later) })
	if received(failed) {
		t.Fatal("the Update that returned an error announced its topic")
	}
}

func TestChanges_AnUpdateThatOnlyAnnouncesCommitsItsAnnouncement(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	ch := listening(t, b, "reset")
	announce(t, a, "", "reset")
	eventually(t, "the announcement", func() bool { return received(ch) })
}

func TestChanges_AnnouncingCostsNoRoundTripOfItsOwn(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	p, proxied := throughProxy(t, dbURL)
	st := open(t, proxied)
	count := func(topics ...string) uint64 {
		before := p.RoundTrips()
		announce(t, st, "k", topics...)
		return p.RoundTrips() - before
	}
	// The first of each prepares its statements on the connection.
	count()
	count("a")
	plain, announcing := count(), count("a", "b")
	if announcing != plain {
		t.Fatalf("an Update that announces two topics makes %d round trips; one that does not, %d", announcing, plain)
	}
}

func TestChanges_AnIdleListenerSendsOneStatementPerSafetyPoll(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	p, proxied := throughProxy(t, dbURL)
	st := open(t, proxied)
	listening(t, st, "clock")
	listening(t, st, "stubs")
	polls, trips := postgres.SafetyPolls(st), p.RoundTrips()
	const n = 3
	eventually(t, "three safety polls", func() bool { return postgres.SafetyPolls(st) >= polls+n })
	// The count is read as the last poll's answer arrives: a poll more
	// may have been sent since.
	if got := p.RoundTrips() - trips; got > n+1 {
		t.Fatalf("%d round trips over %d safety polls of an idle store; want at most one each", got, n)
	}
	// The wait that ends by its deadline leaves the connection usable.
	if got := postgres.Listens(st); got != 1 {
		t.Fatalf("%d LISTENs over the safety polls; want the first only", got)
	}
}

func TestChanges_ALostListeningConnectionIsOpenedAgainAndAChangeMadeMeanwhileIsSeen(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	ch := listening(t, b, "clock")
	pid := postgres.ListenerPID(b)

	reconnecting, resume := make(chan struct{}, 1), make(chan struct{})
	postgres.BeforeListen(b, func() {
		select {
		case reconnecting <- struct{}{}:
		default:
		}
		<-resume
	})
	exec(t, url, "SELECT pg_terminate_backend($1)", int64(pid))
	<-reconnecting
	announce(t, a, "clock-key", "clock")
	// Nothing listened on b's side when the change committed.
	if received(ch) {
		t.Fatal("a notification reached a store whose connection was down")
	}
	close(resume)
	eventually(t, "the wake-up after the listener reconnected", func() bool { return received(ch) })
	if postgres.Listens(b) != 2 {
		t.Fatalf("%d LISTENs; want 2 (the first and the one after the loss)", postgres.Listens(b))
	}
	if postgres.ListenerPID(b) == pid {
		t.Fatal("the listener kept the terminated connection")
	}
	announce(t, a, "", "clock")
	eventually(t, "a change after the reconnection", func() bool { return received(ch) })
}

// throughProxy returns dbURL with its host replaced by a counting proxy's.
func throughProxy(tb testing.TB, dbURL string) (*pgproxy.Proxy, string) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := pgproxy.Start(u.Host)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	return p, u.String()
}

func TestChanges_TheListenerFollowsAFailoverThroughAMultiHostURL(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	first, err := pgproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := pgproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	// As a URL of a primary and its replica: the first host is tried
	// first, the second when the first cannot be reached.
	multi := strings.Replace(dbURL, u.Host, first.Addr()+","+second.Addr(), 1)
	b := open(t, multi)
	ch := listening(t, b, "clock")
	if second.RoundTrips() != 0 {
		t.Fatal("the second host was used while the first answered")
	}
	first.Close() // the primary is gone
	announce(t, open(t, dbURL), "", "clock")
	eventually(t, "a wake-up after the listener moved to the second host", func() bool { return received(ch) })
	eventually(t, "the second LISTEN", func() bool { return postgres.Listens(b) == 2 })
	if second.RoundTrips() == 0 {
		t.Fatal("the listener did not move to the second host")
	}
	announce(t, open(t, dbURL), "", "clock")
	eventually(t, "a change after the move", func() bool { return received(ch) })
}

// BenchmarkAnnounce measures what announcing costs concurrent Updates of
// different keys: PostgreSQL takes a lock at the commit of a transaction
// that notifies, so such commits follow one another.
func BenchmarkAnnounce(b *testing.B) {
	st := open(b, pgtest.NewDatabase(b))
	for _, announcing := range []bool{false, true} {
		name := "plain"
		if announcing {
			name = "announcing"
		}
		b.Run(name, func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := []byte(fmt.Sprintf("bench/%s/%d", name, n.Add(1)))
					err := st.Update(context.Background(), func(tx storage.Tx) error {
						if announcing {
							storage.Announce(tx, "bench")
						}
						return tx.Set(key, key)
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
