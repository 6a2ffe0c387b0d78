package questions

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// TallyShardsMigration splits the item's tallies (q/t/i, 8 shards) and the
// asker's (q/t/sf, q/t/if, one key each) over 64 shards by question id, as
// the seller's are: the tallies are deleted, then every question is
// counted again in its shard of each. The seller's tallies (64 shards
// already) and the asker lists stay as they are. Frozen: its key names,
// status and class codes and tally form are migration 10's copies.
func TallyShardsMigration() schema.Migration {
	var phases []schema.Phase
	for _, ns := range []string{"q/t/i", "q/t/sf", "q/t/if"} {
		phases = append(phases, schema.Phase{Range: storage.Prefix(keycodec.New(ns)), Each: schema.DeleteKey})
	}
	phases = append(phases, schema.Phase{
		Range: storage.Prefix(keycodec.New("q/q")),
		Each: func(tx storage.Tx, _, value []byte) error {
			r, err := decodeQuestionAny(value)
			if err != nil {
				return err
			}
			shard := byte(uint64(r.ID) % 64)
			st, cls := statusCodeV10(r.Status), classCodeV10(r)
			for _, t := range []struct {
				key   []byte
				class byte
			}{
				{append(keycodec.New("q/t/i").Str(r.ItemID), shard), cls},
				{append(keycodec.New("q/t/sf").Int(r.SellerID).Int(r.BuyerID), shard), st},
				{append(keycodec.New("q/t/if").Str(r.ItemID).Int(r.BuyerID), shard), cls},
			} {
				if err := addTallyV10(tx, t.key, t.class, r.ID); err != nil {
					return err
				}
			}
			return nil
		},
	})
	return schema.Migration{
		Name:  "questions: the item's and the asker's tallies over 64 shards (q/t/i, q/t/sf, q/t/if)",
		Chunk: schema.Phases(phases...),
	}
}
