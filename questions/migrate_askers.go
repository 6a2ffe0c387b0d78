package questions

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// AskerListsMigration writes the asker lists (q/s/a, q/i/a) of a store
// whose questions were written without them: every question lists its
// asker in its status of its seller's list and in its class of its item's.
// It first deletes what an interrupted run left. Frozen: its key names and
// status and class codes are migration 10's copies.
func AskerListsMigration() schema.Migration {
	return schema.Migration{
		Name: "questions: the askers of each status class of a seller's and of an item's questions (q/s/a, q/i/a)",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("q/s/a")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("q/i/a")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("q/q")), Each: listAskerV13},
		),
	}
}

func listAskerV13(tx storage.Tx, _, value []byte) error {
	r, err := decodeQuestionAny(value)
	if err != nil {
		return err
	}
	seller := append(keycodec.New("q/s/a").Int(r.SellerID), statusCodeV10(r.Status)).Int(r.BuyerID)
	if err := tx.Set(seller, nil); err != nil {
		return err
	}
	return tx.Set(append(keycodec.New("q/i/a").Str(r.ItemID), classCodeV10(r)).Int(r.BuyerID), nil)
}
