package httpapi

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/faults"
)

// stubRoute is a route of the public seller API that integrators call and
// the server does not emulate: a test answers it with a stub.
type stubRoute struct {
	method, path, area string
}

// stubOnly is kept by hand: the public API's common routes that the route
// table has not. docs/coverage.md is written from it and from the table
// (TestCoverageDoc_IsTheRouteTable, -update), and a route of this list
// that the table gains fails that test until it is taken out.
var stubOnly = []stubRoute{
	{"GET", "/v1/payments/{payment_id}", "Payments (Mercado Pago)"},
	{"GET", "/v1/payments/search", "Payments (Mercado Pago)"},
	{"GET", "/reviews/item/{item_id}", "Feedback and reviews"},
	{"GET", "/billing/integration/monthly/periods", "Billing"},
	{"GET", "/billing/integration/periods/key/{key}/documents", "Billing"},
	{"GET", "/visits/items", "Visits"},
	{"GET", "/items/{item_id}/visits/time_window", "Visits"},
	{"GET", "/users/{user_id}/items_visits", "Visits"},
	{"GET", "/shipment_labels", "Shipments"},
	{"GET", "/shipments/{shipment_id}/costs", "Shipments"},
	{"GET", "/seller-promotions/users/{user_id}", "Promotions"},
	{"GET", "/seller-promotions/items/{item_id}", "Promotions"},
	{"POST", "/seller-promotions/items/{item_id}", "Promotions"},
	{"GET", "/items/{item_id}/description", "Items"},
	{"PUT", "/items/{item_id}/description", "Items"},
	{"POST", "/pictures/items/upload", "Items"},
	{"GET", "/orders/{order_id}/discounts", "Orders"},
	{"GET", "/orders/{order_id}/billing_info", "Orders"},
	{"GET", "/users/{user_id}/brands", "Users"},
	{"GET", "/moderations/infractions/{user_id}", "Moderations"},
}

// opsPaths are the server's own routes, not the public API's.
var opsPaths = []string{"/health", "/ready", "/version", "/openapi.json", "/metrics"}

// coverageMarkdown writes docs/coverage.md: every public route of the
// table, emulated, and every route of stubOnly, stub.
func (s *Server) coverageMarkdown() []byte {
	type row struct{ method, path, status, area string }
	var rows []row
	seen := map[string]bool{}
	add := func(method, path string) {
		if seen[method+" "+path] {
			return
		}
		seen[method+" "+path] = true
		rows = append(rows, row{method, path, "emulated", ""})
	}
	for _, rt := range s.routeTable() {
		tmpl := specTemplate(rt.path)
		if rt.bare != nil || rt.who == theOperator || rt.method == "HEAD" || slices.Contains(opsPaths, tmpl) ||
			strings.HasPrefix(tmpl, "/operator/") || strings.HasPrefix(tmpl, "/console") {
			continue
		}
		add(rt.method, tmpl)
		for _, st := range rt.statics {
			add(rt.method, st)
		}
	}
	for _, st := range stubOnly {
		rows = append(rows, row{st.method, st.path, "stub", st.area})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.method, b.method)
	})
	var b bytes.Buffer
	b.WriteString(`# Coverage of the public seller API

Written by ` + "`go test ./httpapi -run TestCoverageDoc -update`" + ` from the route table
(httpapi/routes.go) and the list of routes the server does not emulate
(httpapi/coverage.go); the test fails when this file drifts from them. Do
not edit by hand.

- **emulated**: the server serves the route with its rules and its state
  (docs/stock.md, docs/questions.md, docs/sales.md, ...).
- **stub**: the server does not emulate it; a test gives it an answer with
  ` + "`POST /operator/stubs`" + ` (a WireMock mapping). Without a stub the server
  answers the public API's 404 for an unknown route, or, with ` + "`-upstream`" + `,
  forwards the request to the real API, whose answers ` + "`-record`" + ` keeps as
  stubs (docs/recording.md).

The stub routes are the public API's common seller routes that
integrators call, from Mercado Libre's developer documentation
(developers.mercadolibre.com: payments, claims and returns, feedback and
reviews, billing, visits, post-sale messages, shipments, seller
promotions, items, orders). The operator's routes (` + "`/operator/...`" + `), the
console and the server's own (` + "`/health`, `/ready`, `/version`, `/metrics`, `/openapi.json`" + `)
are not the public API and are left out.

| Method | Route | Status | Area |
|---|---|---|---|
`)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.method, r.path, r.status, r.area)
	}
	return b.Bytes()
}

// emulatedKeys is the template key of every route of the table, by
// method, for telling a stubOnly route that the table has gained.
func (s *Server) emulatedKeys() map[string]bool {
	keys := map[string]bool{}
	for _, rt := range s.routeTable() {
		keys[rt.method+" "+faults.TemplateKey(specTemplate(rt.path))] = true
		for _, st := range rt.statics {
			keys[rt.method+" "+st] = true
		}
	}
	return keys
}
