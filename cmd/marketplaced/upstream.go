package main

import (
	"fmt"
	"io"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/recording"
)

// checkUpstreamFlags refuses an -upstream that is not a base URL, and
// -upstream-all without one: it would forward nothing, silently.
func checkUpstreamFlags(c Config) error {
	if c.Upstream != "" {
		if _, err := recording.ParseTarget(c.Upstream); err != nil {
			return usagef("-upstream: %s", errs.As(err).Message)
		}
	} else if c.UpstreamAll {
		return usagef("-upstream-all needs -upstream: the URL every public request is forwarded to")
	}
	if c.UpstreamTimeout <= 0 {
		return usagef("-upstream-timeout must be positive, not %s", c.UpstreamTimeout)
	}
	return nil
}

// upstreamConfig sets the forwarding and the recording of cfg from c's
// flags, making the -record folder, and prints where requests go.
func upstreamConfig(cfg *httpapi.Config, c Config, stdout io.Writer) error {
	cfg.UpstreamAll, cfg.UpstreamTimeout, cfg.RecordRepeats = c.UpstreamAll, c.UpstreamTimeout, c.RecordRepeats
	if c.Upstream != "" {
		u, err := recording.ParseTarget(c.Upstream)
		if err != nil {
			return usagef("-upstream: %s", errs.As(err).Message)
		}
		cfg.Upstream = u
		which := "requests no route and no stub answers"
		if c.UpstreamAll {
			which = "every public request"
		}
		fmt.Fprintf(stdout, "upstream %s: %s\n", u, which)
	}
	if c.Record != "" {
		rec, err := recording.NewRecorder(recording.Options{Dir: c.Record, Repeats: c.RecordRepeats})
		if err != nil {
			return fmt.Errorf("-record: %w", err)
		}
		cfg.Record = rec
		fmt.Fprintf(stdout, "recording into %s\n", c.Record)
	}
	return nil
}
