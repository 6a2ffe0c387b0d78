package marketplacetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/marketplace/marketplace"
)

// ResetClock is Reset with the clock brought back to the time the server
// started at (WithStart, else DefaultStart), so that every case of a
// property test replays from the same state at the same instant, as on a
// fresh server but at the cost of a restore. The clock moves back only
// here: the state that remembers later times goes in the same step.
func (s *Server) ResetClock() error {
	return s.Marketplace.Restore(context.Background(), s.initial, marketplace.RestoreOptions{Clock: s.start})
}

// StartTime returns the time the server's clock started at, which
// ResetClock brings it back to.
func (s *Server) StartTime() time.Time { return s.start }

// DoWith is Do with headers (x-version on a stock PUT, X-Idempotency-Key,
// ...), set after the client's own: a header given here replaces the
// client's Authorization or Content-Type.
func (c *Client) DoWith(ctx context.Context, method, path string, body any, header http.Header) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}
