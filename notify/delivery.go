package notify

import (
	"encoding/json"
	"time"
)

// Notification is the JSON body POSTed to a callback URL: the spec's
// Notification object plus the public API's _id, application_id and
// attempts.
type Notification struct {
	ID            string `json:"_id"`
	Topic         string `json:"topic"`
	Resource      string `json:"resource"`
	UserID        int64  `json:"user_id"`
	ApplicationID int64  `json:"application_id"`
	// Actions is the event's action on the topics that have subtopics
	// (messages, post_purchase), absent on the others.
	Actions  []string `json:"actions,omitempty"`
	Attempts int      `json:"attempts"`
	Sent     string   `json:"sent"`
	Received string   `json:"received"`
}

// Request is what was sent in an attempt.
type Request struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Data    json.RawMessage   `json:"data"`
}

// Response is what the receiver answered in an attempt. HTTPCode is 0 when
// there was no answer (refused, timed out); Error then says why.
type Response struct {
	// ReqTime is how long the POST took, in milliseconds.
	ReqTime  int64             `json:"req_time"`
	HTTPCode int               `json:"http_code"`
	Body     string            `json:"body"`
	Headers  map[string]string `json:"headers"`
	Error    string            `json:"error,omitempty"`
}

// Delivery states.
const (
	StatePending = "pending"
	StateMissed  = "missed"
)

// Delivery is one event on its way to one application.
type Delivery struct {
	ID             uint64    `json:"id"`
	NotificationID string    `json:"_id"`
	ApplicationID  int64     `json:"application_id"`
	Event          Event     `json:"event"`
	State          string    `json:"state"`
	Attempts       int       `json:"attempts"`
	FirstAttempt   time.Time `json:"first_attempt"`
	NextAttempt    time.Time `json:"next_attempt"`
	MissedAt       time.Time `json:"missed_at"`
	LastRequest    *Request  `json:"last_request,omitempty"`
	LastResponse   *Response `json:"last_response,omitempty"`
}

// Attempt is one POST of a notification, as the operator lists them.
type Attempt struct {
	NotificationID string   `json:"_id"`
	DeliveryID     uint64   `json:"delivery_id"`
	ApplicationID  int64    `json:"application_id"`
	Topic          string   `json:"topic"`
	Resource       string   `json:"resource"`
	UserID         int64    `json:"user_id"`
	Attempt        int      `json:"attempt"`
	Sent           string   `json:"sent"`
	Request        Request  `json:"request"`
	Response       Response `json:"response"`
	// Outcome is acknowledged, retry or missed.
	Outcome     string `json:"outcome"`
	NextAttempt string `json:"next_attempt,omitempty"`
	// Redelivery marks an attempt the operator asked for (Redeliver).
	Redelivery bool `json:"redelivery,omitempty"`
}

// Attempt outcomes.
const (
	OutcomeAcknowledged = "acknowledged"
	OutcomeRetry        = "retry"
	OutcomeMissed       = "missed"
)
