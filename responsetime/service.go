package responsetime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
)

// SampleSource is where the refresh reads questions from. The questions
// Service implements it over its indexes.
type SampleSource interface {
	// SellersWithQuestionsSince returns, in increasing order, the sellers that
	// received at least one question asked at or after since.
	SellersWithQuestionsSince(ctx context.Context, since time.Time) ([]int64, error)
	// SellerSamplesSince returns the seller's questions asked at or after
	// since, oldest first.
	SellerSamplesSince(ctx context.Context, sellerID int64, since time.Time) ([]questions.Sample, error)
}

var _ SampleSource = (*questions.Service)(nil)

// Service keeps the sellers' response times: a refresh computes them
// from a SampleSource and stores them; a read is a key lookup. It is safe for
// concurrent use; refreshes run one at a time.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
	src   SampleSource

	mu    sync.Mutex // serializes refreshes
	zones sync.Map   // zone name -> *time.Location

	// holder and wall, when set (ShareStore), make Run take the refresh
	// lease before it refreshes.
	holder string
	wall   clock.Clock

	// observe, when set (ObserveRefresh), times every refresh.
	observe atomic.Pointer[func() func()]

	// enter, when set (HoldStateWith), is entered around each scheduled
	// refresh of Run.
	enter func() (leave func())
}

// New returns the response times kept in store, computed from
// src. The sellers' site time zones come from their user records (accounts)
// and the sites (g).
func New(store storage.Store, clk clock.Clock, g *geo.Service, src SampleSource) *Service {
	return &Service{store: store, clock: clk, geo: g, src: src}
}

// Get returns sellerID's figures of the latest refresh to caller, a signed-in
// user (CheckReader). Errors: Invalid (sellerID not positive), Forbidden
// (caller not a user), NotFound (the seller had no counted question at
// that refresh, or there was none yet), Internal.
func (r *Service) Get(ctx context.Context, caller, sellerID int64) (ResponseTime, error) {
	if err := CheckReader(caller, sellerID); err != nil {
		return ResponseTime{}, err
	}
	var rt ResponseTime
	err := r.store.View(ctx, func(tx storage.Tx) error {
		return kv.GetJSON(tx, responseTimeKey(sellerID), &rt)
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return ResponseTime{}, errs.WithCode(errs.NotFound, "not_found",
			fmt.Sprintf("Response time not found for user id: %d", sellerID))
	case err != nil:
		return ResponseTime{}, errs.Internalf(err, "read response time of %d", sellerID)
	}
	return rt, nil
}

// CheckReader is the rule of who may read a response time: any signed-in
// user may read any seller's figures, the seller's own token being only the
// usual case. The figures describe how the seller answers its buyers, which
// its public questions show to anyone anyway, and apps that compare sellers
// read them with their own user's token. A seller id that is not positive is
// Invalid, and a caller that is not a user (no id) is Forbidden.
func CheckReader(caller, sellerID int64) error {
	if sellerID <= 0 {
		return errs.Invalidf("Invalid user_id: %d. It must be a positive integer", sellerID)
	}
	if caller <= 0 {
		return errs.Forbiddenf("A response time is read with a user's access token")
	}
	return nil
}

// LastRefresh returns the calculation time of the latest refresh, and false
// when none has run. Errors: Internal.
func (r *Service) LastRefresh(ctx context.Context) (time.Time, bool, error) {
	var rec refreshRecord
	err := r.store.View(ctx, func(tx storage.Tx) error {
		return kv.GetJSON(tx, responseTimeLastKey(), &rec)
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, errs.Internalf(err, "read last response time refresh")
	}
	return rec.At, true, nil
}
