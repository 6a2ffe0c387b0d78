package keycodec_test

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

func TestKeyInt_ByteOrderIsNumericOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Int64().Draw(t, "a")
		b := rapid.Int64().Draw(t, "b")
		got := bytes.Compare(keycodec.New("n").Int(a), keycodec.New("n").Int(b))
		if got != cmp.Compare(a, b) {
			t.Fatalf("Compare(Int(%d), Int(%d)) = %d", a, b, got)
		}
	})
}

func TestKeyUint_ByteOrderIsNumericOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint64().Draw(t, "a")
		b := rapid.Uint64().Draw(t, "b")
		got := bytes.Compare(keycodec.New("n").Uint(a), keycodec.New("n").Uint(b))
		if got != cmp.Compare(a, b) {
			t.Fatalf("Compare(Uint(%d), Uint(%d)) = %d", a, b, got)
		}
	})
}

func TestKeyDesc_ByteOrderIsReverseNumericOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Int64().Draw(t, "a")
		b := rapid.Int64().Draw(t, "b")
		got := bytes.Compare(keycodec.New("n").Desc(a), keycodec.New("n").Desc(b))
		if got != cmp.Compare(b, a) {
			t.Fatalf("Compare(Desc(%d), Desc(%d)) = %d", a, b, got)
		}
	})
}

func TestKeyInt_ExtremesSortAtTheEnds(t *testing.T) {
	is := is.New(t)
	k := func(v int64) []byte { return keycodec.Raw().Int(v) }
	is.True(bytes.Compare(k(math.MinInt64), k(-1)) < 0) // MinInt64 first
	is.True(bytes.Compare(k(-1), k(0)) < 0)             // negatives before zero
	is.True(bytes.Compare(k(0), k(1)) < 0)              // zero before positives
	is.True(bytes.Compare(k(1), k(math.MaxInt64)) < 0)  // MaxInt64 last
}

// anyString draws strings over bytes that matter to the encoding (0x00 and
// 0x01 are escaped, 0x02 is the smallest byte written as is) and a few others.
var anyString = rapid.Map(
	rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 0x02, 'a', 'b', 0xff}), 0, 6),
	func(b []byte) string { return string(b) },
)

func TestKeyStr_ByteOrderIsTupleOrder(t *testing.T) {
	// A key of parts (s, n) sorts like the tuple: by s as a string first,
	// then by n, whatever bytes s holds; so no string part can swallow the
	// part after it.
	rapid.Check(t, func(t *rapid.T) {
		s1, s2 := anyString.Draw(t, "s1"), anyString.Draw(t, "s2")
		n1, n2 := rapid.Int64().Draw(t, "n1"), rapid.Int64().Draw(t, "n2")
		want := strings.Compare(s1, s2)
		if want == 0 {
			want = cmp.Compare(n1, n2)
		}
		got := bytes.Compare(keycodec.New("ns").Str(s1).Int(n1), keycodec.New("ns").Str(s2).Int(n2))
		if got != want {
			t.Fatalf("Compare((%q, %d), (%q, %d)) = %d; want %d", s1, n1, s2, n2, got, want)
		}
	})
}

func TestKeyStr_ShorterStringSortsFirst(t *testing.T) {
	is := is.New(t)
	a := keycodec.New("ns").Str("a").Int(math.MaxInt64)
	ab := keycodec.New("ns").Str("ab").Int(math.MinInt64)
	is.True(bytes.Compare(a, ab) < 0) // "a" before "ab" whatever follows
}

func TestKeyStr_NulByteCannotForgeTheNextPart(t *testing.T) {
	is := is.New(t)
	forged := keycodec.New("acc/user").Str("a\x00b").Bytes()
	two := keycodec.New("acc/user").Str("a").Str("b").Bytes()
	is.True(!bytes.Equal(forged, two)) // one part with a NUL is not two parts
	r := keycodec.Read(forged)
	is.Equal(r.Str(), "acc/user")
	is.Equal(r.Str(), "a\x00b")
	is.NoErr(r.Err())
	is.Equal(len(r.Rest()), 0) // nothing left over
}

func TestKeyReader_ReadsBackEveryPart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ns := anyString.Draw(t, "ns")
		s := anyString.Draw(t, "s")
		i := rapid.Int64().Draw(t, "i")
		d := rapid.Int64().Draw(t, "d")
		u := rapid.Uint64().Draw(t, "u")
		k := keycodec.New(ns).Str(s).Int(i).Desc(d).Uint(u)
		r := keycodec.Read(k)
		if got := r.Str(); got != ns {
			t.Fatalf("namespace %q read back as %q", ns, got)
		}
		if got := r.Str(); got != s {
			t.Fatalf("string %q read back as %q", s, got)
		}
		if got := r.Int(); got != i {
			t.Fatalf("Int %d read back as %d", i, got)
		}
		if got := r.Desc(); got != d {
			t.Fatalf("Desc %d read back as %d", d, got)
		}
		if got := r.Uint(); got != u {
			t.Fatalf("Uint %d read back as %d", u, got)
		}
		if r.Err() != nil || len(r.Rest()) != 0 {
			t.Fatalf("err %v, %d bytes left", r.Err(), len(r.Rest()))
		}
	})
}

func TestKeyReader_ShortKeyReportsErrShortKey(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
		read func(r *keycodec.Reader)
	}{
		{"StrWithoutTerminator", []byte("abc"), func(r *keycodec.Reader) { r.Str() }},
		{"UintOfSevenBytes", make([]byte, 7), func(r *keycodec.Reader) { r.Uint() }},
		{"IntAfterTheEnd", keycodec.New("ns"), func(r *keycodec.Reader) { r.Str(); r.Int() }},
		{"DescOfEmptyKey", nil, func(r *keycodec.Reader) { r.Desc() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := keycodec.Read(tc.key)
			tc.read(r)
			is.True(errors.Is(r.Err(), keycodec.ErrShort)) // short key reported
			// Reading on after an error stays an error and does not panic.
			r.Str()
			r.Uint()
			is.True(errors.Is(r.Err(), keycodec.ErrShort))
		})
	}
}

func TestPrefixEnd_BoundsEveryKeyWithThePrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := []byte(anyString.Draw(t, "prefix"))
		k := []byte(anyString.Draw(t, "key"))
		orig := bytes.Clone(p)
		end := storage.PrefixEnd(p)
		if !bytes.Equal(p, orig) {
			t.Fatalf("PrefixEnd changed its argument to %q", p)
		}
		r := storage.Prefix(p)
		in := bytes.Compare(k, r.Start) >= 0 && (r.End == nil || bytes.Compare(k, r.End) < 0)
		if in != bytes.HasPrefix(k, p) {
			t.Fatalf("key %q in Prefix(%q) = [%q, %q): %v; has prefix: %v", k, p, r.Start, end, in, !in)
		}
	})
}

func TestPrefixEnd_Examples(t *testing.T) {
	tests := []struct {
		p, want []byte
	}{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte("ab"), []byte("ac")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte("\xff"), nil},
		{[]byte("\xff\xff"), nil},
		{[]byte("a\x00"), []byte("a\x01")},
	}
	for _, tc := range tests {
		if got := storage.PrefixEnd(tc.p); !bytes.Equal(got, tc.want) || (tc.want == nil) != (got == nil) {
			t.Errorf("PrefixEnd(%q) = %q; want %q", tc.p, got, tc.want)
		}
	}
}
