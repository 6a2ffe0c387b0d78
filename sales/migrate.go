package sales

import (
	"bytes"
	"encoding/json"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// Migrations of the sales data (see storage/schema). Their code is frozen
// once released. RecordsMigration writes form 1, which is still the
// package's current form: it shares the package's record types and encoder
// rather than copies of them, and TestOrderRecord_Form1LayoutIsPinned
// holds form 1's bytes. A change of the record that changes those bytes
// is a form 2, which brings its own migration and first moves copies of
// form 1's types and encoder here.

// RecordsMigration rewrites the order records still stored as JSON in
// binary form 1 (record.go), those of the state and those kept in the
// snapshots (snap/data), so that restoring a snapshot taken before it
// brings back records this binary reads. Records in form 1 are left as
// they are.
func RecordsMigration() schema.Migration {
	orders := keycodec.New("sal/order")
	snapshots := keycodec.New("snap/data")
	rewrite := func(tx storage.Tx, key, value []byte) error {
		if len(value) == 0 || value[0] != '{' {
			return nil
		}
		var r orderRecord
		if err := json.Unmarshal(value, &r); err != nil {
			return err
		}
		b, err := encodeOrderRecord(r)
		if err != nil {
			return err
		}
		return tx.Set(key, b)
	}
	return schema.Migration{
		Name: "sales: order records from JSON to binary form 1",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(orders), Each: rewrite},
			schema.Phase{
				Range: storage.Prefix(snapshots),
				Each: func(tx storage.Tx, key, value []byte) error {
					// snap/data, the snapshot's id (8 bytes), the state key.
					if rest := key[len(snapshots):]; len(rest) > 8 && bytes.HasPrefix(rest[8:], orders) {
						return rewrite(tx, key, value)
					}
					return nil
				},
			},
		),
	}
}
