// Package idempotency makes a request that creates something safe to retry:
// a request that carries a key (the X-Idempotency-Key header) is carried out
// once per key and caller, and a retry with the same key gets the first
// answer again, without a second write.
//
// It is exactly once, not best effort: the key's record is written in the
// same transaction as the request's first write (Guard, which the engine's
// gated store applies to every Update of a request holding a Claim), so the
// record exists if and only if the request wrote. Two requests with one key
// cannot both write: each reads the record in its transaction, and the
// store's serializable transactions retry the one that loses the race,
// which then finds the winner's record. The answer is added to the record
// once the request has been answered (Finish); a retry finds it and gets it
// again, or, when the first attempt wrote but its answer was lost (a crash,
// a commit whose outcome the store could not tell), is refused: never
// carried out twice.
//
// Records expire Retention after they were made, by the engine's clock;
// Sweep removes expired ones.
package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Retention is how long a key names its request: a record older than this,
// by the engine's clock, counts as absent.
const Retention = 24 * time.Hour

// MaxKeyLength bounds a key, in bytes (a UUID has 36).
const MaxKeyLength = 128

// Header is the HTTP header that carries the key.
const Header = "X-Idempotency-Key"

// Caller is whom a key belongs to: the operator, or a user through the
// token of one application (App 0 for a token the operator issued). Keys of
// different callers never meet.
type Caller struct {
	Operator bool
	User     int64
	App      int64
}

// Request is what a key names: the caller's request, told apart by its
// method, its path (with the query that counts), its body and the request
// headers the route reads (Vary, such as "x-version: 3").
type Request struct {
	Caller Caller
	Key    string
	Method string
	Path   string
	Body   []byte
	Vary   []string
}

// digest is the hash of what, beside the method and path, makes two
// requests the same: the headers that count, then the body.
func (r Request) digest() string {
	h := sha256.New()
	for _, v := range r.Vary {
		fmt.Fprintf(h, "%d:%s\n", len(v), v)
	}
	h.Write(r.Body)
	return hex.EncodeToString(h.Sum(nil))
}

// Answer is a request's answer as it is given again: status, the headers
// that matter (in order) and the body.
type Answer struct {
	Status  int         `json:"status"`
	Headers [][2]string `json:"headers,omitempty"`
	Body    []byte      `json:"body"`
}

// record is a key's record.
type record struct {
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Digest string    `json:"digest"`
	Nonce  string    `json:"nonce"`
	At     time.Time `json:"at"`
	Answer *Answer   `json:"answer,omitempty"`
}

// live reports whether rec still names its request at now.
func (rec *record) live(now time.Time) bool { return now.Before(rec.At.Add(Retention)) }

// Service keeps the records of idempotency keys.
type Service struct {
	store storage.Store
	clock clock.Clock
	// holder and wall take the sweep's lease (ShareStore).
	holder string
	wall   clock.Clock
}

// New returns the service over store, on the engine's clock clk, by which
// records expire.
func New(store storage.Store, clk clock.Clock) *Service {
	return &Service{store: store, clock: clk}
}

// CheckKey refuses a key that is not 1 to MaxKeyLength visible ASCII
// characters (letters, digits and punctuation; no spaces). Errors: Invalid.
func CheckKey(key string) error {
	ok := len(key) > 0 && len(key) <= MaxKeyLength
	for i := 0; ok && i < len(key); i++ {
		ok = key[i] > ' ' && key[i] < 0x7f
	}
	if !ok {
		return errs.WithCode(errs.Invalid, "invalid_idempotency_key", fmt.Sprintf(
			"Invalid %s: it must be 1 to %d characters, ASCII letters, digits and punctuation, without spaces", Header, MaxKeyLength))
	}
	return nil
}

// Begin looks the request's key up. A key that names nothing (never used by
// this caller, or expired) gives a Claim: the request runs with it in its
// context (WithClaim), then Finish records its answer. A key whose request
// was answered gives that answer, to be given again as it is, when req is
// that request. Errors: Invalid for a bad key (CheckKey); Conflict when the
// key names another request (another method, path or body), or a request
// whose answer is not there (it is being carried out, or it was and its
// answer was lost): either way req is not carried out; the storage's.
func (s *Service) Begin(ctx context.Context, req Request) (*Answer, *Claim, error) {
	if err := CheckKey(req.Key); err != nil {
		return nil, nil, err
	}
	c := &Claim{s: s, key: recKey(req.Caller, req.Key), req: req, digest: req.digest(), at: s.clock.Now().UTC()}
	var rec record
	found := false
	err := s.store.View(ctx, func(tx storage.Tx) error {
		err := kv.GetJSON(tx, c.key, &rec)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return nil, nil, errs.Internalf(err, "read idempotency key")
	}
	if found && rec.live(c.at) {
		if err := c.refusal(&rec); err != nil {
			return nil, nil, err
		}
		return rec.Answer, nil, nil
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	c.nonce = hex.EncodeToString(nonce[:])
	return nil, c, nil
}

// Finish records a's answer for c's request, when that request wrote (its
// record is there with c's nonce); otherwise it records nothing, so that a
// request refused before it changed anything may be sent again, corrected,
// with the same key. Errors: the storage's.
func (s *Service) Finish(ctx context.Context, c *Claim, a Answer) error {
	if !c.Written() {
		return nil
	}
	// Never under the claim: this Update is not the request's own.
	ctx = context.WithValue(ctx, claimKey{}, (*Claim)(nil))
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		var rec record
		err := kv.GetJSON(tx, c.key, &rec)
		if errors.Is(err, storage.ErrNotFound) {
			return nil // the write was not committed after all
		}
		if err != nil {
			return err
		}
		if rec.Nonce != c.nonce {
			return nil
		}
		rec.Answer = &a
		return kv.SetJSON(tx, c.key, rec)
	})
	if err != nil {
		return errs.Internalf(err, "record the answer of an idempotent request")
	}
	return nil
}
