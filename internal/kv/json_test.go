package kv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

type record struct {
	ID   int64    `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

func TestJSON_RoundTrip(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	key := keycodec.New("rec").Int(1)
	in := record{ID: 1, Name: "ñandú", Tags: []string{"a", "b"}}
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error { return kv.SetJSON(tx, key, in) }))
	var out record
	is.NoErr(st.View(context.Background(), func(tx storage.Tx) error { return kv.GetJSON(tx, key, &out) }))
	is.Equal(out.ID, in.ID)
	is.Equal(out.Name, in.Name)
	is.Equal(out.Tags, in.Tags)
}

func TestGetJSON_MissingKeyIsErrNotFound(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	err := st.View(context.Background(), func(tx storage.Tx) error {
		var out record
		return kv.GetJSON(tx, []byte("nope"), &out)
	})
	is.True(errors.Is(err, storage.ErrNotFound)) // the sentinel comes through
}

func TestGetJSON_CorruptValueIsAnErrorNotErrNotFound(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("bad"), []byte("{not json")) }))
	err := st.View(context.Background(), func(tx storage.Tx) error {
		var out record
		return kv.GetJSON(tx, []byte("bad"), &out)
	})
	is.True(err != nil)                           // decoding fails
	is.True(!errors.Is(err, storage.ErrNotFound)) // and is not mistaken for a missing key
}

func TestSetJSON_UnencodableValueStoresNothing(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		return kv.SetJSON(tx, []byte("k"), map[string]any{"f": func() {}})
	})
	is.True(err != nil) // a func cannot be encoded
	err = st.View(context.Background(), func(tx storage.Tx) error {
		_, err := tx.Get([]byte("k"))
		return err
	})
	is.True(errors.Is(err, storage.ErrNotFound))
}
