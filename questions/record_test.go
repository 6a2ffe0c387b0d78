package questions

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func drawTime(t *rapid.T, label string) time.Time {
	// Years 1 to 9999 in any zone: what the old JSON form can hold.
	sec := rapid.Int64Range(-62135596800+13*3600, 253402300799-15*3600).Draw(t, label+"_sec")
	nsec := rapid.Int64Range(0, 999_999_999).Draw(t, label+"_nsec")
	return time.Unix(sec, nsec).In(time.FixedZone("", rapid.IntRange(-12, 14).Draw(t, label+"_zone")*3600))
}

func drawRecord(t *rapid.T) record {
	r := record{
		ID: rapid.Int64().Draw(t, "id"), SellerID: rapid.Int64().Draw(t, "seller"), BuyerID: rapid.Int64().Draw(t, "buyer"),
		ItemID: rapid.String().Draw(t, "item"), SiteID: rapid.String().Draw(t, "site"),
		Text: rapid.String().Draw(t, "text"), Status: rapid.String().Draw(t, "status"),
		Created: drawTime(t, "created"), Updated: drawTime(t, "updated"),
		DeletedFromListing: rapid.Bool().Draw(t, "deleted"), Hold: rapid.Bool().Draw(t, "hold"),
		SuspectedSpam: rapid.Bool().Draw(t, "spam"),
	}
	if rapid.Bool().Draw(t, "answered") {
		r.Answer = &answerRecord{Text: rapid.String().Draw(t, "answer_text"),
			Status: rapid.String().Draw(t, "answer_status"), Created: drawTime(t, "answer_created")}
	}
	return r
}

// sameRecord compares records by instant, not by the zone a time carries.
func sameRecord(t *rapid.T, got, want record) {
	t.Helper()
	gt, wt := got, want
	gt.Created, gt.Updated, wt.Created, wt.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	gt.Answer, wt.Answer = nil, nil
	if gt != wt || !got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) ||
		(got.Answer == nil) != (want.Answer == nil) {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
	if want.Answer != nil && (got.Answer.Text != want.Answer.Text || got.Answer.Status != want.Answer.Status ||
		!got.Answer.Created.Equal(want.Answer.Created)) {
		t.Fatalf("decoded answer %+v, want %+v", *got.Answer, *want.Answer)
	}
}

func TestRecord_BinaryFormRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := drawRecord(t)
		got, err := decodeRecord(encodeRecord(want))
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		sameRecord(t, got, want)
	})
}

func TestRecord_MigrationWritesTheFormTheDecoderReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := drawRecord(t)
		old, err := json.Marshal(want) // what saveRecord used to store
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := decodeRecord(old); err == nil {
			t.Fatal("a JSON record read without its migration")
		}
		v1, err := decodeQuestionV1(old)
		if err != nil {
			t.Fatal(err)
		}
		migrated := encodeQuestionV2(v1)
		if !bytes.Equal(migrated, encodeRecord(want)) {
			t.Fatalf("the migration wrote %x, the package writes %x", migrated, encodeRecord(want))
		}
		got, err := decodeRecord(migrated)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		sameRecord(t, got, want)
	})
	// A literal record in the old form, as a store written before holds it.
	old := `{"id":12000000001,"seller_id":100000001,"buyer_id":100000002,"item_id":"MLA1000000001","site_id":"MLA",` +
		`"text":"Is it new?","status":"ANSWERED","created":"2026-03-04T15:00:00Z","updated":"2026-03-04T15:05:00-03:00",` +
		`"deleted_from_listing":false,"hold":true,"suspected_spam":false,` +
		`"answer":{"text":"Yes","status":"ACTIVE","created":"2026-03-04T18:05:00Z"}}`
	v1, err := decodeQuestionV1([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(encodeQuestionV2(v1))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != 12000000001 || r.SellerID != 100000001 || r.BuyerID != 100000002 || r.ItemID != "MLA1000000001" ||
		r.Text != "Is it new?" || r.Status != "ANSWERED" || !r.Hold || r.Answer == nil || r.Answer.Text != "Yes" ||
		!r.Updated.Equal(time.Date(2026, 3, 4, 18, 5, 0, 0, time.UTC)) || !r.Answer.Created.Equal(r.Updated) {
		t.Fatalf("old record read as %+v", r)
	}
}

func TestRecord_TruncatedOrExtendedBinaryIsCorruptNotAPanic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := encodeRecord(drawRecord(t))
		var bad []byte
		if rapid.Bool().Draw(t, "truncate") {
			bad = b[:rapid.IntRange(0, len(b)-1).Draw(t, "len")]
		} else {
			bad = append(append([]byte{}, b...), rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "extra")...)
		}
		if _, err := decodeRecord(bad); err == nil {
			t.Fatalf("decoded %x without an error", bad)
		}
	})
}
