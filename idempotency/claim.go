package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Claim is a request's hold on its key while it runs, from Begin. It is
// safe for concurrent use.
type Claim struct {
	s      *Service
	key    []byte
	req    Request
	digest string
	nonce  string
	at     time.Time

	// written: an Update of the request set the record (it may yet have
	// failed to commit; Finish looks).
	written atomic.Bool
	// refused is the refusal found when another request holds the key.
	refused atomic.Pointer[errs.Error]
}

// Written reports whether one of the request's Updates wrote its record,
// which it did only together with a write of its own. The Update may have
// failed to commit even so: Finish reads the record to know.
func (c *Claim) Written() bool { return c.written.Load() }

// Refused returns the Conflict error that answers the request when, as it
// ran, its key turned out to be another request's (one with the same key,
// sent at the same time, wrote first); the request then wrote nothing. Nil
// otherwise.
func (c *Claim) Refused() error {
	if e := c.refused.Load(); e != nil {
		return e
	}
	return nil
}

type claimKey struct{}

// WithClaim returns ctx carrying c, so that the Updates made under it are
// guarded (Guard).
func WithClaim(ctx context.Context, c *Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// Guard returns fn as an Update under ctx is to run it: when ctx carries a
// Claim, fn runs in a transaction that also reads the claim's key, and that
// writes its record when fn writes anything (the record and the write
// commit together or not at all). A key held by another request makes the
// transaction fail before fn runs, with the claim's Refused error. Without
// a claim fn is returned as it is.
func Guard(ctx context.Context, fn func(storage.Tx) error) func(storage.Tx) error {
	c, _ := ctx.Value(claimKey{}).(*Claim)
	if c == nil {
		return fn
	}
	return c.guard(fn)
}

func (c *Claim) guard(fn func(storage.Tx) error) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		var rec record
		err := kv.GetJSON(tx, c.key, &rec)
		found := err == nil
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if found && rec.Nonce == c.nonce {
			return fn(tx) // marked by an earlier Update of this request
		}
		if found && rec.live(c.at) {
			e := c.refusal(&rec)
			if e == nil {
				// The same request, sent twice at once: the other one
				// wrote first, and this one is not carried out.
				e = unanswered(c.req)
			}
			c.refused.Store(e)
			return e
		}
		w := &writeWatch{Tx: tx}
		if err := fn(w); err != nil {
			return err
		}
		if !w.wrote {
			return nil
		}
		if found {
			// An expired record of an earlier request: its place in the
			// expiry index goes with it.
			if err := tx.Delete(expKey(c.key, rec.At.UnixNano())); err != nil {
				return err
			}
		}
		mark := record{Method: c.req.Method, Path: c.req.Path, Digest: c.digest, Nonce: c.nonce, At: c.at}
		if err := kv.SetJSON(tx, c.key, mark); err != nil {
			return err
		}
		if err := tx.Set(expKey(c.key, c.at.UnixNano()), nil); err != nil {
			return err
		}
		c.written.Store(true)
		return nil
	}
}

// refusal is the error that answers c's request given the live record rec
// of its key: nil when rec is c's request and answered.
func (c *Claim) refusal(rec *record) *errs.Error {
	if rec.Method != c.req.Method || rec.Path != c.req.Path {
		return errs.WithCode(errs.Conflict, "idempotency_key_reused", fmt.Sprintf(
			"%s %q was already used for %s %s: a key names one request; send a new key for a new request",
			Header, c.req.Key, rec.Method, rec.Path))
	}
	if rec.Digest != c.digest {
		return errs.WithCode(errs.Conflict, "idempotency_key_reused", fmt.Sprintf(
			"%s %q was already used for a %s %s with another body: a key names one request; send a new key for a new request",
			Header, c.req.Key, rec.Method, rec.Path))
	}
	if rec.Answer == nil {
		return unanswered(c.req)
	}
	return nil
}

// unanswered refuses a request whose key names a request carried out (or
// being carried out) whose answer is not there.
func unanswered(req Request) *errs.Error {
	return errs.WithCode(errs.Conflict, "idempotent_request_unanswered", fmt.Sprintf(
		"The request with %s %q was already carried out, or is being carried out, and its answer is not available: it is not carried out again; read the resource to learn its outcome",
		Header, req.Key))
}

// writeWatch is a transaction that notes whether it was written.
type writeWatch struct {
	storage.Tx
	wrote bool
}

func (w *writeWatch) Set(key, value []byte) error {
	w.wrote = true
	return w.Tx.Set(key, value)
}

func (w *writeWatch) Delete(key []byte) error {
	w.wrote = true
	return w.Tx.Delete(key)
}

// Prefetch keeps the backend's reads of several keys at once.
func (w *writeWatch) Prefetch(keys [][]byte) error { return storage.Prefetch(w.Tx, keys...) }

// DrawLater passes draws on to the transaction beneath, where it can.
func (w *writeWatch) DrawLater(names []string) (func() ([]uint64, error), bool) {
	if d, ok := w.Tx.(storage.TxDrawer); ok {
		return d.DrawLater(names)
	}
	return nil, false
}

var _ storage.Prefetcher = (*writeWatch)(nil)
