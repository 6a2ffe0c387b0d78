package recording

import (
	"net/http"
	"net/textproto"
	"strings"
)

// hopByHop are the headers of one connection (RFC 9110, section 7.6.1,
// and the older Keep-Alive and Proxy-Connection): they describe the hop
// between two parties, never the request or the answer, so a proxy
// neither forwards nor relays them.
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// HopByHop reports whether the header named name belongs to one
// connection and is not passed on: one of the standard list, or one that
// h's Connection header names.
func HopByHop(h http.Header, name string) bool {
	name = textproto.CanonicalMIMEHeaderKey(name)
	for _, k := range hopByHop {
		if k == name {
			return true
		}
	}
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(f)) == name {
				return true
			}
		}
	}
	return false
}

// ForwardHeader returns the headers of a request as they are forwarded to
// the upstream: all of the caller's, its Authorization included, but the
// hop-by-hop ones, the framing (the forwarded request carries its own
// length) and Accept-Encoding, so that the client of the server's hop
// asks for compression itself and hands the body decoded: what is relayed
// and recorded is then the answer's text, whatever the caller accepts.
func ForwardHeader(in http.Header) http.Header {
	out := make(http.Header, len(in))
	for k, vs := range in {
		switch textproto.CanonicalMIMEHeaderKey(k) {
		case "Content-Length", "Accept-Encoding", "Host":
			continue
		}
		if HopByHop(in, k) {
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// RelayHeader adds to dst the headers of an upstream's answer as they are
// relayed: all but the hop-by-hop ones and the framing, which the server
// writes from the body it sends. A header dst already has (the server's
// own CORS headers, for the browser that calls it) is kept as it is.
func RelayHeader(dst, src http.Header) {
	for k, vs := range src {
		switch textproto.CanonicalMIMEHeaderKey(k) {
		case "Content-Length", "Content-Encoding":
			// A body that came compressed was decoded on the way in.
			continue
		}
		if HopByHop(src, k) {
			continue
		}
		if _, ok := dst[k]; ok {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// deliveryHeaders describe one delivery of an answer rather than the
// answer: a recording that replayed them would state a date, a cookie or
// a cache's age that is no longer true.
var deliveryHeaders = []string{
	"Date", "Set-Cookie", "Set-Cookie2", "Age", "Via", "Alt-Svc", "Content-Length", "Content-Encoding",
}

// recordedHeader reports whether a recording keeps the answer's header
// named name (of all headers h): its content type and the API's own, not
// the connection's nor the delivery's.
func recordedHeader(h http.Header, name string) bool {
	name = textproto.CanonicalMIMEHeaderKey(name)
	for _, k := range deliveryHeaders {
		if k == name {
			return false
		}
	}
	return !HopByHop(h, name)
}
