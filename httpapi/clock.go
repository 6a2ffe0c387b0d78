package httpapi

// clockRoutes registers the routes of the operator's manual clock.
func (s *Server) clockRoutes() {}
