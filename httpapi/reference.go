package httpapi

// referenceRoutes registers the routes of listing fees, domains and catalog, locations, currencies and site search.
func (s *Server) referenceRoutes() {}
