package marketplacetest

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/faults"
)

// Fault adds a fault rule (docs/faults-and-journal.md) and returns it; it
// fails t when the rule is refused. A rule of a wire fault:
//
//	f := faults.ConnectionResetByPeer
//	srv.Fault(t, faults.NewRule{Route: &route, Fault: &f, Times: &once})
func (s *Server) Fault(t testing.TB, rule faults.NewRule) faults.Rule {
	t.Helper()
	r, err := s.Marketplace.Faults.Create(context.Background(), rule)
	if err != nil {
		t.Fatalf("marketplacetest: add fault rule: %v", err)
	}
	return r
}

// WireFault adds a rule that does the wire fault f to every request of
// method on route (a route template such as /items/{item_id}), and
// returns it; it fails t when the rule is refused.
func (s *Server) WireFault(t testing.TB, method, route string, f faults.WireFault) faults.Rule {
	t.Helper()
	return s.Fault(t, faults.NewRule{Method: &method, Route: &route, Fault: &f})
}

// ClearFaults removes every fault rule; it fails t when the store cannot.
func (s *Server) ClearFaults(t testing.TB) {
	t.Helper()
	if _, err := s.Marketplace.Faults.DeleteAll(context.Background()); err != nil {
		t.Fatalf("marketplacetest: clear fault rules: %v", err)
	}
}
