package feedback

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of feedback. Every key starts with "fbk".
//
//	fbk/f/<feedback_id>         -> record (JSON): the feedback and what it was given on
//	fbk/o/<order_id>/<role>     -> feedback id (keycodec Int): the order's feedback by its author's role (seller, buyer)
//
// Feedback ids are drawn from the store's "feedback" sequence from
// firstFeedbackID: 13 digits, as the public API's.
const (
	feedbackSequence = "feedback"
	firstFeedbackID  = 5040000000001
)

func feedbackKey(id int64) []byte { return keycodec.New("fbk/f").Int(id) }

func orderSideKey(orderID int64, role string) []byte {
	return keycodec.New("fbk/o").Int(orderID).Str(role)
}
