package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"marketplace/storage"
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

// machine compares a store with a plain sorted map.
type machine struct {
	st    storage.Store
	model map[string]string
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

func (m *machine) Scan(t *rapid.T) {
	r := storage.Range{
		Start:   boundGen.Draw(t, "start"),
		End:     boundGen.Draw(t, "end"),
		Reverse: rapid.Bool().Draw(t, "reverse"),
	}
	var seek []byte
	if rapid.Bool().Draw(t, "withSeek") {
		seek = []byte(keyGen.Draw(t, "seek"))
	}
	var got []pair
	err := m.st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(r)
		defer it.Close()
		if seek != nil {
			it.Seek(seek)
		}
		var err error
		got, err = collect(it)
		return err
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	var want []pair
	for _, k := range m.sortedKeys() {
		in := (r.Start == nil || k >= string(r.Start)) && (r.End == nil || k < string(r.End))
		if seek != nil {
			if r.Reverse {
				in = in && k <= string(seek)
			} else {
				in = in && k >= string(seek)
			}
		}
		if in {
			want = append(want, pair{k, m.model[k]})
		}
	}
	if r.Reverse {
		slices.Reverse(want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scan [%q, %q) reverse=%v seek=%q:\n got  %v\n want %v", r.Start, r.End, r.Reverse, seek, got, want)
	}
}

func (m *machine) sortedKeys() []string {
	keys := make([]string, 0, len(m.model))
	for k := range m.model {
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
		rt.Repeat(rapid.StateMachineActions(&machine{st: st, model: map[string]string{}}))
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
