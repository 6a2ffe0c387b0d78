package notify

import (
	"marketplace/storage"
	"marketplace/storage/schema"
)

// LegacyCounters are the notify keys that held the last number handed out
// before numbers came from sequences: the outbox's, the applications' and
// the deliveries'. Frozen, as every migration's code (see storage/schema).
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{
		{Key: storage.NewKey("ntf/seq/outbox"), Sequence: "outbox", First: 1},
		{Key: storage.NewKey("ntf/seq/app"), Sequence: "applications", First: 1000001},
		{Key: storage.NewKey("ntf/seq/delivery"), Sequence: "deliveries", First: 1},
	}
}
