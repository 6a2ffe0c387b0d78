package notify

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestOutboxEvent_EncodedEventDecodesToItself(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ev := Event{
			Seq:      rapid.Uint64().Draw(t, "seq"),
			ID:       rapid.String().Draw(t, "id"),
			Topic:    rapid.String().Draw(t, "topic"),
			UserID:   rapid.Int64().Draw(t, "user"),
			Resource: rapid.String().Draw(t, "resource"),
			Action:   rapid.String().Draw(t, "action"),
			Received: time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "nsec")).UTC(),
		}
		got, err := decodeEvent(encodeEvent(ev))
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if got != ev {
			t.Fatalf("decoded %+v; want %+v", got, ev)
		}
	})
}

func TestOutboxEvent_TruncatedOrForeignRecordIsRefused(t *testing.T) {
	b := encodeEvent(Event{Seq: 7, ID: "id", Topic: "questions", UserID: 5, Resource: "/questions/1", Action: "created", Received: time.Unix(1, 0)})
	for n := range len(b) {
		if _, err := decodeEvent(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decodeEvent([]byte(`{"seq":7}`)); err == nil {
		t.Fatal("a JSON record decoded as the binary form")
	}
	if _, err := decodeEvent(append(b, 0)); err == nil {
		t.Fatal("a record with a trailing byte decoded")
	}
}
