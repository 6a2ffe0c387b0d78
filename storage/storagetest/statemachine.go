package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/storage"
)

// keyGen draws short keys from a few bytes at the edges of byte order, so
// that prefixes, equal keys and 0x00/0xff bounds come up often.
var keyGen = rapid.Map(
	rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}), 1, 3),
	func(b []byte) string { return string(b) },
)

var valueGen = rapid.StringN(0, 8, 16)

// boundGen draws a range bound: nil (no bound), empty, or a key.
var boundGen = rapid.OneOf(
	rapid.Just[[]byte](nil),
	rapid.Just([]byte{}),
	rapid.Map(keyGen, func(k string) []byte { return []byte(k) }),
)

// op is one write of a batch, applied both to the store and to the model.
type op struct {
	del   bool
	key   string
	value string
}

func (o op) String() string {
	if o.del {
		return fmt.Sprintf("delete %q", o.key)
	}
	return fmt.Sprintf("set %q=%q", o.key, o.value)
}

var opGen = rapid.Custom(func(t *rapid.T) op {
	return op{
		del:   rapid.Bool().Draw(t, "delete"),
		key:   keyGen.Draw(t, "key"),
		value: valueGen.Draw(t, "value"),
	}
})

// machine compares a store with a plain sorted map, and the Views it holds
// open with the map as it was when each started.
type machine struct {
	st    storage.Store
	model map[string]string
	snaps []*snapshot
}

func (m *machine) apply(t *rapid.T, ops []op, fail bool) {
	err := m.st.Update(context.Background(), func(tx storage.Tx) error {
		for _, o := range ops {
			var err error
			if o.del {
				err = tx.Delete([]byte(o.key))
			} else {
				err = tx.Set([]byte(o.key), []byte(o.value))
			}
			if err != nil {
				return err
			}
		}
		if fail {
			return errBoom
		}
		return nil
	})
	if fail {
		if !errors.Is(err, errBoom) {
			t.Fatalf("failed Update returned %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	for _, o := range ops {
		if o.del {
			delete(m.model, o.key)
		} else {
			m.model[o.key] = o.value
		}
	}
}

func (m *machine) Set(t *rapid.T) {
	m.apply(t, []op{{key: keyGen.Draw(t, "key"), value: valueGen.Draw(t, "value")}}, false)
}

func (m *machine) Delete(t *rapid.T) {
	key := keyGen.Draw(t, "key")
	if len(m.model) > 0 && rapid.Bool().Draw(t, "existing") {
		keys := m.sortedKeys()
		key = rapid.SampledFrom(keys).Draw(t, "existingKey")
	}
	m.apply(t, []op{{del: true, key: key}}, false)
}

func (m *machine) Batch(t *rapid.T) {
	m.apply(t, rapid.SliceOfN(opGen, 1, 8).Draw(t, "ops"), false)
}

func (m *machine) FailedUpdate(t *rapid.T) {
	m.apply(t, rapid.SliceOfN(opGen, 0, 8).Draw(t, "ops"), true)
}

func (m *machine) Get(t *rapid.T) {
	key := keyGen.Draw(t, "key")
	want, ok := m.model[key]
	err := m.st.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get([]byte(key))
		switch {
		case !ok && !errors.Is(err, storage.ErrNotFound):
			t.Fatalf("Get(%q) = %q, %v; want ErrNotFound", key, v, err)
		case ok && (err != nil || string(v) != want):
			t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
}

// scanDraw draws a range (sometimes a prefix's, whose end may be a key
// held) and, sometimes, a key to seek to first.
func scanDraw(t *rapid.T) (storage.Range, []byte) {
	r := storage.Range{
		Start: boundGen.Draw(t, "start"),
		End:   boundGen.Draw(t, "end"),
	}
	if rapid.Bool().Draw(t, "prefixRange") {
		r = storage.Prefix([]byte(keyGen.Draw(t, "prefix")))
	}
	r.Reverse = rapid.Bool().Draw(t, "reverse")
	var seek []byte
	if rapid.Bool().Draw(t, "withSeek") {
		seek = []byte(keyGen.Draw(t, "seek"))
	}
	return r, seek
}

// scanWith reads r in tx, after seeking to seek when it is not nil.
func scanWith(tx storage.Tx, r storage.Range, seek []byte) ([]pair, error) {
	it := tx.Iterate(r)
	defer it.Close()
	if seek != nil {
		it.Seek(seek)
	}
	return collect(it)
}

// expectScan is what scanWith must find in a store holding model.
func expectScan(model map[string]string, r storage.Range, seek []byte) []pair {
	var want []pair
	for _, k := range sortedKeys(model) {
		in := (r.Start == nil || k >= string(r.Start)) && (r.End == nil || k < string(r.End))
		if seek != nil {
			if r.Reverse {
				in = in && k <= string(seek)
			} else {
				in = in && k >= string(seek)
			}
		}
		if in {
			want = append(want, pair{k, model[k]})
		}
	}
	if r.Reverse {
		slices.Reverse(want)
	}
	return want
}

func (m *machine) Scan(t *rapid.T) {
	r, seek := scanDraw(t)
	var got []pair
	err := m.st.View(context.Background(), func(tx storage.Tx) error {
		var err error
		got, err = scanWith(tx, r, seek)
		return err
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	if want := expectScan(m.model, r, seek); !slices.Equal(got, want) {
		t.Fatalf("scan [%q, %q) reverse=%v seek=%q:\n got  %v\n want %v", r.Start, r.End, r.Reverse, seek, got, want)
	}
}

// snapshot is a View held open while the steps after it write, with the
// model as it was when the View started: what it reads must not change.
type snapshot struct {
	model map[string]string
	run   chan func(storage.Tx)
	done  chan error
}

const maxSnapshots = 2

func (m *machine) OpenSnapshot(t *rapid.T) {
	if len(m.snaps) == maxSnapshots {
		t.Skip("enough snapshots open")
	}
	sn := &snapshot{model: maps.Clone(m.model), run: make(chan func(storage.Tx)), done: make(chan error, 1)}
	pinned := make(chan struct{})
	go func() {
		sn.done <- m.st.View(context.Background(), func(tx storage.Tx) error {
			// A first read fixes the snapshot on backends that take it lazily.
			if _, err := tx.Get([]byte{0}); err != nil && !errors.Is(err, storage.ErrNotFound) {
				close(pinned)
				return err
			}
			close(pinned)
			for f := range sn.run {
				f(tx)
			}
			return nil
		})
	}()
	<-pinned
	m.snaps = append(m.snaps, sn)
}

// in runs f in the snapshot's View and waits for it.
func (sn *snapshot) in(f func(storage.Tx)) {
	ran := make(chan struct{})
	sn.run <- func(tx storage.Tx) { f(tx); close(ran) }
	<-ran
}

func (sn *snapshot) close() error {
	close(sn.run)
	return <-sn.done
}

func (m *machine) ReadSnapshot(t *rapid.T) {
	if len(m.snaps) == 0 {
		t.Skip("no snapshot open")
	}
	sn := m.snaps[rapid.IntRange(0, len(m.snaps)-1).Draw(t, "snapshot")]
	r, seek := scanDraw(t)
	var got []pair
	var err error
	sn.in(func(tx storage.Tx) { got, err = scanWith(tx, r, seek) })
	if err != nil {
		t.Fatalf("scan in an open View: %v", err)
	}
	if want := expectScan(sn.model, r, seek); !slices.Equal(got, want) {
		t.Fatalf("scan [%q, %q) reverse=%v seek=%q in a View opened earlier:\n got  %v\n want %v", r.Start, r.End, r.Reverse, seek, got, want)
	}
	key := keyGen.Draw(t, "key")
	var v []byte
	sn.in(func(tx storage.Tx) { v, err = tx.Get([]byte(key)) })
	want, ok := sn.model[key]
	switch {
	case !ok && !errors.Is(err, storage.ErrNotFound):
		t.Fatalf("Get(%q) in a View opened earlier = %q, %v; want ErrNotFound", key, v, err)
	case ok && (err != nil || string(v) != want):
		t.Fatalf("Get(%q) in a View opened earlier = %q, %v; want %q", key, v, err, want)
	}
}

func (m *machine) CloseSnapshot(t *rapid.T) {
	if len(m.snaps) == 0 {
		t.Skip("no snapshot open")
	}
	i := rapid.IntRange(0, len(m.snaps)-1).Draw(t, "snapshot")
	sn := m.snaps[i]
	m.snaps = slices.Delete(m.snaps, i, i+1)
	if err := sn.close(); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func (m *machine) closeSnapshots() {
	for _, sn := range m.snaps {
		_ = sn.close()
	}
	m.snaps = nil
}

func (m *machine) sortedKeys() []string { return sortedKeys(m.model) }

func sortedKeys(model map[string]string) []string {
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}

// Check compares a full scan with the model after every step.
func (m *machine) Check(t *rapid.T) {
	var got []pair
	err := m.st.View(context.Background(), func(tx storage.Tx) (err error) {
		got, err = scanTx(tx, storage.Range{})
		return err
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	want := make([]pair, 0, len(m.model))
	for _, k := range m.sortedKeys() {
		want = append(want, pair{k, m.model[k]})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("full scan:\n got  %v\n want %v", got, want)
	}
}

func (s *suite) testStateMachine(t *testing.T) {
	// One store for every run, emptied at the start of each: opening a
	// durable backend a hundred times would cost more than the checks.
	st := s.store(t)
	rapid.Check(t, func(rt *rapid.T) {
		if err := emptyStore(st); err != nil {
			rt.Fatalf("empty the store: %v", err)
		}
		m := &machine{st: st, model: map[string]string{}}
		defer m.closeSnapshots()
		rt.Repeat(rapid.StateMachineActions(m))
	})
}

// emptyStore deletes every key, in one Update.
func emptyStore(st storage.Store) error {
	return st.Update(context.Background(), func(tx storage.Tx) error {
		var keys [][]byte
		it := tx.Iterate(storage.Range{})
		for ; it.Valid(); it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
		}
		// Deleting with the iterator open is outside the contract.
		it.Close()
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
