// Package pgproxy stands between PostgreSQL clients and a server: it counts
// the round trips the clients make and can put a network's distance
// between them.
//
// A round trip is what makes a client wait for the server: a simple Query
// message, or a Sync that ends a batch of extended-protocol messages (pgx
// sends a whole batch, BEGIN and COMMIT included, before one Sync). The
// count is read at the wire, so it does not depend on how a client library
// groups its calls. The delay is a latency line: every byte, both ways,
// reaches the other side half the round trip after it was sent, and
// messages that follow each other are not held back by each other's
// delay, as on a real network.
//
// Tests use it to bound the round trips of a request and the idle traffic
// of a server; the bench uses it to measure routes at 0.5 and 1 ms from
// their database.
package pgproxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections to a PostgreSQL server.
type Proxy struct {
	ln     net.Listener
	target string

	roundTrips atomic.Uint64
	// halfRTT is half the round trip added, in nanoseconds: each
	// direction gets one half.
	halfRTT atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and forwards each connection to
// target (host:port).
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial instead of the server's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the port of Addr.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// RoundTrips returns how many round trips the clients have made since
// the proxy started.
func (p *Proxy) RoundTrips() uint64 { return p.roundTrips.Load() }

// SetRoundTrip sets the time added to every round trip from now on: half
// of it on the way to the server, half on the way back.
func (p *Proxy) SetRoundTrip(d time.Duration) { p.halfRTT.Store(int64(d / 2)) }

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		_ = client.Close()
		_ = server.Close()
		return
	}
	defer p.untrack(client)
	defer p.untrack(server)
	var both sync.WaitGroup
	both.Add(2)
	go func() {
		defer both.Done()
		p.pipe(server, client, p.countingReader(client, server))
	}()
	go func() {
		defer both.Done()
		p.pipe(client, server, server)
	}()
	both.Wait()
}

// pipe copies from src to dst through the latency line, and closes both
// ends when either side is done.
func (p *Proxy) pipe(dst, srcConn net.Conn, src io.Reader) {
	defer func() { _ = dst.Close(); _ = srcConn.Close() }()
	type chunk struct {
		data []byte
		due  time.Time
	}
	line := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range line {
			waitUntil(c.due)
			if _, err := dst.Write(c.data); err != nil {
				// Drain, so that the reader is never stuck on a full line.
				for range line {
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			data := make([]byte, n)
			copy(data, buf[:n])
			line <- chunk{data: data, due: time.Now().Add(time.Duration(p.halfRTT.Load()))}
		}
		if err != nil {
			break
		}
	}
	close(line)
	<-done
}

// waitUntil returns at due. A timer ends up to a millisecond late, which
// would more than double a round trip of 0.5 ms: it sleeps until shortly
// before due and yields the processor from there.
func waitUntil(due time.Time) {
	if wait := time.Until(due) - timerSlack; wait > 0 {
		time.Sleep(wait)
	}
	for time.Now().Before(due) {
		runtime.Gosched()
	}
}

// timerSlack is how late a timer may end.
const timerSlack = 1500 * time.Microsecond

// countingReader reads the client's messages as they go by and counts
// each one that makes the client wait for the server.
func (p *Proxy) countingReader(client, server net.Conn) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		err := p.readMessages(client, pw, server)
		_ = pw.CloseWithError(err)
	}()
	return pr
}

// Message types of the frontend protocol that end a round trip.
const (
	msgQuery = 'Q'
	msgSync  = 'S'
)

// The request codes of an untyped first message that are not a startup.
const (
	sslRequest  = 80877103
	gssRequest  = 80877104
	cancelQuery = 80877102
)

var errTooLong = errors.New("pgproxy: a message longer than 1 GiB")

// readMessages copies the client's messages to w, counting round trips.
// After an encryption request that the server grants, the stream is
// opaque and copied as it is.
func (p *Proxy) readMessages(client net.Conn, w io.Writer, server net.Conn) error {
	var head [8]byte
	// Untyped first messages: a startup, or a request for encryption
	// that the server answers with one byte before the startup comes.
	for {
		if _, err := io.ReadFull(client, head[:4]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head[:4])
		if n < 8 || n > 10<<10 {
			return copyRest(w, client, head[:4])
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(client, body); err != nil {
			return err
		}
		if _, err := w.Write(append(head[:4:4], body...)); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(body[:4])
		if code == sslRequest || code == gssRequest {
			// Whether the server grants it shows only in its answer;
			// a client that goes on in clear sends a startup next, one
			// that does not sends a TLS hello, which copyRest passes.
			continue
		}
		if code == cancelQuery {
			return copyRest(w, client, nil)
		}
		break
	}
	for {
		if _, err := io.ReadFull(client, head[:5]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head[1:5])
		if n < 4 || n > 1<<30 {
			return errTooLong
		}
		if head[0] == msgQuery || head[0] == msgSync {
			p.roundTrips.Add(1)
		}
		if _, err := w.Write(head[:5]); err != nil {
			return err
		}
		if _, err := io.CopyN(w, client, int64(n-4)); err != nil {
			return err
		}
	}
}

// copyRest copies what is left of the client's stream without reading
// it: a stream the proxy cannot read is not counted.
func copyRest(w io.Writer, client net.Conn, read []byte) error {
	if len(read) > 0 {
		if _, err := w.Write(read); err != nil {
			return err
		}
	}
	_, err := io.Copy(w, client)
	return err
}
