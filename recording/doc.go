// Package recording holds the rules of recording the real API through the
// server (docs/recording.md): which headers belong to one connection and
// are neither forwarded nor relayed (HopByHop, ForwardHeader,
// RelayHeader); what of a forwarded exchange is a secret and how it is
// left out or redacted (Capture, with the package internal/redact's
// rules); and how exchanges become stub mappings in WireMock's format, as
// -stubs reads them (package stubs): one per distinct request, with its
// first answer, or, with repeats, each answer in order as a sequence
// limited by times (Recorder). The operator's recording (Session) and the
// snapshot of the exchanges already forwarded (Log) are WireMock's
// recording API.
//
// The HTTP adapter forwards and relays; this package decides what crosses
// and what is kept.
package recording
