package httpapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/faults"
)

// WriteWireFault does the wire fault kind to the answer of w, whose
// handler must write nothing else: MALFORMED_JSON writes a 200 with a JSON
// body cut short; the others take the connection from the server
// (http.ResponseController's Hijack), write what the fault writes and
// close it, so that the client meets the error a real network gives it.
// A handler of its own (an httptest server of a test) may call it too.
// It returns an error when the connection cannot be taken (an
// http.ResponseWriter that is not a server's, such as
// httptest.ResponseRecorder, or HTTP/2): the caller should then abort the
// answer, as net/http does for panic(http.ErrAbortHandler).
func WriteWireFault(w http.ResponseWriter, kind faults.WireFault) error {
	closeConn, err := writeWireFault(w, kind)
	closeConn()
	return err
}

// writeWireFault does WriteWireFault's work but leaves the connection it
// took open: closeConn (never nil) closes it, which is when the client
// sees the fault. The server closes it once the request is journaled, so
// that a test that reads the journal as soon as its client failed finds
// the request there.
func writeWireFault(w http.ResponseWriter, kind faults.WireFault) (closeConn func(), err error) {
	noop := func() {}
	if kind == faults.MalformedJSON {
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(faults.MalformedJSONBody)))
		w.WriteHeader(http.StatusOK)
		_, err := io.WriteString(w, faults.MalformedJSONBody)
		return noop, err
	}
	if _, err := faults.ParseWireFault("fault", string(kind)); err != nil {
		return noop, err
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return noop, fmt.Errorf("wire fault %s: %w", kind, err)
	}
	closeConn = func() { _ = conn.Close() }
	switch kind {
	case faults.ConnectionResetByPeer:
		// Linger 0 makes the close a RST rather than a FIN. A connection
		// that is not TCP (a pipe in a test) can only be closed.
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	case faults.EmptyResponse:
	case faults.MalformedResponseChunk:
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n")
		// A good chunk first, so that the client has begun the body when
		// the next chunk's size line is not hexadecimal.
		_, _ = buf.WriteString("8\r\n{\"id\":\"M\r\n")
		_, _ = buf.WriteString("zz\r\nLA1\"}\r\n")
		_ = buf.Flush()
	case faults.RandomDataThenClose:
		_, _ = buf.Write(randomGarbage())
		_ = buf.Flush()
	}
	return closeConn, nil
}

// randomGarbage is the bytes of RANDOM_DATA_THEN_CLOSE: random, never the
// start of a status line ("HTTP/"), without a space (which would make them
// a status line with a bad code) and ended by a line break, so that the
// client reads one malformed line rather than waiting for one.
func randomGarbage() []byte {
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	b[0] = 0xff
	for i, c := range b {
		if c == '\n' || c == '\r' || c == ' ' {
			b[i] = 0xfe
		}
	}
	return append(b, "\r\n\r\n"...)
}

// sleepCtx waits d, or until ctx ends (with its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// trickleWriter writes the answer at a rate: in pieces of a hundredth of
// a second's bytes (at least one), each flushed to the client, with a
// pause before every piece but the first.
type trickleWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	ctx     context.Context
	sleep   func(context.Context, time.Duration) error
	piece   int
	pause   time.Duration
	started bool
}

func newTrickleWriter(ctx context.Context, w http.ResponseWriter, bytesPerSecond int64, sleep func(context.Context, time.Duration) error) *trickleWriter {
	piece := max(1, bytesPerSecond/100)
	return &trickleWriter{ResponseWriter: w, rc: http.NewResponseController(w), ctx: ctx, sleep: sleep,
		piece: int(piece), pause: time.Duration(piece) * time.Second / time.Duration(bytesPerSecond)}
}

func (t *trickleWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if t.started {
			if err := t.sleep(t.ctx, t.pause); err != nil {
				return n, err
			}
		}
		t.started = true
		k := min(len(b), t.piece)
		m, err := t.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		// A writer that cannot flush (a recorder) still gets its pieces.
		_ = t.rc.Flush()
		b = b[k:]
	}
	return n, nil
}

// Unwrap gives http.ResponseController the writer beneath.
func (t *trickleWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
