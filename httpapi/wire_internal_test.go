package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTrickleWriter_PiecesAreAHundredthOfASecondsBytes(t *testing.T) {
	for _, tc := range []struct {
		rate  int64
		piece int
		pause time.Duration
	}{
		{1, 1, time.Second},
		{100, 1, 10 * time.Millisecond},
		{250, 2, 8 * time.Millisecond},
		{1000, 10, 10 * time.Millisecond},
		{1 << 20, 10485, 9999 * time.Microsecond},
	} {
		rec := httptest.NewRecorder()
		var slept []time.Duration
		w := newTrickleWriter(context.Background(), rec, tc.rate, func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			return nil
		})
		// Two writes: the pacing goes on across them.
		body := strings.Repeat("x", 1000)
		if _, err := w.Write([]byte(body[:333])); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body[333:])); err != nil {
			t.Fatal(err)
		}
		if rec.Body.String() != body {
			t.Fatalf("rate %d: body of %d bytes, want the 1000 written", tc.rate, rec.Body.Len())
		}
		if w.piece != tc.piece || w.pause.Round(time.Microsecond) != tc.pause {
			t.Errorf("rate %d: pieces of %d bytes every %v, want %d every %v", tc.rate, w.piece, w.pause, tc.piece, tc.pause)
		}
		// 333 is not a multiple of every piece: a short piece ends each write.
		want := (333+tc.piece-1)/tc.piece + (667+tc.piece-1)/tc.piece - 1
		if len(slept) != want {
			t.Errorf("rate %d: %d pauses, want %d", tc.rate, len(slept), want)
		}
	}
}

func TestTrickleWriter_StopsWhenTheClientIsGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	w := newTrickleWriter(ctx, rec, 100, sleepCtx)
	n, err := w.Write([]byte("abc"))
	if err == nil || n != 1 || rec.Body.String() != "a" {
		t.Fatalf("wrote %d (%q), err %v; want the first byte, then the context's error", n, rec.Body.String(), err)
	}
}
