package faults

import (
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
)

// WireFault names a fault of the connection or of the bytes of an answer,
// rather than an HTTP status: what a real network, a proxy or a crashing
// server does to a client. The first four are WireMock's own names (its
// "fault" of a stub response), so that a test author meets the same words
// in both tools; MalformedJSON is ours.
type WireFault string

// The wire faults.
const (
	// ConnectionResetByPeer closes the connection with SO_LINGER 0, so
	// that the kernel sends a TCP RST: the client reads "connection reset
	// by peer" (ECONNRESET).
	ConnectionResetByPeer WireFault = "CONNECTION_RESET_BY_PEER"
	// EmptyResponse closes the connection without writing a byte: the
	// client reads EOF where the status line should be.
	EmptyResponse WireFault = "EMPTY_RESPONSE"
	// MalformedResponseChunk writes a 200 status line and headers of a
	// chunked JSON answer, one good chunk, then a chunk whose size is not
	// hexadecimal, and closes: the client has its status and fails reading
	// the body.
	MalformedResponseChunk WireFault = "MALFORMED_RESPONSE_CHUNK"
	// RandomDataThenClose writes random bytes where the status line should
	// be, then closes: the client reads a malformed HTTP response.
	RandomDataThenClose WireFault = "RANDOM_DATA_THEN_CLOSE"
	// MalformedJSON answers 200 with Content-Type application/json and a
	// correct Content-Length, and a body that is JSON cut short
	// (MalformedJSONBody): the HTTP exchange is sound, the decoding fails.
	MalformedJSON WireFault = "MALFORMED_JSON"
)

// WireFaults lists the wire faults in the order the documentation gives
// them.
var WireFaults = []WireFault{ConnectionResetByPeer, EmptyResponse, MalformedResponseChunk, RandomDataThenClose, MalformedJSON}

// MalformedJSONBody is the body of MalformedJSON: an object cut in the
// middle of a string, as an answer truncated by a proxy reads. A
// json.Decoder reading it returns io.ErrUnexpectedEOF; json.Unmarshal a
// *json.SyntaxError.
const MalformedJSONBody = `{"id":"MLA1","title":"Item de test - No ofertar","price":10,"status":"act`

// ClosesConnection reports whether f ends the connection instead of
// answering (every wire fault but MalformedJSON).
func (f WireFault) ClosesConnection() bool { return f != MalformedJSON }

// ParseWireFault returns the wire fault that name names, in any case.
// Errors: Invalid, naming field (the JSON field that held the name) and
// the names there are.
func ParseWireFault(field, name string) (WireFault, error) {
	f := WireFault(strings.ToUpper(strings.TrimSpace(name)))
	if !slices.Contains(WireFaults, f) {
		names := make([]string, len(WireFaults))
		for i, w := range WireFaults {
			names[i] = string(w)
		}
		return "", errs.Invalidf("Invalid %s: %s. It must be one of %s", field, name, strings.Join(names, ", "))
	}
	return f, nil
}
