package httpapi

// catalogRoutes registers the routes of domains and catalog products.
func (s *Server) catalogRoutes() {}
