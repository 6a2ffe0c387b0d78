package stubs_test

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/stubs"
)

const overrideX = `{"request":{"urlPath":"/x"},"response":{"status":503},"marketplace":{"override":true}}`

// answersAsOverride checks that s, just made, takes /x before the route
// does: HasOverride is what the HTTP adapter asks before every emulated
// request.
func answersAsOverride(t *testing.T, s *stubs.Service) {
	t.Helper()
	if !s.HasOverride() {
		t.Fatal("a server started over a kept override stub says there is none: routes answer instead")
	}
	a, ok, err := s.Answer(context.Background(), get("/x"), true, nil)
	if err != nil || !ok || a.Status != 503 {
		t.Fatalf("answer = %+v %v %v, want the override's 503", a, ok, err)
	}
}

func TestAnswer_AStoredOverrideAnswersFromTheFirstRequestAfterARestart(t *testing.T) {
	st := teststore.New(t)
	mustCreate(t, stubs.New(st), overrideX)
	// The server starts again over the same store (on PostgreSQL, another
	// server starts beside it).
	answersAsOverride(t, stubs.New(st))
}

func TestAnswer_AnOverrideKeptOnBadgerAnswersFromTheFirstRequestAfterReopening(t *testing.T) {
	dir := t.TempDir()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, stubs.New(st), overrideX)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	answersAsOverride(t, stubs.New(st))
}

func TestAnswer_AServerThatFindsNoOverrideSaysSoAfterItsFirstRead(t *testing.T) {
	st := teststore.New(t)
	mustCreate(t, stubs.New(st), `{"request":{"urlPath":"/x"},"response":{"status":200}}`)
	s := stubs.New(st)
	if _, ok, err := s.Answer(context.Background(), get("/x"), true, nil); ok || err != nil {
		t.Fatalf("an ordinary stub answered as an override: %v %v", ok, err)
	}
	if s.HasOverride() {
		t.Fatal("still an override assumed after the mappings were read: every emulated request pays a read")
	}
}

func TestAnswer_AServerWhoseFirstRequestsAreItsOwnRoutesStillSettlesTheOverride(t *testing.T) {
	st := teststore.New(t)
	mustCreate(t, stubs.New(st), `{"request":{"urlPath":"/x"},"response":{"status":200}}`)
	s := stubs.New(st)
	// A load balancer's probes come first.
	if _, ok, err := s.Answer(context.Background(), get("/health"), true, nil); ok || err != nil {
		t.Fatalf("a stub answered /health: %v %v", ok, err)
	}
	if s.HasOverride() {
		t.Fatal("an override still assumed: every emulated request pays a read until one that is not the server's own arrives")
	}
}
