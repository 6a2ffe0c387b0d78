// Package proptest is a kit for property tests of the marketplace's stock
// and response-time rules with pgregory.net/rapid: generators of sellers
// with stores, of items whose stock is split across those stores, of stock
// writes with the version they read, and of questions and answers at
// times on a clock that only moves forward; and reference models of the
// rules, written from the contract's prose (the specification's sections
// "Stock version", "Versioning", "Response time rules" and "Limits", and
// the choices docs/spec-decisions.md records where it is open), never by
// calling the engine's code. A property drives the engine (through
// marketplace.Open or marketplacetest, in Go or over HTTP) and the model
// with the same generated case and compares them.
//
// The generators draw values only: nothing here talks to a server. A
// Shop is a fixtures.Document, loaded with (*marketplace.Marketplace).
// LoadFixtures or PUT /operator/fixtures; the stock and question steps
// refer to its items and stores by index. docs/property-testing.md shows
// whole properties; the package's tests are those properties, run by go
// test.
package proptest
