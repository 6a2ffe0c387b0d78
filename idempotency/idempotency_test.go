package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/idempotency"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

func TestMain(m *testing.M) { teststore.Main(m) }

var start = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// world is the service on the test backend, with a store that guards its
// Updates as the engine's gated store does.
type world struct {
	st  storage.Store
	clk *clock.Manual
	s   *idempotency.Service
}

func newWorld(t *testing.T) *world {
	st := guarded{teststore.New(t)}
	clk := clock.NewManual(start)
	return &world{st: st, clk: clk, s: idempotency.New(st, clk)}
}

// guarded applies idempotency.Guard to every Update, as the engine's gate
// does.
type guarded struct{ storage.Store }

func (g guarded) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return g.Store.Update(ctx, idempotency.Guard(ctx, fn))
}

func ask(key, body string) idempotency.Request {
	return idempotency.Request{Caller: idempotency.Caller{User: 7}, Key: key, Method: "POST", Path: "/questions", Body: []byte(body)}
}

// write is a request's own write: one key of its thing.
func (w *world) write(ctx context.Context, thing string) error {
	return w.st.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("thing/"+thing), []byte("x")) })
}

func (w *world) count(t *testing.T) int {
	t.Helper()
	n := 0
	err := w.st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix([]byte("thing/")))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run carries req out as the HTTP server does: Begin, the write under the
// claim, Finish with answer. It returns the answer given again, if any.
func (w *world) run(t *testing.T, req idempotency.Request, thing string, answer idempotency.Answer) (*idempotency.Answer, error) {
	t.Helper()
	ctx := context.Background()
	replay, claim, err := w.s.Begin(ctx, req)
	if err != nil || replay != nil {
		return replay, err
	}
	if err := w.write(idempotency.WithClaim(ctx, claim), thing); err != nil {
		if r := claim.Refused(); r != nil {
			return nil, r
		}
		t.Fatal(err)
	}
	if err := w.s.Finish(ctx, claim, answer); err != nil {
		t.Fatal(err)
	}
	return nil, nil
}

var created = idempotency.Answer{Status: 201, Headers: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"id":1}`)}

func TestBegin_ARetryOfAnAnsweredRequestGetsItsAnswerWithoutWriting(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	replay, err := w.run(t, ask("k1", `{"text":"a"}`), "q1", created)
	is.NoErr(err)
	is.True(replay == nil) // the first request runs
	replay, err = w.run(t, ask("k1", `{"text":"a"}`), "q2", idempotency.Answer{Status: 500})
	is.NoErr(err)
	is.True(replay != nil)                    // the retry is answered from the record
	is.Equal(replay.Status, 201)              // the first status
	is.Equal(string(replay.Body), `{"id":1}`) // the first body
	is.Equal(replay.Headers, created.Headers) // the first headers
	is.Equal(w.count(t), 1)                   // one write
}

func TestBegin_TheSameKeyWithAnotherBodyIsRefusedAsConflict(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, err := w.run(t, ask("k1", `{"text":"a"}`), "q1", created)
	is.NoErr(err)
	_, err = w.run(t, ask("k1", `{"text":"b"}`), "q2", created)
	is.True(errs.Is(err, errs.Conflict))
	is.Equal(errs.As(err).Message, `X-Idempotency-Key "k1" was already used for a POST /questions with another body: a key names one request; send a new key for a new request`)
	is.Equal(w.count(t), 1)
}

func TestBegin_TheSameKeyOnAnotherRouteIsRefusedAsConflict(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, err := w.run(t, ask("k1", `{}`), "q1", created)
	is.NoErr(err)
	other := ask("k1", `{}`)
	other.Path = "/answers"
	_, err = w.run(t, other, "a1", created)
	is.True(errs.Is(err, errs.Conflict))
	is.Equal(errs.As(err).Message, `X-Idempotency-Key "k1" was already used for POST /questions: a key names one request; send a new key for a new request`)
	is.Equal(w.count(t), 1)
}

func TestBegin_TheSameRequestHeadersThatCountTellRequestsApart(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	put := ask("k1", `{}`)
	put.Vary = []string{"X-Version: 1"}
	_, err := w.run(t, put, "s1", created)
	is.NoErr(err)
	put.Vary = []string{"X-Version: 2"}
	_, err = w.run(t, put, "s2", created)
	is.True(errs.Is(err, errs.Conflict)) // another version is another request
}

func TestBegin_KeysOfOtherCallersNeverMeet(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, err := w.run(t, ask("k1", `{}`), "q1", created)
	is.NoErr(err)
	for _, c := range []idempotency.Caller{{User: 8}, {User: 7, App: 3}, {Operator: true}} {
		req := ask("k1", `{}`)
		req.Caller = c
		replay, err := w.run(t, req, fmt.Sprintf("q-%v", c), created)
		is.NoErr(err)
		is.True(replay == nil) // another caller's key is a key of its own
	}
	is.Equal(w.count(t), 4)
}

func TestBegin_AWriteWhoseAnswerWasLostIsNeverCarriedOutAgain(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ctx := context.Background()
	_, claim, err := w.s.Begin(ctx, ask("k1", `{}`))
	is.NoErr(err)
	is.NoErr(w.write(idempotency.WithClaim(ctx, claim), "q1"))
	// No Finish: the process died, or its answer was a 5xx.
	_, err = w.run(t, ask("k1", `{}`), "q2", created)
	is.True(errs.Is(err, errs.Conflict))
	is.Equal(errs.As(err).Message, `The request with X-Idempotency-Key "k1" was already carried out, or is being carried out, and its answer is not available: it is not carried out again; read the resource to learn its outcome`)
	is.Equal(w.count(t), 1)
}

func TestGuard_AnUpdateThatWritesNothingRecordsNothing(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ctx := context.Background()
	_, claim, err := w.s.Begin(ctx, ask("k1", `{"text":""}`))
	is.NoErr(err)
	err = w.st.Update(idempotency.WithClaim(ctx, claim), func(tx storage.Tx) error {
		_, err := tx.Get([]byte("thing/q1"))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	})
	is.NoErr(err)
	is.True(!claim.Written())
	is.NoErr(w.s.Finish(ctx, claim, idempotency.Answer{Status: 400}))
	// A corrected request with the same key runs.
	replay, err := w.run(t, ask("k1", `{"text":"ok"}`), "q1", created)
	is.NoErr(err)
	is.True(replay == nil)
	is.Equal(w.count(t), 1)
}

func TestGuard_AFailedUpdateLeavesNoRecord(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ctx := context.Background()
	_, claim, err := w.s.Begin(ctx, ask("k1", `{}`))
	is.NoErr(err)
	boom := errors.New("refused after a write")
	err = w.st.Update(idempotency.WithClaim(ctx, claim), func(tx storage.Tx) error {
		if err := tx.Set([]byte("thing/q1"), nil); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.NoErr(w.s.Finish(ctx, claim, created)) // finds no record: records nothing
	replay, err := w.run(t, ask("k1", `{}`), "q1", created)
	is.NoErr(err)
	is.True(replay == nil) // the key names nothing: the request runs
	is.Equal(w.count(t), 1)
}

func TestGuard_LaterUpdatesOfTheSameRequestPass(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ctx := context.Background()
	_, claim, err := w.s.Begin(ctx, ask("k1", `{}`))
	is.NoErr(err)
	cctx := idempotency.WithClaim(ctx, claim)
	is.NoErr(w.write(cctx, "q1"))
	is.NoErr(w.write(cctx, "q1-index")) // the request's own record lets it on
	is.NoErr(w.s.Finish(ctx, claim, created))
	is.Equal(w.count(t), 2)
}

func TestGuard_TwoRequestsWithOneKeyAtOnceWriteOnce(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ctx := context.Background()
	const n = 8
	claims := make([]*idempotency.Claim, n)
	for i := range claims {
		_, c, err := w.s.Begin(ctx, ask("k1", `{}`))
		is.NoErr(err)
		is.True(c != nil) // none has written yet: every one gets a claim
		claims[i] = c
	}
	var wg sync.WaitGroup
	errsOf := make([]error, n)
	for i, c := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errsOf[i] = w.write(idempotency.WithClaim(ctx, c), "q"+itoa(int64(i)))
		}()
	}
	wg.Wait()
	wrote := 0
	for i, c := range claims {
		if errsOf[i] == nil {
			wrote++
			continue
		}
		is.True(errs.Is(c.Refused(), errs.Conflict)) // the others are refused
	}
	is.Equal(wrote, 1)
	is.Equal(w.count(t), 1)
}

func TestBegin_ARecordOlderThanRetentionCountsAsAbsent(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, err := w.run(t, ask("k1", `{}`), "q1", created)
	is.NoErr(err)
	is.NoErr(w.clk.Advance(idempotency.Retention - time.Nanosecond))
	replay, err := w.run(t, ask("k1", `{}`), "q2", created)
	is.NoErr(err)
	is.True(replay != nil) // still named just before the retention ends
	is.NoErr(w.clk.Advance(time.Nanosecond))
	replay, err = w.run(t, ask("k1", `{"other":"body"}`), "q2", created)
	is.NoErr(err)
	is.True(replay == nil) // expired: the key is free for a new request
	is.Equal(w.count(t), 2)
	replay, err = w.run(t, ask("k1", `{"other":"body"}`), "q3", created)
	is.NoErr(err)
	is.True(replay != nil) // and names the new one now
}

func TestSweep_RemovesExpiredRecordsAndKeepsLiveOnes(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	for _, k := range []string{"old1", "old2", "old3"} {
		_, err := w.run(t, ask(k, `{}`), k, created)
		is.NoErr(err)
	}
	is.NoErr(w.clk.Advance(time.Hour))
	_, err := w.run(t, ask("young", `{}`), "young", created)
	is.NoErr(err)
	is.NoErr(w.clk.Advance(idempotency.Retention - time.Hour))
	n, err := w.s.Sweep(context.Background())
	is.NoErr(err)
	is.Equal(n, 3) // the three made a day ago
	replay, err := w.run(t, ask("young", `{}`), "young2", created)
	is.NoErr(err)
	is.True(replay != nil) // the younger one stays
	n, err = w.s.Sweep(context.Background())
	is.NoErr(err)
	is.Equal(n, 0) // nothing left to sweep
}

func TestSweep_KeepsARecordMadeAgainAfterItsKeyExpired(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, err := w.run(t, ask("k1", `{}`), "q1", created)
	is.NoErr(err)
	is.NoErr(w.clk.Advance(idempotency.Retention))
	_, err = w.run(t, ask("k1", `{"second":true}`), "q2", created)
	is.NoErr(err)
	n, err := w.s.Sweep(context.Background())
	is.NoErr(err)
	is.Equal(n, 0) // the old entry went with its record's replacement
	replay, err := w.run(t, ask("k1", `{"second":true}`), "q3", created)
	is.NoErr(err)
	is.True(replay != nil)
}

func TestSweep_WorksThroughMoreThanABatch(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	total := idempotency.SweepBatch + 5
	for i := range total {
		_, err := w.run(t, ask("k"+itoa(int64(i)), `{}`), "t"+itoa(int64(i)), created)
		is.NoErr(err)
	}
	is.NoErr(w.clk.Advance(idempotency.Retention))
	n, err := w.s.Sweep(context.Background())
	is.NoErr(err)
	is.Equal(n, total)
}

func TestCheckKey_AKeyIsOneTo128VisibleASCIICharacters(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"5f0c6e1a-8d1b-4b7e-9a51-2f3c1d4e5a6b", true},
		{strings.Repeat("x", idempotency.MaxKeyLength), true},
		{"base64+/=_.:~!", true},
		{"", false},
		{strings.Repeat("x", idempotency.MaxKeyLength+1), false},
		{"with space", false},
		{"tab\t", false},
		{"ñandú", false},
		{"nul\x00", false},
		{"del\x7f", false},
	} {
		err := idempotency.CheckKey(tc.key)
		if tc.ok != (err == nil) {
			t.Errorf("CheckKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Errorf("CheckKey(%q) = %v, want Invalid", tc.key, err)
		}
	}
}

func TestBegin_ABadKeyIsRefusedAsInvalid(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	_, _, err := w.s.Begin(context.Background(), ask("bad key", `{}`))
	is.True(errs.Is(err, errs.Invalid))
	is.Equal(errs.As(err).Message, "Invalid X-Idempotency-Key: it must be 1 to 128 characters, ASCII letters, digits and punctuation, without spaces")
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
