package notify

import (
	"marketplace/storage"
	"marketplace/storage/schema"
)

// LegacyCounters are the notify keys that held the last number handed out
// before numbers came from sequences: the outbox's. (Applications and
// deliveries are still numbered by ntf/seq/app and ntf/seq/delivery, in
// the transaction of the record, see keys.go.) Frozen, as every migration's
// code (see storage/schema).
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{{Key: storage.NewKey("ntf/seq/outbox"), Sequence: "outbox", First: 1}}
}
