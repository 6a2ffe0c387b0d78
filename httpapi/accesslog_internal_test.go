package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/reqlog"
)

// dropTime leaves the time out of a line, which LogAttrs reads from the
// clock itself.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestLogRequest_WritesTheBytesOfTheLoggersOwnLine(t *testing.T) {
	for _, name := range []string{"json", "text"} {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			opts := &slog.HandlerOptions{ReplaceAttr: dropTime}
			newLogger := func(w io.Writer) *slog.Logger {
				if name == "text" {
					return slog.New(slog.NewTextHandler(w, opts))
				}
				return slog.New(slog.NewJSONHandler(w, opts))
			}
			path := `/users/1234567/"quoted"`
			newLogger(&want).LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("method", http.MethodGet),
				slog.String("path", path), slog.String("route", "/users/:user_id"), slog.Int("status", 200),
				slog.String("duration", (1520*time.Microsecond).String()))
			s := &Server{logger: newLogger(&got)}
			s.logRequest(context.Background(), http.MethodGet, path, "/users/:user_id", 200, time.Now(), 1520*time.Microsecond)
			if got.String() != want.String() || got.Len() == 0 {
				t.Fatalf("line\n%s\nwant LogAttrs's\n%s", got.String(), want.String())
			}
		})
	}
}

func TestLogRequest_ThroughReqlogWritesWhatSlogsJSONHandlerWrites(t *testing.T) {
	end := time.Date(2026, 3, 1, 12, 30, 45, 123_456_789, time.FixedZone("ART", -3*3600))
	path := `/users/1234567/"quoted"`
	var want, got bytes.Buffer
	(&Server{logger: slog.New(slog.NewJSONHandler(&want, nil))}).logRequest(context.Background(), http.MethodGet, path, "/users/:user_id", 200, end, 1520*time.Microsecond)
	(&Server{logger: slog.New(reqlog.New(&got, nil))}).logRequest(context.Background(), http.MethodGet, path, "/users/:user_id", 200, end, 1520*time.Microsecond)
	if got.String() != want.String() || got.Len() == 0 {
		t.Fatalf("line\n%s\nwant slog's\n%s", got.String(), want.String())
	}
}

func TestLogRequest_TimeIsTheRequestsEnd(t *testing.T) {
	var out bytes.Buffer
	s := &Server{logger: slog.New(slog.NewJSONHandler(&out, nil))}
	end := time.Date(2026, 3, 1, 12, 30, 45, 123_000_000, time.UTC)
	s.logRequest(context.Background(), http.MethodGet, "/x", "/x", 200, end, time.Millisecond)
	if !strings.HasPrefix(out.String(), `{"time":"2026-03-01T12:30:45.123Z",`) {
		t.Fatalf("line %s: want the time of the request's end first", out.String())
	}
}

func TestLogRequest_SourceIsTheRequestLogWithAddSource(t *testing.T) {
	var out bytes.Buffer
	s := &Server{logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{AddSource: true}))}
	for range 2 {
		s.logRequest(context.Background(), http.MethodGet, "/x", "/x", 200, time.Now(), time.Millisecond)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.Contains(line, `"function":"github.com/marketplace/marketplace/httpapi.(*Server).logRequest"`) ||
			!strings.Contains(line, `accesslog.go"`) {
			t.Fatalf("line %s: want logRequest as its source", line)
		}
	}
}

// BenchmarkRequestLog is the request line through LogAttrs, as it was
// written, and through logRequest, to a discarding JSON handler.
func BenchmarkRequestLog(b *testing.B) {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b.Run("LogAttrs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			logger.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", http.MethodGet),
				slog.String("path", "/users/1234567"), slog.String("route", "/users/:user_id"), slog.Int("status", 200),
				slog.String("duration", (1520*time.Microsecond).String()))
		}
	})
	b.Run("reqlog", func(b *testing.B) {
		s := &Server{logger: slog.New(reqlog.New(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
		start := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			s.logRequest(ctx, http.MethodGet, "/users/1234567", "/users/:user_id", 200, start.Add(1520*time.Microsecond), 1520*time.Microsecond)
		}
	})
	b.Run("logRequest", func(b *testing.B) {
		s := &Server{logger: logger}
		start := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			s.logRequest(ctx, http.MethodGet, "/users/1234567", "/users/:user_id", 200, start.Add(1520*time.Microsecond), 1520*time.Microsecond)
		}
	})
}
