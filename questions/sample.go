package questions

import (
	"context"
	"time"
)

// Sample is what the response-time computation needs of one question.
type Sample struct {
	QuestionID int64
	SellerID   int64
	BuyerID    int64
	ItemID     string
	Status     string
	// Asked is when the question was created.
	Asked time.Time
	// Answered is when it was answered; zero when it has no answer.
	Answered time.Time
}

// SampleSource is where the response-time refresh reads questions from. The
// questions Service implements it over its indexes.
type SampleSource interface {
	// SellersWithQuestionsSince returns, in increasing order, the sellers that
	// received at least one question asked at or after since.
	SellersWithQuestionsSince(ctx context.Context, since time.Time) ([]int64, error)
	// SellerSamplesSince returns the seller's questions asked at or after
	// since, oldest first.
	SellerSamplesSince(ctx context.Context, sellerID int64, since time.Time) ([]Sample, error)
}
