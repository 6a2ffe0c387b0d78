package notes

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of notes. Every key starts with "nte".
//
//	nte/n/<on>/<order or pack id>/<note_id>  -> Note (JSON)
//	nte/c/<on>/<order or pack id>            -> number of notes (kv.Counter, one shard: one seller writes them)
//
// <on> is "order" or "pack". Note ids are 24 hexadecimal digits in the
// public API's style: the creation time in Unix seconds (8), then a number
// drawn from the store's "notes" sequence (16), so that a sale's notes
// list in the order they were written.
const noteSequence = "notes"

func listPrefix(on On, id int64) []byte { return keycodec.New("nte/n").Str(string(on)).Int(id) }

func noteKey(on On, id int64, noteID string) []byte {
	return keycodec.Key(listPrefix(on, id)).Str(noteID)
}

func countKey(on On, id int64) []byte { return keycodec.New("nte/c").Str(string(on)).Int(id) }
