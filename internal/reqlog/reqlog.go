// Package reqlog is the server's log handler: slog's JSON handler, with a
// second way in for the request line, the one line written per request,
// that writes the same bytes without building a slog.Record. Through
// slog, the line's attributes cost a Record, five Values and their
// generic encoding, about a third of what the log adds to a cached GET;
// written directly it is one append per field.
package reqlog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Handler is a slog.Handler that writes JSON exactly as
// slog.NewJSONHandler does, and writes request lines (WriteRequest) the
// same way without a Record.
type Handler struct {
	json  slog.Handler
	out   *lockedWriter
	level slog.Leveler
	// direct is false when the options change what slog writes
	// (AddSource, ReplaceAttr): WriteRequest then goes through slog.
	direct bool
}

// New returns a Handler writing to w with opts, as slog.NewJSONHandler(w,
// opts) would.
func New(w io.Writer, opts *slog.HandlerOptions) *Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	out := &lockedWriter{w: w}
	level := opts.Level
	if level == nil {
		level = slog.LevelInfo
	}
	return &Handler{json: slog.NewJSONHandler(out, opts), out: out, level: level,
		direct: !opts.AddSource && opts.ReplaceAttr == nil}
}

// Enabled reports whether level is logged.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.json.Enabled(ctx, level)
}

// Handle writes r as slog's JSON handler does.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error { return h.json.Handle(ctx, r) }

// WithAttrs returns slog's JSON handler with attrs: its lines carry them,
// so request lines go through slog.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.json.WithAttrs(attrs) }

// WithGroup returns slog's JSON handler with the group, as WithAttrs.
func (h *Handler) WithGroup(name string) slog.Handler { return h.json.WithGroup(name) }

// WriteRequest writes the request line at level info, if enabled: the
// message "request" and the attributes method, path, route, status and
// duration (as text with its unit, "1.52ms"), at time end. pc is the
// program counter slog would report as the line's source.
func (h *Handler) WriteRequest(ctx context.Context, end time.Time, pc uintptr, method, path, route string, status int, elapsed time.Duration) error {
	if !h.direct {
		rec := slog.NewRecord(end, slog.LevelInfo, "request", pc)
		rec.AddAttrs(slog.String("method", method), slog.String("path", path), slog.String("route", route),
			slog.Int("status", status), slog.String("duration", elapsed.String()))
		return h.json.Handle(ctx, rec)
	}
	if slog.LevelInfo < h.level.Level() {
		return nil
	}
	bp := linePool.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, '{')
	if !end.IsZero() {
		b = append(b, `"time":"`...)
		b = end.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":"INFO","msg":"request","method":`...)
	b = appendString(b, method)
	b = append(b, `,"path":`...)
	b = appendString(b, path)
	b = append(b, `,"route":`...)
	b = appendString(b, route)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"duration":`...)
	b = appendDuration(b, elapsed)
	b = append(b, "}\n"...)
	_, err := h.out.Write(b)
	*bp = b
	linePool.Put(bp)
	return err
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// appendDuration appends d.String() quoted: its text (digits, a point, a
// sign and the units h, m, s, ms, µs, ns) needs no escaping.
func appendDuration(b []byte, d time.Duration) []byte {
	b = append(b, '"')
	b = append(b, d.String()...)
	return append(b, '"')
}

// appendString appends s quoted as slog's JSON handler quotes it: quote,
// backslash, \n, \r and \t escaped by letter, the other control
// characters as \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// escaped.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// lockedWriter serializes the writes of slog's handler and of
// WriteRequest: each line is one Write, never interleaved with another.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
