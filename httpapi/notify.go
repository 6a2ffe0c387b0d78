package httpapi

// notifyRoutes registers the routes of applications and missed feeds.
func (s *Server) notifyRoutes() {}
