package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/storage"
)

// portableKeySize is the longest key that every backend stores (PostgreSQL's
// cap, the smallest): the domain's keys stay below it.
const portableKeySize = 2048

// testLongKeys checks the two sides of a backend's key limit: keys of
// portableKeySize bytes are stored like any other, and a read of a key
// longer than any backend stores (built from an id that a client made up)
// is a miss, ErrNotFound, through every way of reading, never an error.
func (s *suite) testLongKeys(t *testing.T) {
	st := s.store(t)
	longest := make([]byte, portableKeySize)
	for i := range longest {
		// Bytes that do not compress, so that no backend stores less than
		// the key's length.
		longest[i] = byte(i*131 + i/256*7)
	}
	longest[0] = 'k'
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set(longest, []byte("v")); err != nil {
			t.Fatalf("Set of a key of %d bytes: %v", len(longest), err)
		}
		return tx.Set([]byte("l"), []byte("after"))
	})
	if got := scan(t, st, storage.Prefix([]byte("k"))); len(got) != 1 || got[0].K != string(longest) || got[0].V != "v" {
		t.Fatalf("a key of %d bytes scans back as %v", len(longest), got)
	}

	for _, n := range []int{2049, 65001, 1 << 20} {
		// Beyond PostgreSQL's cap, beyond Badger's, and far beyond both.
		// After the stored key of portableKeySize bytes, before "l".
		tooLong := bytes.Repeat([]byte("9"), n)
		tooLong[0], tooLong[1] = 'k', 0xff
		missing := func(tx storage.Tx, what string) {
			t.Helper()
			if v, err := tx.Get(tooLong); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s: Get of a key of %d bytes = %.20q, %v; want ErrNotFound", what, n, v, err)
			}
		}
		view(t, st, func(tx storage.Tx) error {
			missing(tx, "View")
			if err := storage.Prefetch(tx, tooLong, []byte("l")); err != nil {
				t.Errorf("View: Prefetch of a key of %d bytes: %v", n, err)
			}
			missing(tx, "View, after Prefetch")
			return nil
		})
		update(t, st, func(tx storage.Tx) error {
			missing(tx, "Update")
			if err := storage.Prefetch(tx, tooLong); err != nil {
				t.Errorf("Update: Prefetch of a key of %d bytes: %v", n, err)
			}
			missing(tx, "Update, after Prefetch")
			// The transaction is still usable.
			return tx.Set([]byte("m"), []byte(fmt.Sprint(n)))
		})
		if v, err := storage.GetOne(context.Background(), st, tooLong); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("GetOne of a key of %d bytes = %.20q, %v; want ErrNotFound", n, v, err)
		}
		// Ranges bounded by such a key read what is there.
		equalPairs(t, fmt.Sprintf("Prefix of a key of %d bytes", n), scan(t, st, storage.Prefix(tooLong)), nil)
		if got := scan(t, st, storage.Range{Start: tooLong, End: []byte("m")}); len(got) != 1 || got[0].K != "l" {
			t.Errorf("from a key of %d bytes to m: %v; want l", n, got)
		}
		view(t, st, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Range{Reverse: true})
			defer it.Close()
			it.Seek(tooLong)
			if !it.Valid() || !bytes.Equal(it.Key(), longest) {
				t.Errorf("reverse Seek to a key of %d bytes: valid %v; want the longest stored key", n, it.Valid())
			}
			return nil
		})
	}
}
