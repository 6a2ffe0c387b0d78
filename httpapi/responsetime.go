package httpapi

// responseTimeRoutes registers the route of the seller response time.
func (s *Server) responseTimeRoutes() {}
