package httpapi

// stockRoutes registers the routes of items, user products and stock.
func (s *Server) stockRoutes() {}
