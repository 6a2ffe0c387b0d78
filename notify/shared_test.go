package notify_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// sharedEngine is one of several engines on one store, as several servers
// on one database are, started as the server starts them.
func sharedEngine(t *testing.T, st storage.Store, lease time.Duration) *marketplace.Marketplace {
	t.Helper()
	m, err := marketplace.New(st, marketplace.Options{Clock: clock.NewManual(start),
		Notifications: notify.Options{AllowPrivateCallbacks: true, Timeout: 10 * time.Second, Lease: lease}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = m.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
		_ = m.Close()
	})
	return m
}

func TestSharedStore_EachNotificationIsPostedOnceWhicheverServerWroteIt(t *testing.T) {
	st := teststore.New(t)
	a := sharedEngine(t, st, time.Second)
	b := sharedEngine(t, st, time.Second)
	ctx := context.Background()
	recv := newReceiver(t, always(http.StatusOK))
	// Slow answers keep deliveries in flight while every server polls the
	// due index.
	recv.delay = func(int) <-chan struct{} {
		c := make(chan struct{})
		time.AfterFunc(50*time.Millisecond, func() { close(c) })
		return c
	}
	u, err := a.Accounts.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Notify.CreateApplication(ctx, notify.NewApplication{Name: "app", OwnerUserID: u.ID, CallbackURL: recv.URL,
		Topics: []string{notify.TopicQuestions}}); err != nil {
		t.Fatal(err)
	}
	const events = 40
	for i := range events {
		m := a
		if i%2 == 1 {
			m = b
		}
		emit(t, m.Store(), u.ID, fmt.Sprintf("/questions/%d", 12000000001+i), start)
	}
	waitHits(t, recv, events)
	// Long enough for a second POST of any of them to arrive.
	time.Sleep(500 * time.Millisecond)
	seen := map[string]int{}
	for _, h := range recv.got() {
		seen[h.Body.Resource]++
	}
	if len(recv.got()) != events || len(seen) != events {
		t.Fatalf("%d POSTs of %d resources; want each of the %d events POSTed once", len(recv.got()), len(seen), events)
	}
}

func TestSharedStore_ADeadServersDeliveriesAreTakenOverAfterItsLease(t *testing.T) {
	st := teststore.New(t)
	ctx := context.Background()
	// A server that took the delivery lease and died: nobody renews it.
	const lease = 500 * time.Millisecond
	taken := time.Now()
	if _, held, err := kv.AcquireLease(ctx, st, "notify/delivery", "dead-server", taken, lease); err != nil || !held {
		t.Fatalf("take the lease: %v, %v", held, err)
	}
	b := sharedEngine(t, st, lease)
	recv := newReceiver(t, always(http.StatusOK))
	u, err := b.Accounts.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Notify.CreateApplication(ctx, notify.NewApplication{Name: "app", OwnerUserID: u.ID, CallbackURL: recv.URL,
		Topics: []string{notify.TopicQuestions}}); err != nil {
		t.Fatal(err)
	}
	emit(t, st, u.ID, "/questions/12000000001", start)
	hits := waitHits(t, recv, 1)
	if since := time.Since(taken); since < lease {
		t.Fatalf("posted %s after the dead server took its %s lease, while the lease still ran", since, lease)
	}
	if hits[0].Body.Resource != "/questions/12000000001" {
		t.Fatalf("posted %q", hits[0].Body.Resource)
	}
}
