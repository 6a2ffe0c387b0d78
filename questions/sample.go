package questions

import "time"

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
