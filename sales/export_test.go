package sales

import (
	"encoding/json"

	"github.com/marketplace/marketplace/storage"
)

// SetMaxExamined lowers the bound of a search by the records for one test;
// the returned function restores it.
func SetMaxExamined(n int) func() {
	old := maxExamined
	maxExamined = n
	return func() { maxExamined = old }
}

// OrderRecordJSON is the order record of id as JSON, the form records had
// before the binary one.
func OrderRecordJSON(tx storage.Tx, id int64) ([]byte, error) {
	r, err := getOrder(tx, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// OrderKey is the key of order id's record.
func OrderKey(id int64) []byte { return orderKey(id) }
