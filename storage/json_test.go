package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"marketplace/storage"
	"marketplace/storage/memory"
)

type record struct {
	ID   int64    `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

func TestJSON_RoundTrip(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	key := storage.NewKey("rec").Int(1)
	in := record{ID: 1, Name: "ñandú", Tags: []string{"a", "b"}}
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error { return storage.SetJSON(tx, key, in) }))
	var out record
	is.NoErr(st.View(context.Background(), func(tx storage.Tx) error { return storage.GetJSON(tx, key, &out) }))
	is.Equal(out.ID, in.ID)
	is.Equal(out.Name, in.Name)
	is.Equal(out.Tags, in.Tags)
}

func TestGetJSON_MissingKeyIsErrNotFound(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	err := st.View(context.Background(), func(tx storage.Tx) error {
		var out record
		return storage.GetJSON(tx, []byte("nope"), &out)
	})
	is.True(errors.Is(err, storage.ErrNotFound)) // the sentinel comes through
}

func TestGetJSON_CorruptValueIsAnErrorNotErrNotFound(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("bad"), []byte("{not json")) }))
	err := st.View(context.Background(), func(tx storage.Tx) error {
		var out record
		return storage.GetJSON(tx, []byte("bad"), &out)
	})
	is.True(err != nil)                           // decoding fails
	is.True(!errors.Is(err, storage.ErrNotFound)) // and is not mistaken for a missing key
}

func TestSetJSON_UnencodableValueStoresNothing(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		return storage.SetJSON(tx, []byte("k"), map[string]any{"f": func() {}})
	})
	is.True(err != nil) // a func cannot be encoded
	err = st.View(context.Background(), func(tx storage.Tx) error {
		_, err := tx.Get([]byte("k"))
		return err
	})
	is.True(errors.Is(err, storage.ErrNotFound))
}

func nextSeq(t *testing.T, st storage.Store, key []byte, start uint64) uint64 {
	t.Helper()
	var n uint64
	err := st.Update(context.Background(), func(tx storage.Tx) (err error) {
		n, err = storage.NextSeq(tx, key, start)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNextSeq_StartsAtStartAndCountsUp(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	key := storage.NewKey("seq").Str("user")
	is.Equal(nextSeq(t, st, key, 1000), uint64(1000)) // first value is start
	is.Equal(nextSeq(t, st, key, 1000), uint64(1001))
	is.Equal(nextSeq(t, st, key, 1000), uint64(1002))
	other := storage.NewKey("seq").Str("store")
	is.Equal(nextSeq(t, st, other, 1), uint64(1)) // sequences are independent
}

func TestNextSeq_FailedUpdateGivesTheIdAgain(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	key := []byte("seq")
	is.Equal(nextSeq(t, st, key, 1), uint64(1))
	boom := errors.New("boom")
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		if _, err := storage.NextSeq(tx, key, 1); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.Equal(nextSeq(t, st, key, 1), uint64(2)) // the rolled-back id is not lost
}

func TestNextSeq_CorruptCounterIsAnError(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("seq"), []byte("abc")) }))
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		_, err := storage.NextSeq(tx, []byte("seq"), 1)
		return err
	})
	is.True(err != nil) // a counter that is not 8 bytes is not silently reset
}
