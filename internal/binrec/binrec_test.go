package binrec_test

import (
	"encoding/binary"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/binrec"
)

func TestDecoder_ReadsWhatWasAppended(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64().Draw(t, "n")
		u := rapid.Uint64().Draw(t, "u")
		s := rapid.String().Draw(t, "s")
		at := time.Unix(rapid.Int64Range(-1e12, 1e12).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "nsec"))
		c := rapid.Byte().Draw(t, "c")
		b := binary.AppendVarint(nil, n)
		b = binary.AppendUvarint(b, u)
		b = binrec.AppendString(b, s)
		b = binrec.AppendTime(b, at)
		b = append(b, c)
		d := binrec.NewDecoder(b)
		if d.Varint() != n || d.Uvarint() != u || d.String() != s || !d.Time().Equal(at) || d.Byte() != c {
			t.Fatal("a value did not read back")
		}
		if err := d.Done(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDecoder_CorruptInputFailsWithoutPanicking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := binrec.NewDecoder(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		for i := 0; i < 8; i++ {
			switch rapid.IntRange(0, 5).Draw(t, "read") {
			case 0:
				d.Byte()
			case 1:
				d.Uvarint()
			case 2:
				d.Varint()
			case 3:
				_ = d.String()
			case 4:
				d.Time()
			case 5:
				if n := d.Count(); n > d.Len() {
					t.Fatalf("count %d beyond the %d bytes left", n, d.Len())
				}
			}
		}
		_ = d.Done()
	})
}

func TestDecoder_FirstFailureSticks(t *testing.T) {
	d := binrec.NewDecoder([]byte{0x80}) // a varint that never ends
	if d.Uvarint() != 0 || d.Err() != binrec.ErrCorrupt {
		t.Fatal("truncated varint accepted")
	}
	if d.Byte() != 0 || d.String() != "" || d.Done() != binrec.ErrCorrupt {
		t.Fatal("reads after a failure must return zero values and keep the error")
	}
	long := binrec.NewDecoder(binrec.AppendString(nil, "abc")[:2]) // length 3, one byte left
	if long.String() != "" || long.Err() == nil {
		t.Fatal("a string longer than the record was read")
	}
}

func TestOptionalValues_ReadBackNilApartFromZeroAndEmpty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s *string
		if rapid.Bool().Draw(t, "string set") {
			v := rapid.String().Draw(t, "string")
			s = &v
		}
		var n *int64
		if rapid.Bool().Draw(t, "int set") {
			v := rapid.Int64().Draw(t, "int")
			n = &v
		}
		length := rapid.IntRange(-1, 5).Draw(t, "length") // -1: nil
		b := binrec.AppendStringPtr(nil, s)
		b = binrec.AppendInt64Ptr(b, n)
		b = binrec.AppendLen(b, max(length, 0), length < 0)
		b = append(b, make([]byte, max(length, 0))...) // the elements' bytes
		d := binrec.NewDecoder(b)
		gs, gn, gl := d.StringPtr(), d.Int64Ptr(), d.SliceLen()
		if (gs == nil) != (s == nil) || (s != nil && *gs != *s) {
			t.Fatalf("string %v read back as %v", s, gs)
		}
		if (gn == nil) != (n == nil) || (n != nil && *gn != *n) {
			t.Fatalf("int %v read back as %v", n, gn)
		}
		if gl != length {
			t.Fatalf("length %d read back as %d", length, gl)
		}
		if d.Err() != nil {
			t.Fatal(d.Err())
		}
	})
}

func TestOptionalValues_AFlagOtherThanZeroOrOneIsCorrupt(t *testing.T) {
	for _, read := range []func(d *binrec.Decoder){
		func(d *binrec.Decoder) { d.StringPtr() },
		func(d *binrec.Decoder) { d.Int64Ptr() },
	} {
		d := binrec.NewDecoder([]byte{2, 0})
		read(d)
		if d.Err() == nil {
			t.Fatal("a flag of 2 read without an error")
		}
	}
	d := binrec.NewDecoder([]byte{5, 0}) // 4 elements announced, 1 byte left
	if d.SliceLen(); d.Err() == nil {
		t.Fatal("a length beyond the bytes left read without an error")
	}
}
