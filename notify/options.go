package notify

import (
	"time"
)

// Delivery policy. Only a 200 acknowledges (spec, Events rule 4). Retries
// back off exponentially from retryBase with ±25% jitter, so that the 8
// attempts of a notification fit in well under the hour (the sum of the
// delays is at most about 40 minutes); retryWindow still bounds them when the
// clock jumps.
const (
	// MaxAttempts is how many POSTs a notification gets before it is missed.
	MaxAttempts = 8
	retryBase   = 15 * time.Second
	retryWindow = time.Hour
	retention   = 48 * time.Hour
	// DefaultTimeout bounds a POST when Options.Timeout is not set.
	DefaultTimeout = 500 * time.Millisecond
	// UserAgent is sent with every notification POST.
	UserAgent = "marketplace-notifications/1.0"
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body,
	// keyed with the application's secret.
	SignatureHeader = "X-Signature"
	// TimeLayout is how received and sent are written: ISO 8601 in UTC with
	// milliseconds, as the public API's notifications show them.
	TimeLayout = "2006-01-02T15:04:05.000Z"
)

// Options configure delivery. The zero value is the server's default.
type Options struct {
	// AllowPrivateCallbacks lets callbacks reach loopback and private
	// addresses (a local emulator's receivers). Link-local and cloud metadata
	// addresses are refused regardless.
	AllowPrivateCallbacks bool
	// Timeout bounds each POST, from dialing to the end of the response
	// (default 500 ms, what the public API asks of its receivers).
	Timeout time.Duration
	// Concurrency bounds the POSTs in flight (default 32).
	Concurrency int
	// PerApplication bounds the POSTs in flight to one application (default
	// 8), so that a slow receiver cannot take every slot.
	PerApplication int
	// PollInterval is how often, in real time, Run looks for events written
	// by other processes and for due retries (default 5 ms). An Append in this
	// process and a manual clock's move wake it at once.
	PollInterval time.Duration
	// Lease is how long the delivery lease lasts on a shared store (see
	// ShareStore; default 10 s): how long notifications wait when the
	// process delivering them dies.
	Lease time.Duration
	// OnAttempt, when set, is told the result of every POST: AttemptAcked
	// (the receiver answered 200), AttemptRefused (another status) or
	// AttemptFailed (no answer). It is the metrics' hook and must be cheap.
	OnAttempt func(result string)
}

// Results of a POST, as OnAttempt is told them.
const (
	AttemptAcked   = "acknowledged"
	AttemptRefused = "refused"
	AttemptFailed  = "failed"
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.PerApplication <= 0 {
		o.PerApplication = 8
	}
	if o.PerApplication > o.Concurrency {
		o.PerApplication = o.Concurrency
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Second
	}
	return o
}
