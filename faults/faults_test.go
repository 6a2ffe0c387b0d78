package faults_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

func TestMain(m *testing.M) { teststore.Main(m) }

var start = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// backends runs fn on a store of the backend that MARKETPLACE_TEST_STORE
// names (internal/teststore); CI runs the package on every backend.
func backends(t *testing.T, fn func(t *testing.T, st storage.Store)) {
	fn(t, teststore.New(t))
}

func mustCreate(tb testing.TB, s *faults.Service, in faults.NewRule) faults.Rule {
	tb.Helper()
	r, err := s.Create(context.Background(), in)
	if err != nil {
		tb.Fatalf("create %+v: %v", in, err)
	}
	return r
}

func req(method, route string, user, app int64) faults.Request {
	return faults.Request{Method: method, Route: route, Caller: func() (int64, int64) { return user, app }}
}

func decide(tb testing.TB, s *faults.Service, r faults.Request) (faults.Action, bool) {
	tb.Helper()
	a, ok, err := s.Decide(context.Background(), r)
	if err != nil {
		tb.Fatal(err)
	}
	return a, ok
}

func TestDecide_NoRulesFaultsNothingAndIsInactive(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	_, ok := decide(t, s, req("GET", "/items/{item_id}", 1, 0))
	is.True(!ok)         // no rule, no fault
	is.True(!s.Active()) // once read, an empty rule set costs one atomic load
}

func TestDecide_RuleMatchesMethodRouteAndUser(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		r := mustCreate(t, s, faults.NewRule{Method: ptr("post"), Route: ptr("/questions/{id}"), UserID: ptr[int64](7), Status: ptr(503)})
		is.Equal(*r.Method, "POST") // method is normalized
		is.True(s.Active())

		act, ok := decide(t, s, req("POST", "/questions/{question_id}", 7, 0))
		is.True(ok) // parameter names do not matter
		is.Equal(act.Status, 503)
		is.Equal(string(act.Body), `{"message":"Service not available","error":"service_not_available","status":503,"cause":[]}`)

		for _, other := range []faults.Request{
			req("GET", "/questions/{question_id}", 7, 0),
			req("POST", "/questions", 7, 0),
			req("POST", "/questions/{question_id}", 8, 0),
		} {
			_, ok := decide(t, s, other)
			is.True(!ok) // a rule faults only what it selects
		}
	})
}

func TestDecide_TimesCountDownThenTheRuleIsRemoved(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		ctx := context.Background()
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		r := mustCreate(t, s, faults.NewRule{Status: ptr(500), Times: ptr[int64](2)})
		_, ok := decide(t, s, req("GET", "/health", 0, 0))
		is.True(ok)
		got, err := s.Rule(ctx, r.ID)
		is.NoErr(err)
		is.Equal(*got.Times, int64(1)) // one time left
		_, ok = decide(t, s, req("GET", "/health", 0, 0))
		is.True(ok)
		_, ok = decide(t, s, req("GET", "/health", 0, 0))
		is.True(!ok) // used up
		rules, err := s.List(ctx)
		is.NoErr(err)
		is.Equal(len(rules), 0) // a used-up rule is removed
		is.True(!s.Active())
	})
}

func TestDecide_TimesAreExactAcrossServicesOnOneStore(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		clk := clock.NewManual(start)
		a := faults.New(st, clk, faults.Options{})
		b := faults.New(st, clk, faults.Options{})
		mustCreate(t, a, faults.NewRule{Status: ptr(429), Times: ptr[int64](5)})
		var fired atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					_, ok, err := s.Decide(context.Background(), req("GET", "/health", 0, 0))
					if err != nil {
						t.Error(err)
					}
					if ok {
						fired.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		is.Equal(fired.Load(), int64(5)) // two servers never use more times than the rule has
	})
}

func TestDecide_ProbabilityIsRepeatableWithTheSameSeed(t *testing.T) {
	is := is.New(t)
	pattern := func(seed uint64) string {
		s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{Seed: seed})
		mustCreate(t, s, faults.NewRule{Status: ptr(500), Probability: ptr(0.5)})
		var b strings.Builder
		for range 64 {
			if _, ok := decide(t, s, req("GET", "/health", 0, 0)); ok {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	p := pattern(42)
	is.Equal(p, pattern(42))  // same seed, same faults
	is.True(p != pattern(43)) // another seed, another pattern
	n := strings.Count(p, "x")
	is.True(n > 16 && n < 48) // about half of 64
}

func TestDecide_RateLimitPerUserOnTheEngineClock(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		clk := clock.NewManual(start)
		s := faults.New(st, clk, faults.Options{})
		r := mustCreate(t, s, faults.NewRule{RequestsPerMinute: ptr[int64](3)})
		is.Equal(*r.Status, 429)
		is.Equal(*r.Per, faults.PerUser)
		for i := range 3 {
			_, ok := decide(t, s, req("GET", "/health", 1, 0))
			is.True(!ok) // within the limit
			_ = i
		}
		act, ok := decide(t, s, req("GET", "/health", 1, 0))
		is.True(ok) // the fourth in the minute is refused
		is.Equal(act.Status, 429)
		is.Equal(string(act.Body), `{"message":"local_rate_limited","error":"local_rate_limited","status":429,"cause":[]}`)
		_, ok = decide(t, s, req("GET", "/health", 2, 0))
		is.True(!ok) // another user has a window of its own
		_, ok = decide(t, s, req("GET", "/health", 0, 0))
		is.True(!ok) // anonymous requests are not counted per user

		is.NoErr(clk.Advance(59 * time.Second))
		_, ok = decide(t, s, req("GET", "/health", 1, 0))
		is.True(ok) // still the same minute
		is.NoErr(clk.Advance(time.Second))
		_, ok = decide(t, s, req("GET", "/health", 1, 0))
		is.True(!ok) // a minute after the window opened, a new one opens
	})
}

func TestDecide_RateLimitPerApplication(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	mustCreate(t, s, faults.NewRule{RequestsPerMinute: ptr[int64](1), Per: ptr(faults.PerApplication)})
	_, ok := decide(t, s, req("GET", "/health", 1, 100))
	is.True(!ok)
	_, ok = decide(t, s, req("GET", "/health", 2, 100))
	is.True(ok) // another user of the same application shares its window
	_, ok = decide(t, s, req("GET", "/health", 2, 101))
	is.True(!ok) // another application has its own
}

func TestDecide_FirstFiringRuleDecidesAndLatencyAloneServes(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	slow := mustCreate(t, s, faults.NewRule{Route: ptr("/items/{item_id}"), LatencyMS: ptr[int64](250)})
	mustCreate(t, s, faults.NewRule{Status: ptr(500)})
	act, ok := decide(t, s, req("GET", "/items/{item_id}", 0, 0))
	is.True(ok)
	is.Equal(act.RuleID, slow.ID)
	is.Equal(act.Latency, 250*time.Millisecond)
	is.Equal(act.Status, 0) // latency alone: the request is then served
	act, ok = decide(t, s, req("GET", "/health", 0, 0))
	is.True(ok)
	is.Equal(act.Status, 500)
}

func TestDecide_CallerIsAskedOnlyWhenARuleNeedsIt(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	mustCreate(t, s, faults.NewRule{Route: ptr("/health"), Status: ptr(500)})
	asked := 0
	_, ok := decide(t, s, faults.Request{Method: "GET", Route: "/health", Caller: func() (int64, int64) { asked++; return 1, 0 }})
	is.True(ok)
	is.Equal(asked, 0) // no rule selects a user: the token is never read
}

func TestService_RulesOfAnotherServiceAreSeenAfterRefreshOrInvalidate(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	st := teststore.New(t)
	a := faults.New(st, clock.NewManual(start), faults.Options{})
	b := faults.New(st, clock.NewManual(start), faults.Options{})
	_, ok := decide(t, b, req("GET", "/health", 0, 0))
	is.True(!ok)
	r := mustCreate(t, a, faults.NewRule{Status: ptr(500)})
	_, ok = decide(t, b, req("GET", "/health", 0, 0))
	is.True(!ok) // b still has its rules in memory
	is.NoErr(b.Refresh(ctx))
	_, ok = decide(t, b, req("GET", "/health", 0, 0))
	is.True(ok) // refreshed
	is.NoErr(a.Delete(ctx, r.ID))
	b.Invalidate()
	_, ok = decide(t, b, req("GET", "/health", 0, 0))
	is.True(!ok) // invalidated: read again
}

func TestDelete(t *testing.T) {
	backends(t, func(t *testing.T, st storage.Store) {
		is := is.New(t)
		ctx := context.Background()
		s := faults.New(st, clock.NewManual(start), faults.Options{})
		r1 := mustCreate(t, s, faults.NewRule{Status: ptr(500)})
		mustCreate(t, s, faults.NewRule{RequestsPerMinute: ptr[int64](1)})
		t.Run("ErrNotFound", func(t *testing.T) {
			err := s.Delete(ctx, r1.ID+100)
			is.True(errs.Is(err, errs.NotFound))
		})
		t.Run("OK", func(t *testing.T) {
			is.NoErr(s.Delete(ctx, r1.ID))
			rules, err := s.List(ctx)
			is.NoErr(err)
			is.Equal(len(rules), 1)
			n, err := s.DeleteAll(ctx)
			is.NoErr(err)
			is.Equal(n, 1)
			rules, err = s.List(ctx)
			is.NoErr(err)
			is.Equal(len(rules), 0)
			// Nothing of the rules is left in the store.
			is.NoErr(st.View(ctx, func(tx storage.Tx) error {
				it := tx.Iterate(storage.Prefix(keycodec.New("flt")))
				defer it.Close()
				if it.Valid() {
					t.Errorf("left behind: %q", it.Key())
				}
				return nil
			}))
		})
	})
}

func TestCreate_BadRulesAreRefusedWithTheFieldNamed(t *testing.T) {
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	for _, tc := range []struct {
		name string
		in   faults.NewRule
		want string
	}{
		{"nothing to do", faults.NewRule{Route: ptr("/health")}, "The fields [status, fault, latency_ms, bytes_per_second or requests_per_minute] are required"},
		{"method", faults.NewRule{Method: ptr("FETCH"), Status: ptr(500)}, "Invalid method: FETCH"},
		{"route without slash", faults.NewRule{Route: ptr("items"), Status: ptr(500)}, "Invalid route: items"},
		{"route with query", faults.NewRule{Route: ptr("/items?ids=1"), Status: ptr(500)}, "without a query"},
		{"operator route", faults.NewRule{Route: ptr("/operator/faults"), Status: ptr(500)}, "Operator routes are never faulted"},
		{"user_id", faults.NewRule{UserID: ptr[int64](0), Status: ptr(500)}, "Invalid user_id: 0"},
		{"application_id", faults.NewRule{ApplicationID: ptr[int64](-1), Status: ptr(500)}, "Invalid application_id: -1"},
		{"status", faults.NewRule{Status: ptr(200)}, "Invalid status: 200"},
		{"body without status", faults.NewRule{LatencyMS: ptr[int64](1), Body: json.RawMessage(`{}`)}, "Invalid body"},
		{"latency", faults.NewRule{LatencyMS: ptr[int64](30001)}, "Invalid latency_ms: 30001"},
		{"probability", faults.NewRule{Status: ptr(500), Probability: ptr(0.0)}, "Invalid probability: 0"},
		{"times", faults.NewRule{Status: ptr(500), Times: ptr[int64](0)}, "Invalid times: 0"},
		{"requests_per_minute", faults.NewRule{RequestsPerMinute: ptr[int64](0)}, "Invalid requests_per_minute: 0"},
		{"rate with times", faults.NewRule{RequestsPerMinute: ptr[int64](5), Times: ptr[int64](1)}, "neither probability nor times"},
		{"per", faults.NewRule{RequestsPerMinute: ptr[int64](5), Per: ptr("ip")}, "Invalid per: ip"},
		{"per without rate", faults.NewRule{Status: ptr(500), Per: ptr("user")}, "Invalid per"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(context.Background(), tc.in)
			e := errs.As(err)
			if e == nil || e.Kind != errs.Invalid || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("err = %v, want Invalid with %q", err, tc.want)
			}
		})
	}
	rules, err := s.List(context.Background())
	if err != nil || len(rules) != 0 {
		t.Fatalf("a refused rule was stored: %v %v", rules, err)
	}
}

func TestCreate_BodyGivenIsAnsweredAsItIs(t *testing.T) {
	is := is.New(t)
	s := faults.New(teststore.New(t), clock.NewManual(start), faults.Options{})
	mustCreate(t, s, faults.NewRule{Status: ptr(418), Body: json.RawMessage(`{"teapot":true}`)})
	act, ok := decide(t, s, req("GET", "/health", 0, 0))
	is.True(ok)
	is.Equal(string(act.Body), `{"teapot":true}`)
}

func TestDefaultBody(t *testing.T) {
	for status, want := range map[int]string{
		429: `{"message":"local_rate_limited","error":"local_rate_limited","status":429,"cause":[]}`,
		500: `{"message":"Internal Server Error","error":"internal_server_error","status":500,"cause":[]}`,
		503: `{"message":"Service not available","error":"service_not_available","status":503,"cause":[]}`,
		404: `{"message":"Not Found","error":"not_found","status":404,"cause":[]}`,
	} {
		if got := string(faults.DefaultBody(status)); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
}

func TestTemplateKey_DropsParameterNames(t *testing.T) {
	is := is.New(t)
	is.Equal(faults.TemplateKey("/users/{seller_id}/items/search"), faults.TemplateKey("/users/{user_id}/items/search"))
	is.Equal(faults.TemplateKey("/users/{user_id}"), "/users/{}")
	is.Equal(faults.TemplateKey("/health"), "/health")
}
