package logbuf_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/internal/logbuf"
)

// lockedBuffer is a file that records each write call.
type lockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWriter_EveryLineOfConcurrentWritersArrivesWholeAndInEachWritersOrder(t *testing.T) {
	var out lockedBuffer
	w := logbuf.New(&out)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("writer %d line %d %s\n", g, i, strings.Repeat("x", i%300))
				if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
					t.Errorf("Write: %d, %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, line := range got {
		f := strings.Split(line, " ")
		if len(f) != 5 || f[0] != "writer" || f[2] != "line" {
			t.Fatalf("line cut or mixed: %q", line)
		}
		g, err1 := strconv.Atoi(f[1])
		i, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || g < 0 || g >= writers {
			t.Fatalf("line cut or mixed: %q", line)
		}
		if rest := f[4]; i != next[g] || len(rest) != i%300 {
			t.Fatalf("writer %d: line %d (%d x) where line %d was due", g, i, len(rest), next[g])
		}
		next[g]++
	}
}

func TestWriter_LinesWrittenWhileTheFileIsBusyShareOneWriteCall(t *testing.T) {
	gate := make(chan struct{})
	var out lockedBuffer
	slow := writerFunc(func(p []byte) (int, error) {
		<-gate
		return out.Write(p)
	})
	w := logbuf.New(slow)
	for i := range 100 {
		if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.writes > 2 {
		t.Errorf("100 lines written while the file was busy took %d write calls, want at most 2", out.writes)
	}
	if got := strings.Count(out.String(), "\n"); got != 100 {
		t.Errorf("%d lines, want 100", got)
	}
}

func TestWriter_WriteAfterCloseFailsAndCloseTwiceIsHarmless(t *testing.T) {
	var out lockedBuffer
	w := logbuf.New(&out)
	if _, err := io.WriteString(w, "before\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "after\n"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write after Close: %v, want io.ErrClosedPipe", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if out.String() != "before\n" {
		t.Errorf("file holds %q", out.String())
	}
}

func TestWriter_AnErrorOfTheFileIsReturnedByLaterWritesAndClose(t *testing.T) {
	broken := errors.New("disk gone")
	w := logbuf.New(writerFunc(func([]byte) (int, error) { return 0, broken }))
	if _, err := io.WriteString(w, "lost\n"); err != nil {
		t.Fatal(err) // not written yet: the error comes later
	}
	if err := w.Close(); !errors.Is(err, broken) {
		t.Errorf("Close: %v, want %v", err, broken)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
