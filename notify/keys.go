package notify

import (
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
)

// Key layout of notify. Every key starts with "ntf" (the outbox keys are in
// outbox.go).
//
//	ntf/app/<app_id>                             -> Application (JSON)
//	ntf/uapp/<owner_user_id>/<app_id>            -> empty; an owner's applications
//	ntf/delivery/<delivery_id>                   -> Delivery (JSON), pending or missed
//	ntf/due/<app_id>/<next_attempt_unix_nano>/<delivery> -> empty; an application's pending deliveries by due time
//	ntf/missed/<app_id>/<missed_unix_nano>/<delivery> -> empty; the missed feed, oldest first
//	ntf/attempt/<app_id>/<sent_unix_nano>/<delivery>/<n> -> Attempt (JSON), every POST made, in time order
//
// Application ids come from the store's sequence ApplicationSequence (the
// n-th is firstAppID-1+n) and delivery ids from DeliverySequence, both drawn
// outside any common key, so that concurrent registrations and fan-outs do
// not conflict. (Stores written before kept them as counters at ntf/seq/app
// and ntf/seq/delivery; the schema migration carries those over.)
//
// Attempt keys carry the time and the delivery rather than a sequence number:
// concurrent deliveries then write no common key, so their transactions do
// not conflict.
//
// An acknowledged delivery is deleted with its due key in the transaction that
// records the acknowledging attempt; a missed one moves from the due index to
// the missed index. Missed deliveries and attempts older than the retention
// (2 days) are pruned.

// firstAppID makes application ids look like the public API's long integers.
const firstAppID = 1000001

// ApplicationSequence names the sequence that numbers applications.
const ApplicationSequence = "applications"

// DeliverySequence names the sequence that numbers deliveries.
const DeliverySequence = "deliveries"

func appPrefix() []byte      { return keycodec.New("ntf/app") }
func appKey(id int64) []byte { return keycodec.Key(appPrefix()).Int(id) }
func ownerAppsPrefix(owner int64) []byte {
	return keycodec.New("ntf/uapp").Int(owner)
}
func ownerAppKey(owner, app int64) []byte { return keycodec.Key(ownerAppsPrefix(owner)).Int(app) }

func deliveryKey(id uint64) []byte { return keycodec.New("ntf/delivery").Uint(id) }

func duePrefix() []byte             { return keycodec.New("ntf/due") }
func appDuePrefix(app int64) []byte { return keycodec.Key(duePrefix()).Int(app) }
func dueKey(app int64, at time.Time, id uint64) []byte {
	return keycodec.Key(appDuePrefix(app)).Int(at.UnixNano()).Uint(id)
}

// dueKeyBefore is the end of app's due keys at or before t.
func dueKeyBefore(app int64, t time.Time) []byte {
	return keycodec.Key(appDuePrefix(app)).Int(t.UnixNano() + 1)
}

func missedPrefix(app int64) []byte { return keycodec.New("ntf/missed").Int(app) }
func missedKey(app int64, at time.Time, id uint64) []byte {
	return keycodec.Key(missedPrefix(app)).Int(at.UnixNano()).Uint(id)
}

func attemptPrefix(app int64) []byte { return keycodec.New("ntf/attempt").Int(app) }
func attemptKey(app int64, sent time.Time, delivery uint64, n int) []byte {
	return keycodec.Key(attemptPrefix(app)).Int(sent.UnixNano()).Uint(delivery).Uint(uint64(n))
}
