package httpapi

// referenceRoutes registers the routes of listing fees, locations and currencies.
func (s *Server) referenceRoutes() {}
