package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/marketplace/marketplace/httpapi"
)

// serveSide serves h on addr beside the API (metrics, pprof) until ctx
// ends. A listener that cannot start is logged, not fatal: the API is what
// the server is for.
func serveSide(ctx context.Context, logger *slog.Logger, name, addr string, h http.Handler, stdout io.Writer) {
	err := httpapi.Run(ctx, addr, h, time.Second, func(addr string) {
		fmt.Fprintf(stdout, "%s on http://%s\n", name, addr)
		logger.Info("listening", "what", name, "addr", addr)
	})
	if err != nil {
		logger.Error("side listener stopped", "what", name, "addr", addr, "err", err)
	}
}

// pprofMux serves net/http/pprof's handlers under /debug/pprof/, on a mux
// of its own rather than http.DefaultServeMux, which the import registers
// them on and which anything else in the process might serve.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
