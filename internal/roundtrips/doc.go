// Package roundtrips holds a test and nothing else: it counts the round
// trips to PostgreSQL that each route of the API makes, at the wire,
// through internal/pgproxy, and keeps them under an upper bound per route.
// With -roundtrips.write it writes the table into docs/roundtrips.md.
//
//	go test ./internal/roundtrips/
//	go test ./internal/roundtrips/ -roundtrips.write
package roundtrips
