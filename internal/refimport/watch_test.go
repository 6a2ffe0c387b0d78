package refimport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/refimport"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// flakyStore is a store that can be made unreachable, counting the
// transactions it refuses and those it runs.
type flakyStore struct {
	storage.Store
	down            atomic.Bool
	refused, served atomic.Int64
}

func (s *flakyStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.down.Load() {
		s.refused.Add(1)
		return fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", storage.ErrUnavailable)
	}
	s.served.Add(1)
	return s.Store.View(ctx, fn)
}

// syncBuffer is a log sink that the watcher writes and the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) levels(t *testing.T) map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(b.buf.Bytes()))
	for dec.More() {
		var l struct{ Level string }
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		out[l.Level]++
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestWatch_APassingOutageIsOneWarningNeverAnError(t *testing.T) {
	refimport.WithLease(t, 10*time.Millisecond)
	st := &flakyStore{Store: memory.New()}
	var out syncBuffer
	im := refimport.New(st, slog.New(slog.NewJSONHandler(&out, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- im.Watch(ctx) }()

	st.down.Store(true)
	waitFor(t, "several refused attempts", func() bool { return st.refused.Load() >= 5 })
	st.down.Store(false)
	waitFor(t, "several served attempts", func() bool { return st.served.Load() >= 3 })
	cancel()
	<-done

	got := out.levels(t)
	if got["WARN"] != 1 || got["ERROR"] != 0 || got["INFO"] != 1 {
		t.Fatalf("log levels %v over an outage of %d attempts; want one WARN as it began, one INFO as it ended, no ERROR", got, st.refused.Load())
	}
}
