package httpapi

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"
)

// logRequest writes a request's log line at level info, with the
// attributes and bytes that slog.Logger.LogAttrs gave it, but hands the
// record to the logger's handler itself. LogAttrs asks the runtime for
// its caller's program counter at every line (runtime.Callers, a third
// of the line's cost), which only a handler with AddSource writes; the
// request line has one caller, so its program counter is read once. The
// time is the request's end, which the caller has already read for the
// duration.
func (s *Server) logRequest(ctx context.Context, method, path, route string, status int, end time.Time, elapsed time.Duration) {
	pc := requestLogPC.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(1, pcs[:]) // this function
		pc = pcs[0]
		requestLogPC.Store(pc)
	}
	if direct, ok := s.logger.Handler().(requestLineWriter); ok {
		_ = direct.WriteRequest(ctx, end, pc, method, path, route, status, elapsed)
		return
	}
	rec := slog.NewRecord(end, slog.LevelInfo, "request", pc)
	rec.AddAttrs(slog.String("method", method), slog.String("path", path), slog.String("route", route),
		slog.Int("status", status), slog.String("duration", elapsed.String()))
	_ = s.logger.Handler().Handle(ctx, rec)
}

// requestLineWriter is a handler that writes the request line itself,
// without a slog.Record (internal/reqlog, marketplaced's): the same bytes
// at a third of the cost.
type requestLineWriter interface {
	WriteRequest(ctx context.Context, end time.Time, pc uintptr, method, path, route string, status int, elapsed time.Duration) error
}

// requestLogPC is the program counter a handler with AddSource reports as
// the request line's source: logRequest's.
var requestLogPC atomic.Uintptr
