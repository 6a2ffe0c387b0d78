// Package proptest is a kit for property tests of the marketplace's stock,
// sales and response-time rules with pgregory.net/rapid: generators of
// sellers with stores, of items whose stock is split across those stores,
// of stock writes with the version they read, of purchases (paid and
// payment_required), the seller's status changes and shipment moves, and
// of questions and answers at times on a clock that only moves forward;
// and reference models of the rules, written from the contract's prose
// (the specification's sections "Stock version", "Versioning", "Response
// time rules" and "Limits", its sales companion, and the choices
// docs/spec-decisions.md records where they are open), never by calling
// the engine's code. A property drives the engine (through
// marketplace.Open or marketplacetest, in Go or over HTTP) and the model
// with the same generated case and compares them.
//
// The generators draw values only: nothing here talks to a server. A
// Shop is a fixtures.Document, loaded with (*marketplace.Marketplace).
// LoadFixtures or PUT /operator/fixtures, and Shop.IDs turns its names
// into the ids the load answered; the steps refer to its items, stores
// and buyers by index. docs/property-testing.md shows whole properties;
// the package's tests are those properties, run by go test.
package proptest
