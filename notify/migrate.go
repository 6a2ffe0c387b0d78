package notify

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/internal/binrec"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// LegacyCounters are the notify keys that held the last number handed out
// before numbers came from sequences: the outbox's, the applications' and
// the deliveries'. Frozen, as every migration's code (see storage/schema).
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{
		{Key: keycodec.New("ntf/seq/outbox"), Sequence: "outbox", First: 1},
		{Key: keycodec.New("ntf/seq/app"), Sequence: "applications", First: 1000001},
		{Key: keycodec.New("ntf/seq/delivery"), Sequence: "deliveries", First: 1},
	}
}

// OutboxMigration rewrites the outbox events still stored as JSON (the first
// form) in binary form 2. Events in form 2 are left as they are.
func OutboxMigration() schema.Migration {
	return schema.Migration{
		Name: "notify: outbox events from JSON to binary form 2",
		Chunk: schema.Phases(schema.Phase{
			Range: storage.Prefix(keycodec.New("ntf/outbox")),
			Each: func(tx storage.Tx, key, value []byte) error {
				if len(value) > 0 && value[0] == 2 {
					return nil
				}
				var ev eventV1
				if err := json.Unmarshal(value, &ev); err != nil {
					return fmt.Errorf("outbox record %x: %w", key, err)
				}
				return tx.Set(key, encodeEventV2(ev))
			},
		}),
	}
}

// eventV1 is the JSON form of an outbox event.
type eventV1 struct {
	Seq      uint64    `json:"seq"`
	ID       string    `json:"id,omitempty"`
	Topic    string    `json:"topic"`
	UserID   int64     `json:"user_id"`
	Resource string    `json:"resource"`
	Action   string    `json:"action"`
	Received time.Time `json:"received"`
}

// encodeEventV2 is encodeEvent as form 2 was released.
func encodeEventV2(ev eventV1) []byte {
	b := []byte{2}
	b = binary.AppendUvarint(b, ev.Seq)
	b = binrec.AppendString(b, ev.ID)
	b = binrec.AppendString(b, ev.Topic)
	b = binary.AppendVarint(b, ev.UserID)
	b = binrec.AppendString(b, ev.Resource)
	b = binrec.AppendString(b, ev.Action)
	return binrec.AppendTime(b, ev.Received)
}
