// Package kv holds what the engine builds on the storage contract and on
// nothing else: records stored as JSON, counts split over shard keys
// (Counter), leases that give one process of several a piece of work
// (Lease), ids drawn once for an Update that may run again (OnceID), and
// copies and deletions of ranges too large for one transaction. It works
// on every backend, because it only calls storage.Store and storage.Tx.
package kv
