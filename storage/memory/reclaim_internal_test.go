package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/storage"
)

var ctx = context.Background()

func set(t *testing.T, s *Store, key, value string) {
	t.Helper()
	if err := s.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte(key), []byte(value)) }); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, s *Store, key string) {
	t.Helper()
	if err := s.Update(ctx, func(tx storage.Tx) error { return tx.Delete([]byte(key)) }); err != nil {
		t.Fatal(err)
	}
}

// versions counts the versions the store keeps of key: 0 when the key has
// left the tree.
func versions(s *Store, key string) int {
	sl, ok := s.index.Get(probeString(key))
	if !ok {
		return 0
	}
	n := 1
	for v := sl.older; v != nil; v = v.older {
		n++
	}
	return n
}

// holdView opens a View, reads once so that it is under way, and keeps it
// open until the returned function is called; that function returns what
// the View read of key at the end.
func holdView(t *testing.T, s *Store, key string) (closeView func() string) {
	t.Helper()
	release, read := make(chan struct{}), make(chan string, 1)
	started, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		_ = s.View(ctx, func(tx storage.Tx) error {
			close(started)
			<-release
			v, err := tx.Get([]byte(key))
			if errors.Is(err, storage.ErrNotFound) {
				read <- "<missing>"
				return nil
			}
			read <- string(v)
			return nil
		})
	}()
	<-started
	return func() string {
		close(release)
		v := <-read
		// The View lets its snapshot go only when it returns.
		<-ended
		return v
	}
}

func TestOverwrittenVersionsAreDroppedWhenNoViewIsOpen(t *testing.T) {
	s := New()
	for i := range 100 {
		set(t, s, "k", fmt.Sprint(i))
	}
	if n := versions(s, "k"); n != 1 {
		t.Fatalf("after 100 overwrites with no View open, %d versions are kept; want 1", n)
	}
}

func TestDeletedKeyLeavesTheTreeWhenNoViewIsOpen(t *testing.T) {
	s := New()
	for i := range 50 {
		set(t, s, fmt.Sprintf("k%03d", i), "v")
	}
	for i := range 50 {
		del(t, s, fmt.Sprintf("k%03d", i))
	}
	if n := s.index.Len(); n != 0 {
		t.Fatalf("the tree holds %d keys after every key was deleted; want 0", n)
	}
}

func TestOpenViewKeepsTheVersionItReadsUntilItCloses(t *testing.T) {
	s := New()
	set(t, s, "k", "old")
	closeView := holdView(t, s, "k")
	set(t, s, "k", "new")
	set(t, s, "k", "newer")
	if n := versions(s, "k"); n < 2 {
		t.Fatalf("with a View open from before the overwrites, %d versions are kept; want the View's too", n)
	}
	if got := closeView(); got != "old" {
		t.Fatalf("the View read %q after two later commits; want %q", got, "old")
	}
	set(t, s, "other", "x") // the next commit drops what waited for the View
	if n := versions(s, "k"); n != 1 {
		t.Fatalf("after the View closed and another Update, %d versions of k are kept; want 1", n)
	}
}

func TestDeletedKeyStaysForAnOpenViewAndLeavesAfterIt(t *testing.T) {
	s := New()
	set(t, s, "k", "v")
	closeView := holdView(t, s, "k")
	del(t, s, "k")
	if versions(s, "k") == 0 {
		t.Fatal("a key that an open View can still read left the tree")
	}
	if got := closeView(); got != "v" {
		t.Fatalf("the View read %q after the key was deleted; want %q", got, "v")
	}
	set(t, s, "other", "x")
	if n := versions(s, "k"); n != 0 {
		t.Fatalf("a deleted key no View can read keeps %d versions; want it gone", n)
	}
}

func TestFailedUpdateLeavesTheTreeAsItWas(t *testing.T) {
	s := New()
	set(t, s, "kept", "v1")
	err := s.Update(ctx, func(tx storage.Tx) error {
		for _, k := range []string{"kept", "new", "gone"} {
			if err := tx.Set([]byte(k), []byte("x")); err != nil {
				return err
			}
		}
		if err := tx.Delete([]byte("gone")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("kept")); err != nil {
			return err
		}
		return errors.New("refused")
	})
	if err == nil {
		t.Fatal("the Update returned nil")
	}
	if n := s.index.Len(); n != 1 {
		t.Fatalf("the tree holds %d keys after a failed Update; want 1", n)
	}
	if n := versions(s, "kept"); n != 1 {
		t.Fatalf("kept has %d versions after a failed Update; want 1", n)
	}
}

func TestKeyCreatedAndDeletedInOneUpdateLeavesNothing(t *testing.T) {
	s := New()
	err := s.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Set([]byte("k"), []byte("v")); err != nil {
			return err
		}
		return tx.Delete([]byte("k"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.index.Len(); n != 0 {
		t.Fatalf("the tree holds %d keys; want 0", n)
	}
}

func TestSearchHintsAreBounded(t *testing.T) {
	s := New()
	for i := range maxHints + 10 {
		set(t, s, fmt.Sprintf("ns%d", i), "v")
	}
	if n := len(s.hints); n > maxHints {
		t.Fatalf("%d search hints kept; want at most %d", n, maxHints)
	}
}
